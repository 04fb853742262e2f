/// Thrown by `TaskContext.checkpoint(_:)` when taskd does not keep the checkpoint: it is over
/// 64 KiB of JSON, or the run is no longer its task's own (cancelled and replaced, reconfigured).
public struct CheckpointRefused: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}
