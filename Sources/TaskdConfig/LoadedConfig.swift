import TaskScheduling

/// The result of loading a configuration directory: valid tasks, daemon settings, and every diagnostic.
public struct LoadedConfig: Sendable {
    public var daemon: DaemonSettings
    /// Tasks that loaded without error, sorted by name; a task with any error is left out.
    public var tasks: [TaskDefinition]
    public var diagnostics: [ConfigDiagnostic]

    package init(daemon: DaemonSettings, tasks: [TaskDefinition], diagnostics: [ConfigDiagnostic] = []) {
        self.daemon = daemon
        self.tasks = tasks
        self.diagnostics = diagnostics
    }

    /// True when no diagnostic is an error.
    public var isValid: Bool { !diagnostics.contains { $0.severity == .error } }
}
