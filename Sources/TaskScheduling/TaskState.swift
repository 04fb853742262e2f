/// The scheduler's bookkeeping for one task: its definition, current run, timers and last result.
public struct TaskState: Hashable, Sendable {
    public var definition: TaskDefinition
    public var currentRunID: String?
    public var lastRun: Run?
    /// Monotonic instants of `OnStartupSec=` elapses that have not fired yet.
    public var pendingStartup: [UInt64]
    /// Monotonic instant of the last run's start and of the last timer trigger (OnUnitActiveSec= base).
    public var lastActivation: UInt64?
    public var lastTrigger: ClockReading?

    init(definition: TaskDefinition, daemonStart: UInt64) {
        self.definition = definition
        self.pendingStartup = definition.onStartup.map { daemonStart &+ $0.microseconds }.sorted()
    }

    /// The next monotonic instant a timer of this task elapses, or nil if none will.
    public var nextElapse: UInt64? {
        var next = pendingStartup.first
        if let base = lastActivation, let span = definition.onUnitActive.min() {
            let due = base &+ span.microseconds
            next = min(next ?? due, due)
        }
        return next
    }
}
