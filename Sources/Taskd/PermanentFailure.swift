import TaskdDaemon

/// Thrown by a Swift handler to fail its run and ask for no retry (a command exits with 100
/// instead). Any other error is retried per `MaxAttempts=`.
public typealias PermanentFailure = TaskdDaemon.PermanentFailure
