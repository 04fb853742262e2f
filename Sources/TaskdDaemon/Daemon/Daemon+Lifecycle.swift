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
        let timer = clock.makeTimer { [weak self] in
            guard let self else { return }
            let pet: @Sendable () -> Void = { self.onLoop { $0.status.petted() } }
            if throughPool { Task(executorPreference: globalConcurrentExecutor) { pet() } } else { pet() }
        }
        status.startWatchdog(every: interval, timer: timer)
    }

    /// Loads the configuration again (off the cooperative pool). An invalid one changes nothing
    /// and its errors come back as file:line lines; a valid one is applied (see `Scheduler.reload`).
    package func reload() async -> Result<ReloadDiff, ReloadFailure> {
        status.notifier.notify(
            "RELOADING=1\nMONOTONIC_USEC=\(clock.now().monotonic)\nSTATUS=Reloading configuration")
        defer {
            status.reset()
            status.notifier.notify("READY=1")
            sendStatus()
        }
        let load = ports.loadConfig
        let config = await Thread.run { load() }
        journal.configDiagnostics(config.diagnostics)
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
        for component in components { component.reconfigure(config) }
        let (diff, actions) = apply(
            config.tasks + component(Submissions.self).tasks(in: self),
            maxConcurrentRuns: config.daemon.effectiveMaxConcurrentRuns)
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
        component(MachineLink.self).configure(tasks, in: self)
        let (diff, actions) = scheduler.reload(
            tasks, maxConcurrentRuns: maxConcurrentRuns ?? scheduler.maxConcurrentRuns, at: clock.now())
        journal.checkChains(tasks, resolver: scheduler.resolver)
        return (diff, actions)
    }

    /// The run keeper, if any, exits: taskd stops and every run has ended (`shutdown`).
    package func quitKeeper() { commands.quitKeeper() }

    /// Cancels the runs among `runIDs` still in progress, for `reason`.
    func cancelRuns(_ runIDs: [String], reason: CancelReason) {
        var actions: [SchedulerAction] = []
        for id in runIDs where scheduler.runs[id] != nil {
            if let cancelled = try? scheduler.cancel(target: id, reason: reason, at: clock.now()) {
                actions += cancelled.actions
            }
        }
        perform(actions)
    }

    /// Whether the command runs outlive taskd's unit (the run keeper is in a scope of its own).
    package var commandsOutliveUnit: Bool { commands.runsOutliveUnit }

    /// Runs `body` isolated to the daemon: a component's request from outside the loop.
    package func withIsolation<T: Sendable>(_ body: @Sendable (isolated Daemon) async throws -> T) async rethrows -> T {
        try await body(self)
    }
}
