import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs local-time conversions (`mktime`, `localtime_r`) in a chosen time zone. libc reads the zone
/// from the process-wide `TZ`, so every such conversion in taskd goes through this one lock.
///
/// With `TZ` unset, glibc stats `/etc/localtime` on every `mktime` (a next-elapse search makes
/// dozens), so the first use pins the local zone as `TZ=:/etc/localtime`: glibc then re-reads it
/// only when `TZ` changes. `localZoneChanged()` makes it read the file again (commands never see
/// this `TZ`: their environment is built from scratch).
public enum TimeZoneContext {
    private static let lock = Mutex(false)

    /// Runs `body` with `TZ` set to `zone` (nil: the process's own zone), restoring it after.
    public static func with<T>(_ zone: String?, _ body: () -> T) -> T {
        withTZ(zone.map { ":" + $0 }, body)
    }

    /// Runs `body` with `TZ` set to `rule` as it is (a POSIX rule such as `IST-1GMT-0,M10.5.0/1,M3.5.0/1`,
    /// or a zone name), restoring it after.
    static func with<T>(rule: String, _ body: () -> T) -> T {
        withTZ(rule, body)
    }

    private static func withTZ<T>(_ value: String?, _ body: () -> T) -> T {
        lock.withLock { pinned in
            if !pinned {
                if getenv("TZ") == nil { setenv("TZ", ":/etc/localtime", 1) }
                pinned = true
            }
            guard let value else {
                tzset()
                return body()
            }
            let saved = getenv("TZ").map { String(cString: $0) }
            setenv("TZ", value, 1)
            tzset()
            defer {
                if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
                tzset()
            }
            return body()
        }
    }

    /// `/etc/localtime` was replaced (`timedatectl set-timezone`): the next conversion reads it again.
    public static func localZoneChanged() {
        lock.withLock { _ in
            guard let current = getenv("TZ").map({ String(cString: $0) }) else { return }
            setenv("TZ", "UTC0", 1)
            tzset()
            setenv("TZ", current, 1)
            tzset()
        }
    }

    /// True for a name of a zone file under /usr/share/zoneinfo (as systemd's `timezone_is_valid`).
    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains(".."), name.utf8.count < 256,
            name.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/-_+".unicodeScalars.contains($0))
            })
        else { return false }
        let fd = open("/usr/share/zoneinfo/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(fd, &magic, 4) == 4 && magic == Array("TZif".utf8)
    }
}
