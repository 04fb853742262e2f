/// Who answers a connection's calls, so that replies keep the calls' order: a lone call may be
/// served at once while no other is in progress; calls that come while it is unanswered wait, and
/// go (with the connection) to a serving task only once it is answered. A pure state machine:
/// `ControlConnection` performs what it returns.
struct CallSequencer: Sendable, Equatable {
    enum Serving: Sendable, Equatable {
        /// No call is in progress: the next lone call may be served at once.
        case idle
        /// A call served at once awaits its reply; `callsWaiting` if others came meanwhile.
        case atOnce(callsWaiting: Bool)
        /// A task serves the connection's queued calls, for the rest of its life.
        case handedOver
    }

    private(set) var serving = Serving.idle

    /// A lone call arrived: true if it may be served at once (it then counts as in progress).
    mutating func offer() -> Bool {
        guard serving == .idle else { return false }
        serving = .atOnce(callsWaiting: false)
        return true
    }

    /// The call offered was not served at once after all.
    mutating func declined() {
        if serving == .atOnce(callsWaiting: false) { serving = .idle }
    }

    /// Calls were queued for a serving task: true if the connection must be handed over now.
    mutating func queued() -> Bool {
        switch serving {
        case .idle:
            serving = .handedOver
            return true
        case .atOnce:
            serving = .atOnce(callsWaiting: true)
            return false
        case .handedOver:
            return false
        }
    }

    /// A final reply is being sent: true if it answers the call served at once (which is never
    /// oneway); `handOver` if the calls that waited behind it must now go to a serving task.
    mutating func answered() -> (atOnce: Bool, handOver: Bool) {
        guard case .atOnce(let callsWaiting) = serving else { return (false, false) }
        serving = callsWaiting ? .handedOver : .idle
        return (true, callsWaiting)
    }
}
