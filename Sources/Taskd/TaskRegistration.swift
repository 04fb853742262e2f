import TaskScheduling

/// A Swift handler and its default definition, as registered with `backgroundTask(_:…)`.
struct TaskRegistration: Sendable {
    var definition: TaskDefinition
    var handler: TaskHandler
}
