import TaskdControl

/// The daemon is what the control service drives: its request methods are the protocol's.
extension Daemon: SchedulerControl {}
