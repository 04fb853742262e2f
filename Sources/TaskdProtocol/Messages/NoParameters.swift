/// The parameters of a method that takes none: any parameter is unknown.
public struct NoParameters: VarlinkParameters, Hashable {
    public init() {}

    /// Names no member, so that every one present is unknown.
    private struct NoKey: CodingKey {
        var stringValue: String { "" }
        var intValue: Int? { nil }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: NoKey.self) }
    public func encode(to encoder: any Encoder) throws { _ = encoder.container(keyedBy: NoKey.self) }
}
