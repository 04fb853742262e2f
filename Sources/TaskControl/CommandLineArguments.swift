/// taskctl's command line: a command, its positional arguments, and options anywhere.
struct CommandLineArguments {
    var command: String?
    var positional: [String] = []
    var options: [String: String] = [:]
    /// Every value of an option given more than once (`-p`), in order.
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []

    /// Options that take a value; anything else starting with `-` is a flag.
    static let valued: Set<String> = [
        "--socket", "--id", "--payload", "-n", "--lines", "--run", "--base-time", "--iterations", "--until", "--note",
        "--timeout", "--at", "--in", "--calendar", "--budget", "--name", "-p", "--property",
    ]

    init(_ arguments: [String]) throws(UsageError) {
        var it = arguments.makeIterator()
        var optionsEnded = false
        while let arg = it.next() {
            if arg == "--" && !optionsEnded {
                optionsEnded = true  // everything after `--` is positional
            } else if !optionsEnded && arg.hasPrefix("-") && arg.count > 1 {
                var name = arg
                var inline: String?
                if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                    name = String(arg[..<eq])
                    inline = String(arg[arg.index(after: eq)...])
                }
                if Self.valued.contains(name) {
                    guard let v = inline ?? it.next() else { throw UsageError("\(name) needs a value") }
                    options[name] = v
                    repeated[name, default: []].append(v)
                } else {
                    guard inline == nil else { throw UsageError("\(name) takes no value") }
                    flags.insert(name)
                }
            } else if command == nil {
                command = arg
            } else {
                positional.append(arg)
            }
        }
    }

    /// Fails on any option outside `allowed` (global options are always allowed).
    func check(allowed: Set<String>) throws(UsageError) {
        let global: Set<String> = ["--socket", "--json", "-h", "--help"]
        for name in Set(options.keys).union(flags) where !allowed.contains(name) && !global.contains(name) {
            throw UsageError("\(command ?? "taskctl") does not take \(name)")
        }
    }

    /// The one positional argument `command` takes (`what`, for the error).
    func one(_ what: String, for command: String) throws(UsageError) -> String {
        guard positional.count == 1 else { throw UsageError("\(command) takes exactly one \(what)") }
        return positional[0]
    }
}

/// A command line taskctl cannot run; exit status 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
