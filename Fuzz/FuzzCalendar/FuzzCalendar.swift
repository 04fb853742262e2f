import TaskScheduling

/// libFuzzer entry (scripts/fuzz): bytes as an `OnCalendar=` expression. A parsed one's canonical
/// text must parse to the same canonical text, and its next elapse must be found (or not) without
/// a crash or hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCalendar(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let spec = try? CalendarSpec(parsing: text) else { return 0 }
    let canonical = spec.description
    guard let again = try? CalendarSpec(parsing: canonical), again.description == canonical else {
        fatalError("'\(text)' normalizes to '\(canonical)', which does not parse to itself")
    }
    if let next = spec.nextElapse(after: 1_767_225_600_000_000), next <= 1_767_225_600_000_000 {
        fatalError("'\(text)': next elapse \(next) is not after the start")
    }
    return 0
}
