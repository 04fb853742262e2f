import TaskScheduling
import TaskdProtocol

/// `taskctl submit`: adds a transient task that runs a command once (now, `--at`, `--in`) or on
/// a calendar (`--calendar`), as the caller; prints its name and when it runs.
enum SubmitCommand {
    static let usage = """
        Usage: taskctl submit [--at TIME|--in SPAN|--calendar EXPR] [--budget SPAN] [--name ID] [-p KEY=VALUE]...
               [--json] [--] COMMAND [ARG]...

        Adds a task of kind submitted that runs COMMAND (no shell) as you, with the budget, journal,
        cgroup and access rules of any task. It runs once (now, at TIME, or SPAN from now) and is then
        removed, or on EXPR for as long as the calendar has elapses. It is kept across restarts (a time
        passed while taskd was down runs when it starts), listed, and withdrawn by taskctl cancel.
        Who may submit: root, taskd's own user, and SubmitUsers=/SubmitGroups= of taskd.conf.
          --at TIME       once at TIME: 'YYYY-MM-DD HH:MM[:SS] [UTC|ZONE]', @EPOCH, or HH:MM[:SS] (next one)
          --in SPAN       once SPAN from now (30s, 5min, 2h)
          --calendar EXPR on every elapse of EXPR (an OnCalendar= expression: taskctl calendar EXPR)
          --budget SPAN   RuntimeBudgetSec= (default: 60 s, the kind's)
          --name ID       the task's name (default: run- and 8 hex digits)
          -p KEY=VALUE    any other task-file setting (MaxAttempts=3, Environment=A=1, CPUQuota=50%)
          --              what follows is the command, even words that start with '-'

          --json          the task as taskctl status --json prints it
        """

    static func run(_ args: CommandLineArguments, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let parameters: SchedulerInterface.Submit.Parameters
        do {
            parameters = try self.parameters(args, now: Terminal.nowUSec())
        } catch {
            throw Failure(code: .usage, message: error.message)
        }
        let task = try Commands.call(socket, SchedulerInterface.Submit.self, parameters).task
        if json {
            Terminal.out(task.json.description)
            return .success
        }
        let when =
            task.nextElapseUSec.map { "next at \(Terminal.time($0))" } ?? "no elapse to come"
        Terminal.out(
            "\(task.kind):\(task.name): \(parameters.calendar == nil ? "runs once" : "runs on its calendar"), \(when)")
        Terminal.out(
            "Its runs: taskctl status \(task.kind):\(task.name); withdraw it: taskctl cancel \(task.kind):\(task.name)")
        return .success
    }

    /// The request a command line asks for; `now` is CLOCK_REALTIME µs.
    static func parameters(_ args: CommandLineArguments, now: UInt64) throws(UsageError)
        -> SchedulerInterface.Submit.Parameters
    {
        try args.check(allowed: ["--at", "--in", "--calendar", "--budget", "--name", "-p", "--property"])
        guard !args.positional.isEmpty else {
            throw UsageError("submit needs a command: taskctl submit [options] -- COMMAND")
        }
        let times = ["--at", "--in", "--calendar"].filter { args.options[$0] != nil }
        guard times.count <= 1 else { throw UsageError("give only one of \(times.joined(separator: ", "))") }
        var parameters = SchedulerInterface.Submit.Parameters(command: args.positional, name: args.options["--name"])
        if let text = args.options["--at"] { parameters.atUSec = try at(text, now: now) }
        if let text = args.options["--in"] {
            guard let span = try? TimeSpan(parsing: text), !span.isInfinite else {
                throw UsageError("--in needs a time span, such as 30s or 2h")
            }
            parameters.inUSec = span.microseconds
        }
        if let text = args.options["--calendar"] {
            do throws(CalendarError) {
                _ = try CalendarSpec(parsing: text)
            } catch {
                throw UsageError("--calendar '\(text)': \(error.description)")
            }
            parameters.calendar = text
        }
        var properties = (args.repeated["-p"] ?? []) + (args.repeated["--property"] ?? [])
        if let budget = args.options["--budget"] {
            guard let span = try? TimeSpan(parsing: budget), !span.isInfinite, span.microseconds > 0 else {
                throw UsageError("--budget needs a time span above 0, such as 30s or 2h")
            }
            properties.insert("RuntimeBudgetSec=\(budget)", at: 0)
        }
        for property in properties where !property.contains("=") {
            throw UsageError("-p '\(property)' is not KEY=VALUE")
        }
        parameters.properties = properties.isEmpty ? nil : properties
        // What taskd would refuse with only the parameter's name (Varlink's InvalidParameter), said here.
        do throws(ParameterError) {
            try parameters.validate()
        } catch {
            let option = ["name": "--name", "command": "the command"][error.name] ?? error.name
            throw UsageError("\(option): \(error.reason)")
        }
        return parameters
    }

    /// `--at`: a timestamp as systemd reads one, or a time of day (its next occurrence).
    static func at(_ text: String, now: UInt64) throws(UsageError) -> UInt64 {
        if let usec = try? Timestamp.parse(text, now: now) {
            guard usec + 1_000_000 >= now else {
                throw UsageError("--at '\(text)' is \(Timestamp.relative(usec, now: now)): give a time to come")
            }
            return usec
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if (2...3).contains(parts.count), let spec = try? CalendarSpec(parsing: "*-*-* " + text),
            let next = spec.nextElapse(after: now)
        {
            return next
        }
        throw UsageError("--at '\(text)': expected 'YYYY-MM-DD HH:MM[:SS] [UTC|ZONE]', @EPOCH or HH:MM[:SS]")
    }
}
