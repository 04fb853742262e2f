// The Swift floor for idle wake-ups: a program that only awaits, to show what the Swift runtime
// (its Dispatch thread pool) does by itself while nothing happens. bench/run compiles it with swiftc.
@main struct Idle {
    static func main() async { try? await Task.sleep(for: .seconds(3600)) }
}
