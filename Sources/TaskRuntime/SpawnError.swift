/// Why a command could not be started.
public struct SpawnError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
