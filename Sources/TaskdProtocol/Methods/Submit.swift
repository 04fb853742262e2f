extension SchedulerInterface {
    /// `Submit(command, name?, atUSec?, inUSec?, calendar?, properties?) -> (task)`: adds a transient
    /// task that runs `command` once (now, at a time or after a span) or on a calendar, as the caller.
    public enum Submit: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Submit"

        public struct Parameters: VarlinkParameters, Hashable {
            /// The command and its arguments, as `ExecStart=` would run them (no shell).
            public var command: [String]
            /// The task's identifier (kind `submitted`); nil: `run-` and 8 hex digits.
            public var name: String?
            /// Runs once at this CLOCK_REALTIME µs.
            public var atUSec: UInt64?
            /// Runs once this many µs from now.
            public var inUSec: UInt64?
            /// Runs on this `OnCalendar=` expression for as long as it has elapses.
            public var calendar: String?
            /// Task-file settings, `Key=Value` each (`RuntimeBudgetSec=5min`, `MaxAttempts=3`).
            public var properties: [String]?

            public init(
                command: [String], name: String? = nil, atUSec: UInt64? = nil, inUSec: UInt64? = nil,
                calendar: String? = nil, properties: [String]? = nil
            ) {
                self.command = command
                self.name = name
                self.atUSec = atUSec
                self.inUSec = inUSec
                self.calendar = calendar
                self.properties = properties
            }

            public func validate() throws(ParameterError) {
                guard let program = command.first, !program.isEmpty else {
                    throw ParameterError(name: "command", reason: "must name a program")
                }
                if let name {
                    let allowed = name.utf8.allSatisfy {
                        ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                            || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E
                    }
                    guard allowed, !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix(".") else {
                        throw ParameterError(
                            name: "name",
                            reason: "must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'")
                    }
                }
                if [atUSec != nil, inUSec != nil, calendar != nil].filter({ $0 }).count > 1 {
                    throw ParameterError(name: "atUSec", reason: "give at most one of atUSec, inUSec and calendar")
                }
                for (value, parameter) in [(atUSec, "atUSec"), (inUSec, "inUSec")] {
                    if let value, value > UInt64(Int64.max) {
                        throw ParameterError(name: parameter, reason: "must be a whole number from 0 to \(Int64.max)")
                    }
                }
                for property in properties ?? [] where !property.contains("=") {
                    throw ParameterError(name: "properties", reason: "'\(property)' is not Key=Value")
                }
            }
        }

        public typealias Reply = SchedulerInterface.Status.Reply
    }
}
