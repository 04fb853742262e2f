import TaskScheduling

/// DST changes of 2025 and 2026 (epoch seconds) in zones whose rules have broken next-elapse searches:
/// negative DST (Dublin, Casablanca), a 30-minute change (Lord Howe), changes at midnight (Santiago).
let dstChanges: [(zone: String, changes: [UInt64])] = [
    ("Europe/Dublin", [1_743_296_400, 1_761_440_400, 1_774_746_000, 1_792_890_000]),
    ("Africa/Casablanca", [1_740_276_000, 1_743_904_800, 1_771_120_800, 1_774_144_800]),
    ("Australia/Lord_Howe", [1_743_865_200, 1_759_591_800, 1_775_314_800, 1_791_041_400]),
    ("America/Santiago", [1_743_908_400, 1_757_217_600, 1_775_358_000, 1_788_667_200]),
    ("America/New_York", [1_741_503_600, 1_762_063_200, 1_772_953_200, 1_793_512_800]),
]

/// libFuzzer entry (scripts/fuzz): bytes as an `OnCalendar=` expression. A parsed one's canonical
/// text must parse to the same canonical text, and its next elapses must be found (or not) without a
/// crash or hang, each after its base and each after the one before: in the local zone, and in the
/// zones above from bases within two hours of one of their DST changes, chosen by the input's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCalendar(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    guard let spec = try? CalendarSpec(parsing: text) else { return 0 }
    let canonical = spec.description
    guard let again = try? CalendarSpec(parsing: canonical), again.description == canonical else {
        fatalError("'\(text)' normalizes to '\(canonical)', which does not parse to itself")
    }
    checkIncreasing(spec, text, from: 1_767_225_600_000_000, count: 1)
    guard !spec.utc else { return 0 }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a of the input picks the change and the offset from it
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    for (zone, changes) in dstChanges {
        var zoned = spec
        zoned.timeZone = zone
        hash = hash &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let change = changes[Int(hash >> 62)]
        let offset = Int64((hash >> 20) % 14_400_000_001) - 7_200_000_000  // ±2 h, in µs
        checkIncreasing(zoned, text + " in " + zone, from: UInt64(Int64(change * 1_000_000) + offset), count: 4)
    }
    return 0
}

/// Up to `count` next elapses of `spec` after `base`: each must come after the one before.
func checkIncreasing(_ spec: CalendarSpec, _ what: String, from base: UInt64, count: Int) {
    var t = base
    for _ in 0..<count {
        guard let next = spec.nextElapse(after: t) else { return }
        if next <= t { fatalError("'\(what)': next elapse \(next) is not after \(t) (from \(base))") }
        t = next
    }
}
