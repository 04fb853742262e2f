import TaskdConfig

/// libFuzzer entry (scripts/fuzz): bytes as a task file's text and as taskd.conf's, through the
/// unit-file parser and the key tables; every diagnostic must name a line of the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let diagnostics =
        ConfigLoader.parseTaskText(text, path: "fuzz.task").1 + ConfigLoader.parseDaemonText(text, path: "fuzz.conf").1
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    for d in diagnostics where d.location.line < 1 || d.location.line > lines {
        fatalError("diagnostic outside the input (\(lines) lines): \(d)")
    }
    return 0
}
