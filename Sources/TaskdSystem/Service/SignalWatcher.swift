@preconcurrency import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers process signals as an async sequence, through Dispatch signal sources. The signals'
/// default action is replaced by SIG_IGN (commands reset it: they are spawned with SETSIGDEF).
public final class SignalWatcher: Sendable {
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    public init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        signals = stream
        // A serial queue: its thread is an overcommit one, which does not start libdispatch's
        // once-a-second pool monitor as a global (non-overcommit) queue's first thread does.
        let queue = DispatchQueue(label: "taskd.signals")
        sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { @Sendable in continuation.yield(number) }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
