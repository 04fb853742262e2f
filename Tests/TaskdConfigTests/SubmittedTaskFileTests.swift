import Testing

@testable import TaskScheduling
@testable import TaskdConfig

/// A submitted task's file: composed from a request, it reads back as the task asked for, whatever
/// the command's words hold; what a request may not set is refused, named.
@Suite("Config: submitted task files")
struct SubmittedTaskFileTests {
    static func compose(_ command: [String], properties: [String] = []) throws -> String {
        try SubmittedTaskFile.compose(
            header: ["a header"], command: command, calendar: "2030-01-02 03:04:05.000006 UTC", once: true,
            submitter: 1000, user: 1000, group: 1000, properties: properties)
    }

    @Test("the command's words come back as given: spaces, quotes, backslashes, $, %, newlines, tabs")
    func wordsRoundTrip() throws {
        let command = [
            "/bin/sh", "-c", "echo \"$HOME\" 'a b' \\n %i", "two  spaces", "tab\there", "line\nnext", "", "\u{1}",
        ]
        let text = try Self.compose(command, properties: ["RuntimeBudgetSec=5min", "MaxAttempts=3", "Environment=A=1"])
        let (definition, diagnostics) = ConfigLoader.parseTaskText(text, path: "submitted/x.task")
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let d = try #require(definition)
        guard case .command(let spec) = d.handler else {
            Issue.record("not a command")
            return
        }
        #expect(spec.argv == command)
        #expect(d.key == TaskKey(kind: "submitted", identifier: "x"))
        #expect(d.budget == .seconds(300) && d.retry.maxAttempts == 3)
        #expect(d.persistent && d.onCalendar.map(\.description) == ["2030-01-02 03:04:05.000006 UTC"])
        #expect(spec.identity.uid == 1000 && spec.identity.gid == 1000)
        #expect(d.wakeAccess == AccessList(users: [1000]))
    }

    @Test("keys a request may not give, and keys no task file has, are refused by name")
    func refused() {
        for (property, reason) in [
            ("ExecStart=/bin/evil", "not for a submitted task"), ("OnSuccess=fetch", "stands alone"),
            ("After=fetch", "stands alone"), ("Kind=processing", "not for a submitted task"),
            ("NoSuchKey=1", "not a task-file key"),
        ] {
            let error = #expect(throws: ConfigDiagnostic.self) {
                try Self.compose(["/bin/true"], properties: [property])
            }
            #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
            #expect(error?.description.contains(String(property.prefix { $0 != "=" })) == true)
        }
    }

    @Test("a task file in tasks.d may not take the kind submitted tasks have")
    func kindReserved() throws {
        let f = try ConfigFixture()
        _ = try f.write("tasks.d/x.task", "[Task]\nKind=submitted\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.tasks.isEmpty)
        #expect(
            config.diagnostics.contains {
                $0.description.contains("x.task:1") && $0.description.contains("taskctl submit")
            })
    }
}
