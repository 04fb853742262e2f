import TaskScheduling
import TaskdIO
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// The runs a restart cut short, kept in the state folder for the next start: read back once.
struct CutRunsFileTests {
    @Test("the runs a restart kept are read back once; the file is gone after")
    func roundTrip() throws {
        let file = CutRunsFile(directory: StateStoreTests.folder())
        let run = try JSONValueDecoder().decode(
            CutRun.self,
            from:
                #"{"kind":"processing","identifier":"backup","attempt":2,"wakeID":"w","payload":"{\"a\":1}","runID":"abc","scheduledRealtime":123}"#
        )
        #expect(file.save([run]) == nil)
        let (runs, problem) = file.take()
        #expect(runs == [run] && problem == nil)
        let again = file.take()
        #expect(again.runs.isEmpty && again.problem == nil, "taken once")
    }

    @Test("a file that cannot be read is reported, naming it, and removed")
    func unreadable() {
        let directory = StateStoreTests.folder()
        _ = FileIO.replace(directory + "/cut-runs.json", with: Array("not json".utf8))
        let file = CutRunsFile(directory: directory)
        let (runs, problem) = file.take()
        #expect(runs.isEmpty)
        #expect(problem?.hasPrefix(directory + "/cut-runs.json: ") == true)
        #expect(file.take().problem == nil, "removed")
    }
}
