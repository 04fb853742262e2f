import Synchronization
import TaskdConfig

/// The configuration a test's daemon loads at its next reload: the test sets it, the daemon reads it.
final class ConfigSlot: Sendable {
    private let config: Mutex<LoadedConfig>

    init(_ config: LoadedConfig) { self.config = Mutex(config) }

    /// What the next load returns.
    var value: LoadedConfig {
        get { config.withLock { $0 } }
        set { config.withLock { $0 = newValue } }
    }
}
