import TaskScheduling

/// libFuzzer entry (scripts/fuzz): bytes as a time span (`RuntimeBudgetSec=`). A parsed span's
/// canonical text must parse back to the same number of microseconds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimeSpan(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let span = try? TimeSpan(parsing: text) else { return 0 }
    guard let again = try? TimeSpan(parsing: span.description), again == span else {
        fatalError("'\(text)' is \(span.microseconds) µs, written '\(span.description)', which does not parse back")
    }
    return 0
}
