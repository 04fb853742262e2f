import Testing

@testable import TaskdMachine

/// Reading /proc/pressure and free space for the conditions that are sampled.
@Suite("MachineWatch: pressure and free space")
struct MachineWatchTests {
    let text = """
        some avg10=1.23 avg60=12.50 avg300=100.00 total=1234
        full avg10=0.00 avg60=0.00 avg300=0.00 total=0
        """

    @Test("the 'some' line's average for each window, in hundredths of a percent")
    func pressure() {
        #expect(MachineWatch.parsePressure(text, window: .tenSeconds) == 123)
        #expect(MachineWatch.parsePressure(text, window: .oneMinute) == 1250)
        #expect(MachineWatch.parsePressure(text, window: .fiveMinutes) == 10_000)
        #expect(MachineWatch.parsePressure("some avg10=7.5 avg60=0 avg300=0 total=0", window: .tenSeconds) == 750)
        #expect(MachineWatch.parsePressure("full avg10=1.00 avg60=0 avg300=0 total=0", window: .tenSeconds) == nil)
        #expect(MachineWatch.parsePressure(text, window: .tenSeconds, line: "full") == 0)
        #expect(MachineWatch.parsePressure("", window: .oneMinute) == nil)
    }

    @Test("free space: a real file system has some; a path that does not exist reads as nil")
    func freeSpace() {
        #expect((MachineWatch.freeBytes("/") ?? 0) > 0)
        #expect(MachineWatch.freeBytes("/nonexistent/taskd") == nil)
    }
}
