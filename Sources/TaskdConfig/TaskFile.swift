import TaskScheduling

/// The settings one `.task` file (and its drop-ins) makes; nil means "not set here".
public struct TaskFile: Hashable, Sendable {
    public var path: String
    public var kind: String?
    public var identifier: String?
    public var description: String?
    public var budget: TimeSpan?
    public var cancelGrace: TimeSpan?
    public var onStartup: [TimeSpan]?
    public var onUnitActive: [TimeSpan]?
    public var onCalendar: [CalendarSpec]?
    public var onUnitInactive: [TimeSpan]?
    public var randomizedDelay: TimeSpan?
    public var fixedRandomDelay: Bool?
    public var persistent: Bool?
    public var overlap: OverlapPolicy?
    public var queueLimit: Int?
    public var maxAttempts: Int?
    public var retryBackoff: TimeSpan?
    public var retryBackoffMax: TimeSpan?
    public var retryJitter: Double?
    public var retryPreventExitStatus: [Int32]?
    public var historySize: Int?
    public var wakeUsers: [UInt32]?
    public var wakeGroups: [UInt32]?
    public var execStart: [String]?
    public var execStartLocation: SourceLocation?
    public var environment: [String] = []
    public var workingDirectory: String?
    public var killSignal: Int32?
    var user: Identities.User?
    var userLocation: SourceLocation?
    /// Where the first `OnUnitActiveSec=`/`OnUnitInactiveSec=` is, for the warning when nothing starts it.
    var relativeTimerLocation: SourceLocation?
    public var group: UInt32?
    public var supplementaryGroups: [UInt32]?
    public var umask: UInt32?
    public var nice: Int32?
    public var logRateLimitInterval: TimeSpan?
    public var logRateLimitBurst: Int?

    public init(path: String) { self.path = path }

    /// The file name without `.task`: the default identifier.
    public var baseName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(".task") ? String(name.dropLast(5)) : name
    }

    /// User=, Group=, SupplementaryGroups=, UMask=, Nice= as systemd applies them: the gid is Group=
    /// or the user's primary group; with User=, the groups are the user's (initgroups) plus
    /// SupplementaryGroups=; without it, SupplementaryGroups= alone when given.
    var identity: ExecIdentity {
        var identity = ExecIdentity()
        identity.uid = user?.uid
        identity.gid = group ?? user?.gid
        if let user {
            identity.userName = user.name
            identity.home = user.home
            identity.shell = user.shell
            let initial = identity.gid.map { Identities.groupList(of: user.name, gid: $0) } ?? []
            identity.groups = initial + (supplementaryGroups ?? []).filter { !initial.contains($0) }
        } else if let supplementaryGroups {
            identity.groups = supplementaryGroups
        }
        identity.umask = umask
        identity.nice = nice
        return identity
    }

    /// The definition this file describes, on top of `base` (a Swift task's code-given definition), if any.
    public func definition(base: TaskDefinition?) -> TaskDefinition {
        let key = TaskKey(kind: kind ?? base?.key.kind ?? TaskKind.processing, identifier: identifier ?? baseName)
        let handler: HandlerSpec
        if let execStart {
            handler = .command(
                CommandSpec(
                    argv: execStart, environment: environment, workingDirectory: workingDirectory,
                    killSignal: killSignal ?? 15, identity: identity,
                    outputLimit: OutputRateLimit(
                        interval: logRateLimitInterval ?? OutputRateLimit.standard.interval,
                        burst: logRateLimitBurst ?? OutputRateLimit.standard.burst)))
        } else {
            handler = .swift
        }
        var definition = TaskDefinition(
            key: key, description: description ?? base?.description ?? "",
            budget: budget ?? base?.budget, cancelGrace: cancelGrace ?? base?.cancelGrace,
            onStartup: onStartup ?? base?.onStartup ?? [], onUnitActive: onUnitActive ?? base?.onUnitActive ?? [],
            onCalendar: onCalendar ?? base?.onCalendar ?? [],
            handler: handler, source: path)
        definition.onUnitInactive = onUnitInactive ?? base?.onUnitInactive ?? []
        definition.randomizedDelay = randomizedDelay ?? base?.randomizedDelay ?? .zero
        definition.fixedRandomDelay = fixedRandomDelay ?? base?.fixedRandomDelay ?? false
        definition.persistent = persistent ?? base?.persistent ?? false
        definition.overlap = overlap ?? base?.overlap ?? .coalesce
        definition.queueLimit = queueLimit ?? base?.queueLimit ?? definition.queueLimit
        var retry = base?.retry ?? RetryPolicy()
        if let maxAttempts { retry.maxAttempts = maxAttempts }
        if let retryBackoff { retry.backoff = retryBackoff }
        if let retryBackoffMax { retry.backoffMax = retryBackoffMax }
        if let retryJitter { retry.jitter = retryJitter }
        if let retryPreventExitStatus { retry.preventExitStatus = retryPreventExitStatus }
        definition.retry = retry
        definition.historySize = historySize ?? base?.historySize ?? definition.historySize
        if wakeUsers != nil || wakeGroups != nil {
            definition.wakeAccess = AccessList(users: wakeUsers ?? [], groups: wakeGroups ?? [])
        } else {
            definition.wakeAccess = base?.wakeAccess
        }
        return definition
    }
}
