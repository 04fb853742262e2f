import TaskScheduling

/// A Swift handler and its default definition, as registered with `backgroundTask(_:…)`.
package struct TaskRegistration: Sendable {
    package var definition: TaskDefinition
    package var handler: TaskHandler

    package init(definition: TaskDefinition, handler: TaskHandler) {
        self.definition = definition
        self.handler = handler
    }
}
