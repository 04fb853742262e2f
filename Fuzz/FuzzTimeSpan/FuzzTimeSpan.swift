import TaskScheduling

/// libFuzzer entry (scripts/fuzz): bytes as a time span (`RuntimeBudgetSec=`). A parsed span's
/// canonical text must parse back to the same number of microseconds, below 584542 years: from there
/// on its years alone pass the limit (2^64 - 1 µs), and systemd cannot read that text back either.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimeSpan(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let span = try? TimeSpan(parsing: text) else { return 0 }
    if !span.isInfinite && span.microseconds >= 584_542 * TimeSpan.usecPerYear { return 0 }
    guard let again = try? TimeSpan(parsing: span.description), again == span else {
        fatalError("'\(text)' is \(span.microseconds) µs, written '\(span.description)', which does not parse back")
    }
    return 0
}
