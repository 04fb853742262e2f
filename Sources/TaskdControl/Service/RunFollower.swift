import Synchronization
import TaskdProtocol

/// Answers a `Wake` with `"more": true`: the runs once the wake is acknowledged, then the runs
/// again each time one of them changes state or reports progress (at most once a second per
/// run), the reply that tells the last end being final.
/// States that arrive before the acknowledgement wait for it, so the client hears them in order.
final class RunFollower: Sendable {
    private let call: MethodCall<RunsReply>
    private let state = Mutex(Progress())

    private struct Progress {
        /// The runs as last told; nil until the wake is acknowledged.
        var latest: [RunInfo]?
        /// States heard before the acknowledgement, in order.
        var early: [RunInfo] = []
        var done = false
    }

    init(_ call: MethodCall<RunsReply>) { self.call = call }

    /// The wake was acknowledged with `runs`: tells them, then any state heard meanwhile.
    func acknowledged(_ runs: [RunInfo]) {
        state.withLock { p in
            p.latest = runs
            tell(&p)
            for info in p.early { apply(info, &p) }
            p.early = []
        }
    }

    /// A later state of one of the runs.
    func update(_ info: RunInfo) {
        state.withLock { p in
            guard p.latest != nil else { return p.early.append(info) }
            apply(info, &p)
        }
    }

    private func apply(_ update: RunInfo, _ p: inout Progress) {
        // The run itself, or the retry of one (which takes its place).
        guard !p.done,
            let index = p.latest!.firstIndex(where: { $0.runId == update.runId && !$0.disposition.isDropped })
                ?? p.latest!.firstIndex(where: { $0.runId == update.previousRunId && update.previousRunId != nil })
        else { return }
        var info = update
        info.disposition = p.latest![index].disposition
        let was = p.latest![index]
        guard
            info.runId != was.runId || info.state != was.state || info.retryInUSec != was.retryInUSec
                || info.progressCompleted != was.progressCompleted || info.progressTotal != was.progressTotal
                || info.status != was.status
        else { return }
        p.latest![index] = info
        tell(&p)
    }

    /// Sends the runs as they are; final once every one has ended.
    private func tell(_ p: inout Progress) {
        // A refused or skipped wake has nothing to follow; a failed run whose retry comes is not over.
        let ended = p.latest!.allSatisfy { ($0.hasEnded && $0.retryInUSec == nil) || $0.disposition.isDropped }
        p.done = ended
        if call.isClosed { return }
        call.reply(RunsReply(runs: p.latest!), continues: !ended)
    }
}
