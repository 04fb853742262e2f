import TaskRuntime

/// A command run in progress, as an upgrade hands it over: the run, its process, and the signal
/// that cancels it (kept from the old configuration, should the new one have dropped its task).
struct HandedRun: Codable, Sendable, Hashable {
    var run: RunSnapshot
    var command: CommandHandoff
    var killSignal: Int32
}
