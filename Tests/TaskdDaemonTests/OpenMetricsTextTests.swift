import TaskScheduling
import Testing

@testable import TaskdDaemon

/// The metrics text's pieces: timestamps as OpenMetrics writes them, and label values escaped.
struct OpenMetricsTextTests {
    @Test(
        "seconds: whole seconds, a point and six digits of fraction",
        arguments: [
            (0, "0.000000"), (5, "0.000005"), (999_999, "0.999999"), (1_000_000, "1.000000"),
            (1_764_117_600_123_456, "1764117600.123456"), (UInt64.max, "18446744073709.551615"),
        ] as [(UInt64, String)])
    func seconds(_ usec: UInt64, _ text: String) {
        #expect(OpenMetricsText.seconds(usec) == text)
    }

    @Test("a sample's labels: the task's key, then the extra ones; \\, \" and a newline escaped, the rest whole")
    func labels() {
        var m = OpenMetricsText()
        m.sample("a", "1")
        m.sample("b", key: TaskKey(kind: "processing", identifier: "plain"), labels: [("le", "+Inf")], "2")
        m.sample("c", key: TaskKey(kind: "processing", identifier: #"q"u\o"#), labels: [("x", "line\nnext é")], "3")
        #expect(
            String(decoding: m.finish(), as: UTF8.self) == """
                a 1
                b{task="plain",kind="processing",le="+Inf"} 2
                c{task="q\\"u\\\\o",kind="processing",x="line\\nnext é"} 3
                # EOF

                """)
    }
}
