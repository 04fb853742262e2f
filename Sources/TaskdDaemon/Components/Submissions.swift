import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdIO
import TaskdProtocol

/// Transient tasks (`taskctl submit`, `Submit`): a task of kind `submitted` added by a request,
/// kept in the state folder, run as the user who submitted it, and removed with its file and its
/// record once spent (nothing left to run: its one time has run, or its calendar has no elapse
/// left) or cancelled. docs/submitted-tasks.md.
package final class Submissions: DaemonComponent {
    /// Where their files are kept.
    let folder: SubmittedFolder
    /// Who may submit (`SubmitUsers=`, `SubmitGroups=`).
    var access: AccessList?
    /// The names being written, and the submitted tasks whose run ended (spent, maybe).
    private var submitting: Set<String> = []
    private var ended: Set<TaskKey> = []

    package init(config: LoadedConfig, ports: DaemonPorts) {
        folder = ports.submitted
        access = config.daemon.submitAccess
    }

    package func reconfigure(_ config: LoadedConfig) { access = config.daemon.submitAccess }

    package static var methods: [MethodRow<Daemon>] {
        [
            MethodRow(SchedulerInterface.Submit.self) { p, call, daemon in
                // Off the loop's turn: the file is written and synced first.
                Task(executorPreference: EventLoop.shared) {
                    do {
                        let task = try await daemon.withIsolation {
                            try await $0.component(Submissions.self).submit(p, peer: call.peer, in: $0)
                        }
                        call.reply(.init(task: task))
                    } catch let error as any VarlinkErrorConvertible {
                        call.fail(error.varlinkError)
                    } catch {
                        call.fail(VarlinkError(SchedulerInterface.invalidRequest, ["reason": .string("\(error)")]))
                    }
                }
            }
        ]
    }

    /// Throws `permissionDenied` unless the peer may submit (`SubmitUsers=`, `SubmitGroups=`; root
    /// and taskd's own user always may, and no one else unless listed).
    func checkSubmit(_ peer: PeerCredentials) throws {
        guard
            AccessList.allows(
                access ?? AccessList(), uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: AccessControl.owner)
        else {
            throw DaemonError.permissionDenied("uid \(peer.uid) may not submit tasks (SubmitUsers=, SubmitGroups=)")
        }
    }

    /// Adds the submitted task once its file is on disk, and returns it. Its text is composed and
    /// parsed off the loop (a `User=` name resolves through NSS).
    package func submit(
        _ p: SchedulerInterface.Submit.Parameters, peer: PeerCredentials, in daemon: isolated Daemon
    ) async throws -> TaskInfo {
        let scheduler = daemon.scheduler
        guard !scheduler.isStopping else { throw DaemonError.shuttingDown }
        try checkSubmit(peer)
        let asPeer = try runsAs(peer)
        let now = daemon.clock.now()
        let name = p.name ?? "run-" + String(HexID.make(daemon.recordRandom.next()).prefix(8))
        let key = TaskKey(kind: SubmittedTaskFile.kind, identifier: name)
        guard scheduler.tasks[key] == nil, !submitting.contains(name) else {
            throw DaemonError.invalidRequest("\(key) exists: give another name, or cancel it first")
        }
        // Once: at the time given, or now (a time past is now too); else on the calendar.
        let once = max(p.atUSec ?? now.realtime &+ (p.inUSec ?? 0), now.realtime + 1)
        let calendar = p.calendar ?? Timestamp.calendarExpression(once)
        let header = [
            "Submitted by uid \(peer.uid) (pid \(peer.pid)) at \(Timestamp.format(now.realtime, utc: true)).",
            "taskd removes this file once the task is spent or cancelled.",
        ]
        let text: String
        do {
            text = try SubmittedTaskFile.compose(
                header: header, command: p.command, calendar: calendar, once: p.calendar == nil, submitter: peer.uid,
                user: asPeer ? peer.uid : nil, group: asPeer ? peer.gid : nil, properties: p.properties ?? [])
        } catch {
            throw DaemonError.invalidRequest(Self.describe(error, p))
        }
        submitting.insert(name)
        defer { submitting.remove(name) }
        let folder = self.folder
        let (parsed, diagnostics) = await Thread.run {
            ConfigLoader.parseTaskText(text, path: "submitted/\(name).task")
        }
        guard let definition = parsed else {
            throw DaemonError.invalidRequest(diagnostics.map { Self.describe($0, p) }.joined(separator: "\n"))
        }
        try checkIdentity(definition, properties: p.properties, peer: peer)
        try checkGroup(definition, daemon.scheduler)
        if p.calendar != nil, definition.onCalendar.allSatisfy({ $0.nextElapse(after: now.realtime) == nil }) {
            throw DaemonError.invalidRequest("calendar '\(p.calendar!)' has no elapse to come")
        }
        if let problem = await Thread.run({ folder.save(name, text) }) {
            daemon.journal.daemon(.stateError, 3, problem)
            throw DaemonError.invalidRequest("the task could not be kept: \(problem)")
        }
        guard !daemon.scheduler.isStopping else {
            _ = await Thread.run { folder.remove(name) }
            throw DaemonError.shuttingDown
        }
        // One task added, as a reload that adds it would: the others are not looked at.
        daemon.history.configure(adding: definition)
        daemon.component(MachineLink.self).configure(adding: definition, in: daemon)
        let (_, actions) = daemon.scheduler.add(definition, at: daemon.clock.now())
        daemon.journal.checkChains([definition], resolver: daemon.scheduler.resolver)
        // Writing the file took time: a time that passed meanwhile ("now" is always one) is due at once.
        if p.calendar == nil { daemon.scheduler.armCalendar(key, after: once - 1, at: daemon.clock.now()) }
        daemon.perform(actions)
        daemon.journal.daemon(
            .taskSubmitted, 6, "\(key) submitted by uid \(peer.uid): \(p.command.joined(separator: " ")), \(calendar)",
            [("TASK", name), ("TASK_KIND", key.kind), ("TASKD_SUBMITTER_UID", String(peer.uid))])
        return daemon.info(for: key, now: daemon.clock.now())
    }

    /// A diagnostic of the composed file as the request's own words: the property it is about
    /// (`-p RuntimeBudgetSec=soon: …`), or the command, the time or the name.
    static func describe(_ d: ConfigDiagnostic, _ p: SchedulerInterface.Submit.Parameters) -> String {
        guard let key = d.key else { return d.message }
        if let property = (p.properties ?? []).last(where: { $0.hasPrefix(key + "=") }) {
            return "\(property): \(d.message)"
        }
        switch key {
        case "ExecStart": return "the command: \(d.message)"
        case "OnCalendar": return "the time: \(d.message)"
        default: return "\(key)=: \(d.message)"
        }
    }

    /// Whether the command runs as the peer (User=, Group= written): a caller other than root runs
    /// its command as itself; when taskd is not root, only its own user may submit.
    private func runsAs(_ peer: PeerCredentials) throws -> Bool {
        let owner = AccessControl.owner
        if peer.uid == 0 || peer.uid == owner { return false }
        guard owner == 0 else {
            throw DaemonError.permissionDenied(
                "taskd runs as uid \(owner) and cannot run a command as uid \(peer.uid): only uid \(owner) may submit")
        }
        return true
    }

    /// Throws `permissionDenied` when a caller other than root asked its command to run as another
    /// user or group (`User=`, `Group=`, `SupplementaryGroups=` among the properties). With no
    /// `User=` the command runs as taskd's user, which such a caller then is (see `runsAs`).
    private func checkIdentity(_ definition: TaskDefinition, properties: [String]?, peer: PeerCredentials) throws {
        guard peer.uid != 0, case .command(let command) = definition.handler else { return }
        let otherUser = command.identity.uid.map { $0 != peer.uid } ?? false
        let otherGroup = command.identity.gid.map { $0 != peer.gid && !peer.groups.contains($0) } ?? false
        let moreGroups = (properties ?? []).contains { $0.hasPrefix("SupplementaryGroups=") && !$0.hasSuffix("=") }
        if otherUser || otherGroup || moreGroups {
            throw DaemonError.permissionDenied(
                "uid \(peer.uid) may not submit a command that runs as another user or group "
                    + "(User=, Group=, SupplementaryGroups=)")
        }
    }

    /// Throws `invalidRequest` when the task's `ConcurrencyGroup=` gives another size than
    /// the tasks of that group in effect.
    private func checkGroup(_ definition: TaskDefinition, _ scheduler: Scheduler) throws {
        guard let group = definition.concurrencyGroup else { return }
        let known = scheduler.tasks.values.lazy.compactMap(\.definition.concurrencyGroup).first {
            $0.name == group.name
        }
        if let known, known.size != group.size {
            throw DaemonError.invalidRequest(
                "ConcurrencyGroup=\(group.name):\(group.size): the group's tasks give size \(known.size)")
        }
    }

    package func observe(_ event: SchedulerEvent, in daemon: isolated Daemon) -> Bool {
        if case .ended(let run) = event, run.key.kind == SubmittedTaskFile.kind { ended.insert(run.key) }
        return true
    }

    /// After a batch: the submitted tasks whose run ended that are spent are removed; the record
    /// of one removed already whose cancelled run ended only now is forgotten again.
    package func performed(in daemon: isolated Daemon) {
        guard !ended.isEmpty else { return }
        let keys = ended
        ended = []
        var spent: Set<TaskKey> = []
        for key in keys {
            guard let state = daemon.scheduler.tasks[key] else {
                forgetRecord(key, daemon)
                continue
            }
            if state.isSpent { spent.insert(key) }
        }
        withdraw(spent, reason: "spent: it has nothing left to run", in: daemon)
    }

    /// Removes the submitted tasks among `keys` (a run in progress is cancelled, reason `removed`),
    /// their files and their records.
    func withdraw(_ keys: Set<TaskKey>, reason: String, in daemon: isolated Daemon) {
        let keys = keys.filter { $0.kind == SubmittedTaskFile.kind && daemon.scheduler.tasks[$0] != nil }
        guard !keys.isEmpty else { return }
        // Each removed as a reload without it would: the others are not looked at.
        var actions: [SchedulerAction] = []
        for key in keys.sorted() {
            guard let definition = daemon.scheduler.tasks[key]?.definition else { continue }
            actions += daemon.scheduler.remove(key, at: daemon.clock.now()).actions
            daemon.component(MachineLink.self).configure(removing: definition, in: daemon)
        }
        daemon.perform(actions)
        let folder = self.folder
        let journal = daemon.journal
        for key in keys.sorted() {
            journal.daemon(
                .taskSubmitted, 6, "\(key) removed: \(reason)", [("TASK", key.identifier), ("TASK_KIND", key.kind)])
            forgetRecord(key, daemon)
            Task {
                if let problem = await Thread.run({ folder.remove(key.identifier) }) {
                    journal.daemon(.stateError, 4, problem)
                }
            }
        }
    }

    /// Drops the task's record, in memory and (once the store has written it) on disk.
    private func forgetRecord(_ key: TaskKey, _ daemon: isolated Daemon) {
        daemon.history.forget(key)
        let folder = self.folder
        daemon.store.whenDurable(daemon.store.add([])) { folder.removeRecord(key.identifier) }
    }

    /// The submitted tasks in effect, for a reload to keep.
    func tasks(in daemon: isolated Daemon) -> [TaskDefinition] {
        daemon.scheduler.tasks.values.map(\.definition).filter { $0.key.kind == SubmittedTaskFile.kind }
    }

    /// At start: removes the submitted tasks that are spent already (their one time ran before the
    /// last stop).
    func retireSpentAtStart(in daemon: isolated Daemon) {
        let spent = tasks(in: daemon).map(\.key).filter { daemon.scheduler.tasks[$0]?.isSpent == true }
        withdraw(Set(spent), reason: "spent: it ran before taskd stopped", in: daemon)
    }
}
