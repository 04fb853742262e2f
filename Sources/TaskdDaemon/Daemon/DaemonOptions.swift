import TaskdProtocol

/// The daemon's command line: `[--config DIR] [--state-dir DIR] [--socket PATH] [--check-config] [--help]`.
public struct DaemonOptions: Hashable, Sendable {
    public var configDirectory: String?
    public var stateDirectory: String?
    public var socketPath: String?
    public var checkConfig = false
    public var help = false
    public var version = false

    public init() {}

    /// Parses `arguments` (without the program name); the error is a one-line message for stderr.
    public init(arguments: [String]) throws(DaemonOptionsError) {
        var it = arguments.makeIterator()
        while let arg = it.next() {
            var name = arg
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            func value() throws(DaemonOptionsError) -> String {
                if let inline { return inline }
                guard let v = it.next() else { throw DaemonOptionsError(message: "\(name) needs a value") }
                return v
            }
            switch name {
            case "--config", "-c": configDirectory = try value()
            case "--state-dir": stateDirectory = try value()
            case "--socket": socketPath = try value()
            case "--check-config": checkConfig = true
            case "--help", "-h": help = true
            case "--version": version = true
            default: throw DaemonOptionsError(message: "unknown option '\(arg)' (see --help)")
            }
        }
    }

    public static func usage(program: String) -> String {
        """
        Usage: \(program) [OPTIONS]

        Runs background tasks from timers and wake requests, with a runtime budget per run,
        and reports every event to the journal (to standard error when there is no journal).

        Options:
          --config DIR      configuration directory: taskd.conf and tasks.d/*.task
                            (default: \(DefaultPaths.configDirectory(of: program)))
          --state-dir DIR   state directory (default: \(DefaultPaths.stateDirectory(of: program)))
          --socket PATH     control socket, unless socket-activated
                            (default: $TASKD_SOCKET or \(DefaultPaths.socketPath(of: program)))
          --check-config    validate the configuration, print every problem as file:line, and exit
                            (status 1 if there is any error)
          --version         print the version and exit
          -h, --help        show this help

        Signals: SIGTERM/SIGINT cancel every run, wait at most its CancelGraceSec, and exit 0.
        Drive it with taskctl (taskctl --help); read what happened with journalctl TASK=NAME.
        """
    }
}

/// A command line taskd does not understand.
public struct DaemonOptionsError: Error, Hashable, Sendable {
    public var message: String
}
