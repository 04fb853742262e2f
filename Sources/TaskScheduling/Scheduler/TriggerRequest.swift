/// One trigger for one task, as the scheduler handles it: what fired, and what it carries.
struct TriggerRequest: Hashable, Sendable {
    var trigger: Trigger
    var attempt = 1
    var wakeID: String? = nil
    var payload: String? = nil
    /// The acknowledged wakes (durable records) this trigger answers for.
    var records: [String] = []
    /// The failed run a retry retries.
    var previousAttempt: String? = nil
    /// When the trigger was due (CLOCK_REALTIME µs); nil: now.
    var scheduled: UInt64? = nil
    /// Work of its own (a fleet slot taken over): it never joins a run in progress, whatever
    /// `Overlap=` says; it waits behind it.
    var distinct = false
    /// Runs the same trigger started that its run waits to end before it starts (`After=`).
    var after: [String] = []
}
