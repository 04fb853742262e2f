/// A key of an array element or of `super`, for coding paths.
struct JSONCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    static let `super` = JSONCodingKey(stringValue: "super")
}
