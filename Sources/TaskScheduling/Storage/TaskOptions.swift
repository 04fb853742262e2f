/// A task definition's settings beyond its name, calendar and handler: the same in most
/// tasks of a configuration, so that `SharedValues` stores them once for all of them.
struct TaskOptions: Hashable, Sendable {
    var description: String
    var budget: TimeSpan
    var cancelGrace: TimeSpan
    var onStartup: [TimeSpan]
    var onUnitActive: [TimeSpan]
    var onUnitInactive: [TimeSpan] = []
    var randomizedDelay: TimeSpan = .zero
    var fixedRandomDelay = false
    var persistent = false
    var catchUp = CatchUpPolicy.latest
    var catchUpWindow = TimeSpan.zero
    var sleep = SleepPolicy.cancel
    var overlap = OverlapPolicy.coalesce
    var queueLimit = 8
    var retry = RetryPolicy()
    var historySize = 20
    var progressTimeout = TimeSpan.zero
    var conditions: Set<TaskCondition> = []
    var maxDefer = TimeSpan.zero
    var conditionLost = ConditionLostPolicy.cancel
    var wakeAccess: AccessList?
    var expectSuccessWithin = TimeSpan.zero
    var alertAfterFailures = 0
    var pauseAfterFailures = 0
    var onSuccess: [String] = []
    var onFailure: [String] = []
    var onOverdue: [String] = []
}
