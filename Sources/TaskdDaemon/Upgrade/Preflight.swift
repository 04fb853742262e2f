import TaskRuntime

/// Runs the new binary of an upgrade with `--version` or `--check-config` before taskd execs it:
/// its exit status and what it printed. Blocking: call it on a thread of its own.
enum Preflight {
    /// Nil status: it could not be started, or was killed after `timeoutMS` (the output says which).
    static func run(_ argv: [String], timeoutMS: Int32 = 30_000) -> (status: Int32?, output: String) {
        let outcome = ToolProcess.run(argv, timeoutMS: timeoutMS, mergeErrors: true)
        guard let problem = outcome.problem else { return (outcome.status, outcome.outputText) }
        return (nil, outcome.output.isEmpty ? problem : problem + "\n" + outcome.outputText)
    }
}
