/// A logind inhibitor lock taskd may hold.
public enum SleepInhibitor: String, Hashable, Sendable { case delay, block }
