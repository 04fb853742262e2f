/// The parameters of a method that takes only a target (`Cancel`, `Resume`).
public struct TargetParameters: VarlinkParameters, Hashable {
    public var target: String

    public init(target: String) { self.target = target }

    public func validate() throws(ParameterError) { try ParameterError.nonEmpty(target, "target") }
}
