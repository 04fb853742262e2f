import Foundation

/// Runs blocking work (a child process, a read of its pipe to the end) on a thread of its own, so
/// that it holds no thread of the cooperative pool, which has two here: the other suites, which
/// run meanwhile, need them.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result(catching: body)) }
    }
}
