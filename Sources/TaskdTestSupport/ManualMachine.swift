import Synchronization
import TaskScheduling
import TaskdMachine

/// A machine a test sets: which conditions do not hold, and the inhibitor locks the daemon holds.
/// Its events reach the daemon when the test sends them (`send(_:)`).
package final class ManualMachine: MachinePort {
    private struct State {
        var unheld: Set<TaskCondition> = []
        var watched: Set<TaskCondition> = []
        var held: Set<SleepInhibitor> = []
        var sampling = false
        var onEvent: @Sendable (MachineEvent) -> Void = { _ in }
    }

    private let state = Mutex(State())

    package init() {}

    /// Where its events go (the daemon connects itself when it starts); returns the machine.
    package func connect(_ onEvent: @escaping @Sendable (MachineEvent) -> Void) -> ManualMachine {
        state.withLock { $0.onEvent = onEvent }
        return self
    }

    /// Makes `conditions` the ones that do not hold (the daemon learns of it at the next `send(.conditions)`).
    package func set(unheld conditions: Set<TaskCondition>) { state.withLock { $0.unheld = conditions } }

    /// Tells the daemon of `event`, as the real machine does from the event loop.
    package func send(_ event: MachineEvent) { state.withLock { $0.onEvent }(event) }

    /// The inhibitor locks the daemon holds now.
    package var held: Set<SleepInhibitor> { state.withLock { $0.held } }

    package func watch(for conditions: Set<TaskCondition>) { state.withLock { $0.watched.formUnion(conditions) } }

    package func unheld(_ conditions: Set<TaskCondition>) -> Set<TaskCondition> {
        state.withLock { $0.unheld.intersection(conditions) }
    }

    package var summary: String { "set by the test" }
    package var sourceNote: String { "" }
    package var isSampling: Bool { state.withLock { $0.sampling } }
    package func sample(_ on: Bool) { state.withLock { $0.sampling = on } }

    package func inhibit(_ lock: SleepInhibitor, hold: Bool) {
        state.withLock { s in
            if hold { s.held.insert(lock) } else { s.held.remove(lock) }
        }
    }

    package var inhibitDelayMax: UInt64 { 5_000_000 }
}
