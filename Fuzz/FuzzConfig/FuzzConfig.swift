import TaskdConfig

/// libFuzzer entry (scripts/fuzz): bytes as a task file's text, through the unit-file parser and
/// the key table; every diagnostic must name a line of the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let (_, diagnostics) = ConfigLoader.parseTaskText(text, path: "fuzz.task")
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    for d in diagnostics where d.location.line < 1 || d.location.line > lines {
        fatalError("diagnostic outside the input (\(lines) lines): \(d)")
    }
    return 0
}
