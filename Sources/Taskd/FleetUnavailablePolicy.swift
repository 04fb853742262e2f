import TaskScheduling

/// What a run of a `fleet:` `.once` or `.max(n)` task does when etcd cannot be reached to claim it
/// (`FleetUnavailable=`): `.skip` (the default), `.local` or `.wait` (for `.giveUpAfter`, if given).
public typealias FleetUnavailablePolicy = TaskScheduling.FleetUnavailablePolicy
