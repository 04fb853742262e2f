/// One line of `taskctl why`: a reason a task runs, waits or does not run now, as data.
public struct WhyReason: Hashable, Sendable {
    /// What kind of reason; the daemon names the journal MESSAGE_ID behind each.
    public enum Code: String, Hashable, Sendable {
        case stopping, sleeping, draining, paused, running
        case waitingForConditions = "waiting-for-conditions"
        case waitingForSlot = "waiting-for-slot"
        /// Its run waits for a place in its task's concurrency group (`ConcurrencyGroup=`).
        case waitingForGroup = "waiting-for-group"
        /// Its run waits for runs of the same trigger to end (`After=`).
        case waitingForOrder = "waiting-for-order"
        case queuedBehind = "queued-behind"
        case joinsRun = "joins-run"
        case replacesRun = "replaces-run"
        case skipsTrigger = "skips-trigger"
        case runsBeside = "runs-beside"
        case retryPending = "retry-pending"
        case nextTimer = "next-timer"
        case wakeOnly = "wake-only"
        case overdue, failing
        /// Failures in a row, below `AlertAfterFailures=` (or with no such key): no alert was raised.
        case failures
        case lastRefusal = "last-refusal"
        case lastResult = "last-result"
        /// A fleet task (`Fleet=once`, `max:N`): how the fleet shares it, and this host's name.
        case fleet
        /// Its run waits for etcd to answer its claim, or for a place among the task's N.
        case claimPending = "claim-pending"
        /// etcd cannot be reached: what `FleetUnavailable=` makes of the task's runs, or of its run.
        case fleetUnavailable = "fleet-unavailable"
    }

    public var code: Code
    public var text: String
    /// The run it is about, and the time it names (CLOCK_REALTIME µs), if any.
    public var runID: String?
    public var at: UInt64?

    public init(_ code: Code, _ text: String, runID: String? = nil, at: UInt64? = nil) {
        self.code = code
        self.text = text
        self.runID = runID
        self.at = at
    }
}
