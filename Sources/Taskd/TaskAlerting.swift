import TaskScheduling

/// How a task says it is late or failing, and what it wakes then: the same as a task file's
/// `ExpectSuccessWithinSec=`, `AlertAfterFailures=`, `PauseAfterFailures=`, `OnSuccess=`,
/// `OnFailure=` and `OnOverdue=` (see docs/operations.md).
///
/// ```swift
/// .backgroundTask(.processing("BACKUP"), alerts: [.expectSuccess(within: .seconds(86_400)), .onFailure(wake: "page")]) { … }
/// ```
public struct TaskAlerting: Sendable {
    let apply: @Sendable (inout TaskDefinition) -> Void

    /// No completed run for `span` raises one overdue journal entry (and a recovered one later).
    public static func expectSuccess(within span: Duration) -> TaskAlerting {
        TaskAlerting { $0.expectSuccessWithin = TimeSpan(span) }
    }

    /// `count` runs in a row failing for good raise one failing journal entry.
    public static func alertAfterFailures(_ count: Int) -> TaskAlerting {
        TaskAlerting { $0.alertAfterFailures = max(0, count) }
    }

    /// `count` runs in a row failing for good pause the task until `taskctl resume`.
    public static func pauseAfterFailures(_ count: Int) -> TaskAlerting {
        TaskAlerting { $0.pauseAfterFailures = max(0, count) }
    }

    /// Wakes the tasks `targets` name after a completed run, its id and outcome in their payload.
    public static func onSuccess(wake targets: String...) -> TaskAlerting {
        TaskAlerting { $0.onSuccess += targets }
    }

    /// Wakes the tasks `targets` name after a run failed for good (no retry left).
    public static func onFailure(wake targets: String...) -> TaskAlerting {
        TaskAlerting { $0.onFailure += targets }
    }

    /// Wakes the tasks `targets` name when the task becomes overdue.
    public static func onOverdue(wake targets: String...) -> TaskAlerting {
        TaskAlerting { $0.onOverdue += targets }
    }
}
