import TaskScheduling

/// Where a task runs when several hosts share it (`fleet:`, `Fleet=`): `.host` (each host), `.once`
/// (one host of the fleet per calendar slot) or `.max(n)` (at most n hosts at a time), coordinated
/// through etcd (`[Daemon] FleetEndpoints=`).
public typealias TaskFleet = TaskScheduling.FleetMode
