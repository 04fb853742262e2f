/// A line a terminal shows in place (`\r` and erase to the end of the line), under the lines
/// printed for good: `wake --wait`'s progress of the runs in progress.
final class LiveLine {
    private let enabled: Bool
    private var showing = false

    init(enabled: Bool) { self.enabled = enabled }

    /// Replaces the live line with `text` (nothing when empty or not on a terminal).
    func show(_ text: String) {
        guard enabled else { return }
        clear()
        guard !text.isEmpty else { return }
        Terminal.raw(text)
        showing = true
    }

    /// Prints `line` for good, above the live line, which is cleared (nil: only clears it).
    func print(_ line: String?) {
        clear()
        if let line { Terminal.out(line) }
    }

    private func clear() {
        guard showing else { return }
        Terminal.raw("\r\u{1b}[K")
        showing = false
    }
}
