import Taskd
import TaskdIO
import TaskdProcess

#if canImport(Glibc)
    import Glibc
#endif

// taskd-bench: the benchmark's daemon (bench/run). Like weatherd it declares Swift tasks in code;
// each handler writes a CLOCK_REALTIME stamp to the FIFO named by TASKD_BENCH_STAMPS:
//   noop        "NS"                    when it starts (wake → handler latency, sustained load)
//   quiet       nothing                 (`taskctl wake` end to end)
//   linger      nothing, after 20 ms    (wakes that come during its run join it: Tests/integration/test_load.py)
//   cancel      "NS DEADLINE_USEC"      when onCancel runs (budget 60 ms, grace 50 ms)
//   t0…tN-1     "NAME NS"               when it starts (timer lateness; TASKD_BENCH_TIMERS=N)
// Their timers come from the task files bench/run writes.

let stamps: Int32 = getenv("TASKD_BENCH_STAMPS").map { open($0, O_RDWR | O_CLOEXEC) } ?? -1

@Sendable func stamp(_ prefix: String = "", _ suffix: String = "") {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    guard stamps >= 0 else { return }
    let line = "\(prefix)\(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec)\(suffix)\n"
    _ = line.withCString { write(stamps, $0, strlen($0)) }
}

// As the stock taskd does (Sources/taskd/main.swift): the library sets no malloc tunable.
MallocArenas.limit()
MallocArenas.keepLargeBlocksMapped()
var daemon = TaskDaemon(name: "taskd-bench")
    .backgroundTask(.appRefresh("noop"), overlap: .queue) { _ in stamp() }
    .backgroundTask(.appRefresh("quiet")) { _ in }
    .backgroundTask(.appRefresh("linger")) { _ in try? await Task.sleep(for: .milliseconds(20)) }
    .backgroundTask(.processing("cancel"), budget: .milliseconds(60), cancelGrace: .milliseconds(50)) { context in
        await withTaskCancellationHandler {
            try? await Task.sleep(for: .seconds(10))
        } onCancel: {
            stamp("", " \(context.deadlineRealtimeUSec)")
        }
    }
let timers = getenv("TASKD_BENCH_TIMERS").flatMap { Int(String(cString: $0)) } ?? 0
for i in 0..<timers {
    let name = "t\(i)"
    daemon = daemon.backgroundTask(.processing(name)) { _ in stamp("\(name) ") }
}
await daemon.run()
