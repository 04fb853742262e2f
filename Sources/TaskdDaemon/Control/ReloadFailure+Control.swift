import TaskdControl

/// A failed reload's errors, as `InvalidConfiguration` reports them.
extension ReloadFailure: ConfigurationErrors {}
