import TaskScheduling

/// The conditions the tasks require, and those of them that did not hold when last looked at.
struct ConditionsInUse: Sendable {
    /// Every condition some task requires.
    private(set) var required: Set<TaskCondition>
    /// Whether some task requires free space or pressure (read every few seconds while a run needs it).
    private(set) var sampled: Bool
    /// The required conditions that did not hold when last looked at.
    var unheld: Set<TaskCondition> = []

    init(_ tasks: [TaskDefinition]) {
        required = tasks.reduce(into: Set<TaskCondition>()) { $0.formUnion($1.conditions) }
        sampled = required.contains { $0.isSampled }
    }

    /// The tasks changed (a reload): what they require now; `unheld` is kept until looked at again.
    mutating func reconfigure(_ tasks: [TaskDefinition]) {
        let unheld = self.unheld
        self = ConditionsInUse(tasks)
        self.unheld = unheld
    }

    /// The journal's fields: the conditions that hold and those that do not.
    var fields: [(key: String, value: String)] {
        [
            ("TASKD_CONDITIONS", required.subtracting(unheld).sorted().map(\.description).joined(separator: " ")),
            ("TASKD_CONDITIONS_UNMET", unheld.sorted().map(\.description).joined(separator: " ")),
        ]
    }

    /// `; not met: …` for the journal, empty when every condition holds.
    var unmetText: String {
        unheld.isEmpty ? "" : "; not met: " + unheld.sorted().map(\.waitingText).joined(separator: ", ")
    }
}
