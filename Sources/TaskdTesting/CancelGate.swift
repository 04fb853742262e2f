import Synchronization

/// Resumes one waiter once opened (at once if it was opened first).
final class CancelGate: Sendable {
    private let state = Mutex<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func wait(_ waiter: CheckedContinuation<Void, Never>) {
        let now = state.withLock { s -> Bool in
            if s.open { return true }
            s.waiter = waiter
            return false
        }
        if now { waiter.resume() }
    }

    func open() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.open = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }
}
