import TaskScheduling
import TaskdConfig
import TaskdIO

/// The daemon's life as a service: the watchdog, reloading the configuration, stopping.
extension Daemon {
    /// Sends `WATCHDOG=1` every `interval` µs (half of `WATCHDOG_USEC`): a wedged scheduler stops
    /// petting and systemd restarts taskd. With Swift handlers, each pet also makes a round trip
    /// through the global concurrent executor, so a cooperative pool that no longer runs (handlers
    /// blocking its threads) stops it too. Without them that pool is never used.
    package func startWatchdog(every interval: UInt64) {
        let throughPool = !swift.isEmpty
        status.startWatchdog(every: interval) { [weak self] pet in
            guard let self else { return }
            guard throughPool else { return self.onLoop { _ in pet() } }
            Task(executorPreference: globalConcurrentExecutor) { self.onLoop { _ in pet() } }
        }
    }

    /// Loads the configuration again (off the cooperative pool). An invalid one changes nothing
    /// and its errors come back as file:line lines; a valid one is applied (see `Scheduler.reload`).
    package func reload() async -> Result<ReloadDiff, ReloadFailure> {
        status.notifier.notify(
            "RELOADING=1\nMONOTONIC_USEC=\(clock.now().monotonic)\nSTATUS=Reloading configuration")
        defer {
            status.reset()
            status.notifier.notify("READY=1")
            status.send(statusText)
        }
        let load = loadConfig
        let config = await Thread.run { load() }
        for d in config.diagnostics {
            journal.daemon(
                .configError, d.severity == .error ? 3 : 4, d.description,
                [("CONFIG_FILE", d.location.file), ("CONFIG_LINE", String(d.location.line))])
        }
        guard config.isValid else {
            let errors = config.diagnostics.filter { $0.severity == .error }.map(\.description)
            journal.daemon(
                .reloaded, 3,
                "reload refused: the configuration has \(errors.count) error(s); the running configuration stays")
            return .failure(ReloadFailure(errors: errors))
        }
        for d in config.tasks where d.handler == .swift && !swift.has(d.key.identifier) {
            journal.daemon(.configError, 4, "\(d.key): no Swift handler is registered; its runs will fail")
        }
        access = config.daemon.access
        submitAccess = config.daemon.submitAccess
        let (diff, actions) = apply(
            config.tasks + submittedTasks, maxConcurrentRuns: Self.maxConcurrentRuns(config.daemon))
        if !diff.added.isEmpty {
            let (loaded, problems) = await store.loadTasks(diff.added)
            for problem in problems { journal.daemon(.stateError, 4, problem) }
            history.adopt(loaded)
        }
        perform(actions)
        journal.reloaded(diff)
        return .success(diff)
    }

    /// Puts `tasks` in effect (a reload, a task submitted or withdrawn): the history's sizes, the
    /// conditions watched and the scheduler follow them. The caller performs the actions.
    func apply(_ tasks: [TaskDefinition], maxConcurrentRuns: Int? = nil) -> (ReloadDiff, [SchedulerAction]) {
        history.configure(tasks)
        conditions.reconfigure(tasks)
        watchConditions()
        let (diff, actions) = scheduler.reload(
            tasks, maxConcurrentRuns: maxConcurrentRuns ?? scheduler.maxConcurrentRuns, at: clock.now())
        Self.checkChains(tasks, resolver: scheduler.resolver, journal: journal)
        return (diff, actions)
    }

    /// The run keeper, if any, exits: taskd stops and every run has ended (`shutdown`).
    package func quitKeeper() { commands.quitKeeper() }

    /// Cancels every run (reason `shutdown`, or `restart` when systemd restarts taskd) and returns
    /// once none is left: each ends by itself, or by the hard stop `CancelGraceSec` later. Their
    /// acknowledged wakes run after the restart; with `restarting`, the runs cut short that answer
    /// none are kept in the state folder to run again too (`CutRunsFile`).
    package func shutdown(restarting: Bool = false) async {
        let actions = scheduler.shutdown(at: clock.now(), reason: restarting ? .restart : .shutdown)
        let grace = scheduler.runs.values.map(\.cancelGrace.microseconds).max() ?? 0
        let count = scheduler.runs.values.filter(\.isActive).count
        status.notifier.notify("STOPPING=1\nSTATUS=Stopping: cancelling \(count) run(s)")
        if grace > 0 { status.notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        journal.daemon(
            .daemonStopping, 5,
            restarting
                ? "restarting: cancelling \(count) run(s), to run again once taskd is back"
                : "stopping: cancelling \(count) run(s)")
        perform(actions)
        if !scheduler.runs.isEmpty { await withCheckedContinuation { stopWaiters.append($0) } }
        await store.waitDurable(store.add([]))
        let cut = scheduler.takeCutShort()
        if !cut.isEmpty, let problem = cutRuns?.save(cut) { journal.daemon(.stateError, 3, problem) }
    }
}
