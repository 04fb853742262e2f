import TaskScheduling
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// taskctl: wake, list, inspect and cancel taskd's tasks, and read their journal.
public enum Taskctl {
    static let usage = """
        Usage: taskctl [--socket PATH] [--json] COMMAND [ARGS]

        Commands:
          wake TARGET [--id V] [--payload JSON] [--wait]
                              start a run of every task TARGET names (a name, a kind, or
                              kind:identifier), or join the run in progress; --wait follows the
                              runs to their end and exits 0 only if every one completed
          list [--failed] [--overdue] [--names]
                              every task: state, next timer elapse, last result; --failed: those
                              whose last runs failed, --overdue: those overdue; --names: names only
          pause TARGET [--until SPAN] [--note TEXT]
                              record the timers and wakes of every task TARGET names, run none
          resume TARGET       run them again
          why NAME            what decides, now, whether the task runs
          metrics             every task's metrics, in the OpenMetrics text format
          fleet               the fleet's hosts and the claims they hold in etcd (Fleet=)
          status NAME         one task: its run in progress, last run, schedule
          history NAME [-n N] the task's last runs, the last to end first
          cancel TARGET|RUNID cancel one run, or the run in progress, queued runs and pending
                              retry of every task TARGET names (a submitted task is withdrawn)
          submit [--at TIME | --in SPAN | --calendar EXPR] [--budget SPAN] [-p KEY=VALUE]... -- COMMAND...
                              add a task that runs COMMAND as you, once or on a calendar
          reload              load the configuration again; prints what was added, removed, changed
          drain [--timeout SPAN] | drain --end
                              start no new run and wait until the runs in progress have ended, as
                              before a restart; --end starts runs again
          upgrade             re-execute taskd's binary (after a package upgrade) without ending the
                              command runs in progress
          logs NAME [-f] [-n N] [--run ID]
                              the task's journal, through journalctl
          calendar EXPRESSION... [--base-time TIMESTAMP] [--iterations N]
                              normalize OnCalendar= expressions and show when they elapse,
                              as systemd-analyze calendar (no daemon needed)
          timespan SPAN...    parse time spans (RuntimeBudgetSec= and the like) and show them in
                              microseconds and normalized, as systemd-analyze timespan (no daemon needed)
          completion SHELL    a completion script for bash, zsh or fish (task names asked from taskd)

        Options:
          --socket PATH       taskd's control socket (default: $TASKD_SOCKET, then
                              /run/taskd/taskd.sock as root or $XDG_RUNTIME_DIR/taskd/taskd.sock,
                              then /run/taskd/taskd.sock if that is missing)
          --json              print data as JSON
          -h, --help          show help (taskctl COMMAND --help for one command)
          --                  end of options: what follows is positional (an expression may start with '-')

        Exit status: 0 success; 1 a run did not complete (--wait), reload refused, drain timed out or
        upgrade failed;
        2 usage; 3 no such task; 4 taskd unreachable; 5 permission denied.
        """

    static let commandUsage: [String: String] = [
        "calendar": """
        Usage: taskctl calendar EXPRESSION... [--base-time TIMESTAMP] [--iterations N] [--json]

        Normalizes calendar expressions (systemd.time(7), as OnCalendar= takes them) and prints
        their next elapses, as systemd-analyze calendar does. Needs no daemon; honours TZ.
          --base-time T   compute from T instead of now: @EPOCH, or 'YYYY-MM-DD HH:MM:SS [UTC|ZONE]'
          --iterations N  show the next N elapses (default 1)
          --json          one JSON array: per expression {expression, normalized, nextElapseUSec}
                          or {expression, error}; exit status 1 if any is invalid
        """,
        "timespan": """
        Usage: taskctl timespan SPAN... [--json]

        Parses time spans (systemd.time(7): "5min 30s", "1.5h", "infinity"; a bare number is seconds)
        and prints each as systemd-analyze timespan does: the original, microseconds, and the
        normalized form. Stops at the first invalid span, with exit status 1. Needs no daemon.
        A span that starts with '-' goes after '--' (and is rejected: spans are not negative).
          --json          one JSON array: per span {span, usec, human} or {span, error}, every
                          span included; exit status 1 if any is invalid
        """,
        "wake": """
        Usage: taskctl wake TARGET [--id V] [--payload JSON] [--wait] [--no-follow-retries] [--json | --events]

        Starts a run of every task TARGET names, or joins the run in progress (coalesced).
        TARGET is a task name, a kind (every task of it), or kind:identifier.
          --id V          the wake's id (SwiftUI's task(id:)); handlers see TASKD_WAKE_ID
          --payload JSON  a JSON object handed to the handler (a command reads it on stdin)
          --wait          follow the runs until they end; exit 0 only if all completed. On a
                          terminal, a live line shows a running run's progress and status
          --json          the runs as a JSON array (with --wait, once they have ended)
          --no-follow-retries  with --wait: stop at a failed run's end even when it will be retried
                          (by default --wait follows a failed run into its retries, and the exit
                          status is the last attempt's)
          --events        with --wait: every change as it comes, one JSON object per line,
                          {"runs": [...], "final": false}, the last one "final": true
        """,
        "list": """
        Usage: taskctl list [--failed] [--overdue] [--names] [--json]

        Every task with its state (idle, running, waiting, paused…), next timer elapse and last
        result (with the failures in a row, and overdue).
          --failed   only tasks whose last runs failed (a failure in a row, or a last run failed,
                     expired or killed)
          --overdue  only tasks with no completed run for their ExpectSuccessWithinSec=
          --names    only their names, one a line (what shell completion asks for)
        """,
        "completion": """
        Usage: taskctl completion SHELL

        Prints a completion script for SHELL (bash, zsh or fish), made from taskctl's own commands
        and options; it asks taskd for the task names as it completes (taskctl list --names).
        Installed: bash-completion/completions/taskctl, zsh/vendor-completions/_taskctl and
        fish/vendor_completions.d/taskctl.fish under share/.
        """,
        "pause": """
        Usage: taskctl pause TARGET [--until SPAN] [--note TEXT] [--json]

        Pauses every task TARGET names: its timers and wakes are recorded (a run that ends at once,
        cancelled, reason paused; a wake says "paused") and not run, until taskctl resume, or for
        SPAN (5min, 2h, 1d). A run in progress goes on. Kept across restarts.
          --until SPAN  resume by itself after SPAN
          --note TEXT   why, shown by status, why and the journal
        """,
        "submit": SubmitCommand.usage,
        "resume": "Usage: taskctl resume TARGET [--json]\n\nResumes every paused task TARGET names.",
        "drain": """
        Usage: taskctl drain [--timeout SPAN] [--json]
               taskctl drain --end [--json]

        Drains taskd, as before a restart or an upgrade: no new run starts (timers, wakes and
        retries that come meanwhile wait, and acknowledged wakes stay on disk), and taskctl waits
        until the runs in progress have ended: exit status 0 then, 1 if SPAN passed first (the runs
        still active are listed). The drain lasts until taskctl drain --end, which starts the runs
        that waited, or until taskd stops. Only root or taskd's own user.
          --timeout SPAN  wait at most SPAN (30s, 5min)
          --end           end the drain
        """,
        "upgrade": """
        Usage: taskctl upgrade [--json]

        Re-executes the binary now at taskd's path (as after a package upgrade), keeping its PID:
        the command runs in progress go on, their output and budgets too; Swift handlers' runs are
        cancelled (reason upgrade) and run again in the new image. The new binary's --check-config
        must pass first, or nothing changes. Waits until the new image answers. Exit status 0
        upgraded, 1 the upgrade did not happen. Only root or taskd's own user. SIGUSR2 does the same.
        """,
        "why": """
        Usage: taskctl why NAME [--json]

        What decides, now, whether the task runs, the most decisive first: paused, running, waiting
        for conditions or a free slot, queued behind a run, a trigger joining the run in progress,
        a retry pending, the next timer, overdue, failures in a row, the last refusal, the last
        result. Each line names the journal MESSAGE_ID of the entries behind it
        (journalctl MESSAGE_ID=… TASK=NAME).
        """,
        "fleet": """
        Usage: taskctl fleet [--json]

        The fleet as etcd has it now (FleetEndpoints= in taskd.conf): its name, this host's, the
        hosts that hold a lease, and the claims held: each Fleet=once slot being run (its time) and
        each Fleet=max:N place (its run), with the host that holds it and the claim's fence token.
        """,
        "metrics": """
        Usage: taskctl metrics

        Every task's metrics and taskd's, in the OpenMetrics text format (as Prometheus reads it):
        last success and next run timestamps, runs by outcome, a histogram of their durations,
        failures in a row, overdue and paused tasks, runs active and waiting, wakes served.
        """,
        "status":
            "Usage: taskctl status NAME [--json]\n\nOne task (a name or kind:identifier): current run, last run, schedule.",
        "cancel": """
        Usage: taskctl cancel TARGET|RUNID [--json]

        Cancels one run (by its id), or the run in progress, the queued runs and the pending retry
        of every task TARGET names: a command gets its KillSignal, a Swift handler Swift task
        cancellation, and whatever still runs CancelGraceSec later is killed. A cancelled run is
        never retried, and whatever it reports afterwards is stale.
        """,
        "history": """
        Usage: taskctl history NAME [-n N] [--json]

        The task's last runs (kept in the state folder, History= of them), the last to end first: when each
        started, its trigger, attempt, outcome, duration, and how long it waited to start.
          -n N      show at most N runs (default 20)
        """,
        "reload": """
        Usage: taskctl reload [--json]

        Asks taskd to load its configuration again (as SIGHUP and systemctl reload taskd do). An
        invalid configuration changes nothing: its errors are printed as file:line and the exit
        status is 1. Otherwise it prints the tasks added, removed and changed; a changed task's
        run is cancelled and started again under the new definition.
        """,
        "logs": """
        Usage: taskctl logs NAME [-f] [-n N] [--run ID]

        Shows the task's journal entries (journalctl TASK=NAME), or one run's (--run ID).
          -f        follow new entries
          -n N      show the last N entries
        """,
    ]

    /// Runs taskctl with `arguments` (without the program name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        do {
            let args = try CommandLineArguments(arguments)
            guard let command = args.command else {
                if args.flags.contains("--help") || args.flags.contains("-h") {
                    Terminal.out(usage)
                    return ExitCode.success.rawValue
                }
                throw UsageError("missing command")
            }
            if args.flags.contains("--help") || args.flags.contains("-h") {
                guard let text = commandUsage[command] else { throw UsageError("unknown command '\(command)'") }
                Terminal.out(text)
                return ExitCode.success.rawValue
            }
            return try run(command, args).rawValue
        } catch let error as UsageError {
            Terminal.err("taskctl: \(error.message)\nTry 'taskctl --help'.")
            return ExitCode.usage.rawValue
        } catch let error as Failure {
            Terminal.err("taskctl: \(error.message)")
            return error.code.rawValue
        } catch {
            Terminal.err("taskctl: \(error)")
            return ExitCode.usage.rawValue
        }
    }

    static func run(_ command: String, _ args: CommandLineArguments) throws -> ExitCode {
        let json = args.flags.contains("--json")
        func one(_ what: String) throws(UsageError) -> String {
            guard args.positional.count == 1 else { throw UsageError("\(command) takes exactly one \(what)") }
            return args.positional[0]
        }
        switch command {
        case "wake":
            return try wake(args, json: json)
        case "list":
            try args.check(allowed: ["--failed", "--overdue", "--names"])
            guard args.positional.isEmpty else { throw UsageError("list takes no arguments") }
            return try Commands.list(
                failed: args.flags.contains("--failed"), overdue: args.flags.contains("--overdue"),
                names: args.flags.contains("--names"), json: json, socket: socket(args))
        case "completion":
            try args.check(allowed: [])
            Terminal.raw(try Completion.script(for: try one("SHELL")))
            return .success
        case "pause":
            try args.check(allowed: ["--until", "--note"])
            return try pause(args, json: json)
        case "resume":
            try args.check(allowed: [])
            return try Commands.resume(try one("TARGET"), json: json, socket: socket(args))
        case "drain":
            return try drain(args, json: json)
        case "upgrade":
            try args.check(allowed: [])
            guard args.positional.isEmpty else { throw UsageError("upgrade takes no arguments") }
            return try UpgradeCommand.run(json: json, socket: socket(args))
        case "why":
            try args.check(allowed: [])
            return try Commands.why(try one("NAME"), json: json, socket: socket(args))
        case "fleet":
            try args.check(allowed: [])
            guard args.positional.isEmpty else { throw UsageError("fleet takes no arguments") }
            return try FleetCommand.run(json: json, socket: socket(args))
        case "metrics":
            try args.check(allowed: [])
            guard args.positional.isEmpty else { throw UsageError("metrics takes no arguments") }
            return try Commands.metrics(socket: socket(args))
        case "status":
            try args.check(allowed: [])
            return try Commands.status(try one("NAME"), json: json, socket: socket(args))
        case "cancel":
            try args.check(allowed: [])
            return try Commands.cancel(try one("TARGET"), json: json, socket: socket(args))
        case "submit":
            return try SubmitCommand.run(args, json: json, socket: socket(args))
        case "history":
            try args.check(allowed: ["-n", "--lines"])
            return try history(args, json: json)
        case "reload":
            try args.check(allowed: [])
            guard args.positional.isEmpty else { throw UsageError("reload takes no arguments") }
            return try Commands.reload(json: json, socket: socket(args))
        case "calendar":
            try args.check(allowed: ["--base-time", "--iterations"])
            return try CalendarCommand.run(
                args.positional, baseTime: args.options["--base-time"], iterations: args.options["--iterations"],
                json: json)
        case "timespan":
            try args.check(allowed: [])
            return try TimespanCommand.run(args.positional, json: json)
        case "logs":
            try args.check(allowed: ["-f", "--follow", "-n", "--lines", "--run"])
            return try logs(args, json: json)
        default:
            throw UsageError("unknown command '\(command)'")
        }
    }

    /// `taskctl pause TARGET [--until SPAN] [--note TEXT]`.
    static func pause(_ args: CommandLineArguments, json: Bool) throws -> ExitCode {
        let until = try args.options["--until"].map { text throws(UsageError) -> UInt64 in
            guard let span = try? TimeSpan(parsing: text), !span.isInfinite, span.microseconds > 0 else {
                throw UsageError("--until needs a time span above 0, such as 30min or 2h")
            }
            return Terminal.nowUSec() + span.microseconds
        }
        return try Commands.pause(
            try args.one("TARGET", for: "pause"), until: until, note: args.options["--note"], json: json,
            socket: socket(args))
    }

    /// `taskctl drain [--timeout SPAN]` or `taskctl drain --end`.
    static func drain(_ args: CommandLineArguments, json: Bool) throws -> ExitCode {
        try args.check(allowed: ["--timeout", "--end"])
        guard args.positional.isEmpty else { throw UsageError("drain takes no arguments") }
        if args.flags.contains("--end") {
            guard args.options["--timeout"] == nil else { throw UsageError("--end takes no --timeout") }
            return try Commands.endDrain(json: json, socket: socket(args))
        }
        let timeout = try args.options["--timeout"].map { text throws(UsageError) -> UInt64 in
            guard let span = try? TimeSpan(parsing: text), !span.isInfinite else {
                throw UsageError("--timeout needs a time span, such as 30s or 5min")
            }
            return span.microseconds
        }
        return try Commands.drain(timeout: timeout, json: json, socket: socket(args))
    }

    /// `taskctl history NAME [-n N]`.
    static func history(_ args: CommandLineArguments, json: Bool) throws -> ExitCode {
        let text = args.options["-n"] ?? args.options["--lines"]
        let limit = try text.map { text throws(UsageError) -> Int in
            guard let n = Int(text), n > 0 else { throw UsageError("-n needs a number above 0") }
            return n
        }
        return try Commands.history(
            try args.one("NAME", for: "history"), limit: limit, json: json, socket: socket(args))
    }

    /// `taskctl logs NAME [-f] [-n N] [--run ID]`.
    static func logs(_ args: CommandLineArguments, json: Bool) throws -> ExitCode {
        let lines = args.options["-n"] ?? args.options["--lines"]
        if let lines, Int(lines) == nil { throw UsageError("-n needs a number") }
        return try Commands.logs(
            try args.one("NAME", for: "logs"), follow: args.flags.contains("-f") || args.flags.contains("--follow"),
            lines: lines,
            run: args.options["--run"], json: json)
    }

    /// `taskctl wake TARGET [--id ID] [--payload JSON] [--wait [--events] [--no-follow-retries]]`.
    static func wake(_ args: CommandLineArguments, json: Bool) throws -> ExitCode {
        try args.check(allowed: ["--id", "--payload", "--wait", "--events", "--no-follow-retries"])
        var parameters = SchedulerInterface.Wake.Parameters(target: try args.one("TARGET", for: "wake"))
        if args.flags.contains("--no-follow-retries") {
            guard args.flags.contains("--wait") else { throw UsageError("--no-follow-retries goes with --wait") }
            parameters.followRetries = false
        }
        parameters.id = args.options["--id"]
        if let text = args.options["--payload"] {
            guard let payload = try? JSONParser.parse(text), case .object(let members) = payload else {
                throw UsageError("--payload must be a JSON object, such as '{\"city\": \"Paris\"}'")
            }
            parameters.payload = members
        }
        let events = args.flags.contains("--events")
        if events && !args.flags.contains("--wait") { throw UsageError("--events follows the runs: add --wait") }
        return try Commands.wake(
            parameters, wait: args.flags.contains("--wait"), json: json, events: events, socket: socket(args))
    }

    static func socket(_ args: CommandLineArguments) -> String {
        args.options["--socket"] ?? DefaultPaths.clientSocketPath
    }
}

/// A failed command: a message for stderr and taskctl's exit code.
struct Failure: Error {
    var code: ExitCode
    var message: String
}
