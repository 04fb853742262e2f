/// The reply that tells runs (`Wake`, `Cancel`, `History`): written straight to bytes, as it is
/// the reply of every wake.
public struct RunsReply: VarlinkReplyParameters, Hashable {
    public var runs: [RunInfo]

    public init(runs: [RunInfo]) { self.runs = runs }

    public func encodedParameters() -> [UInt8] {
        var parameters = JSONObjectWriter()
        parameters.json("runs", JSONObjectWriter.array(runs.map(\.encodedJSON)))
        return parameters.finish()
    }
}
