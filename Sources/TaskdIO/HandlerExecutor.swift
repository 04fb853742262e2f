/// The task executor of user code (Swift handlers): a job enqueued on the event loop's thread runs
/// there as soon as the fd handler or job that enqueued it returns (no other CPU to wake), any
/// other on the global concurrent executor. The loop hands itself to a standby thread if such jobs hold its thread
/// longer than `EventLoop.stallLimit`, so blocking user code stalls taskd by at most that.
public final class HandlerExecutor: TaskExecutor, Sendable {
    public static let shared = HandlerExecutor()

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        EventLoop.shared.enqueueHandlerJob(job)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }
}
