import Testing

@testable import TaskdDaemon

@Suite("Notify lines: a command's PROGRESS= and STATUS=")
struct NotifyLineTests {
    @Test(
        "progress with and without a total, a status, and what is ignored",
        arguments: [
            ("PROGRESS=3/250", ProgressMailbox.Report(completed: 3, total: 250)),
            ("PROGRESS=7", ProgressMailbox.Report(completed: 7)),
            ("PROGRESS=0/0", ProgressMailbox.Report(completed: 0, total: 0)),
            ("STATUS=fetching page 4", ProgressMailbox.Report(status: "fetching page 4")),
            ("STATUS=", ProgressMailbox.Report(status: "")),
            ("PROGRESS=-1/5", nil), ("PROGRESS=3/x", nil), ("PROGRESS=", nil), ("PROGRESS=1/2/3", nil),
            ("READY=1", nil), ("progress=3/4", nil), ("", nil),
        ] as [(String, ProgressMailbox.Report?)])
    func parse(line: String, expected: ProgressMailbox.Report?) {
        #expect(NotifyLine.parse(line[...]) == expected)
    }

    @Test("the mailbox keeps the latest report, merged, and asks the loop to come once per delivery")
    func mailbox() {
        let mailbox = ProgressMailbox()
        #expect(mailbox.post { $0.completed = 1 })
        #expect(!mailbox.post { $0.completed = 2 })
        #expect(!mailbox.post { $0.status = "s" })
        #expect(mailbox.take() == ProgressMailbox.Report(completed: 2, status: "s"))
        #expect(mailbox.take() == nil)
        #expect(mailbox.post { $0.completed = 3 })
    }
}
