/// Well-known task kinds and their default runtime budgets (docs/configuration.md, `RuntimeBudgetSec=`).
public enum TaskKind {
    public static let appRefresh = "appRefresh"
    public static let processing = "processing"
    /// The kind of the tasks `taskctl submit` adds, which no task file may give.
    public static let submitted = "submitted"

    /// `appRefresh` 30 s (as on iOS), `processing` 10 min, any other kind 60 s.
    public static func defaultBudget(for kind: String) -> TimeSpan {
        switch kind {
        case appRefresh: return .seconds(30)
        case processing: return .seconds(600)
        default: return .seconds(60)
        }
    }

    /// How long before the budget's end cancellation is signalled, unless a task says otherwise.
    public static let defaultCancelGrace = TimeSpan.seconds(5)
}
