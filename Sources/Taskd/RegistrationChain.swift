import TaskScheduling
import TaskdDaemon

/// The registrations a `TaskDaemon` builder made, newest first and shared with the builders it came
/// from: registering adds one link (constant time, nothing copied), and a task registered again
/// replaces its earlier registration only when the chain is read (`latest`).
final class RegistrationChain: Sendable {
    let registration: TaskRegistration
    /// What is wrong with this registration (a calendar that does not parse), `TASK: problem`.
    let problems: [String]
    let previous: RegistrationChain?

    init(_ registration: TaskRegistration, problems: [String], previous: RegistrationChain?) {
        self.registration = registration
        self.problems = problems
        self.previous = previous
    }

    /// Each task's newest link, in the order of those registrations.
    var latest: [RegistrationChain] {
        var seen: Set<TaskKey> = []
        var newestFirst: [RegistrationChain] = []
        var link: RegistrationChain? = self
        while let current = link {
            if seen.insert(current.registration.definition.key).inserted { newestFirst.append(current) }
            link = current.previous
        }
        return newestFirst.reversed()
    }
}
