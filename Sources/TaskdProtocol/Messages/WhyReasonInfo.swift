/// The `WhyReason` type of the IDL: one reason a task runs, waits or does not run now.
public struct WhyReasonInfo: Codable, Hashable, Sendable {
    /// stopping, sleeping, paused, running, … (`WhyCode`).
    public var code: String
    public var text: String
    public var runId: String?
    public var atUSec: UInt64?
    /// The journal `MESSAGE_ID` of the entries behind it, where there are some.
    public var messageId: String?

    public init(code: String, text: String, runId: String? = nil, atUSec: UInt64? = nil, messageId: String? = nil) {
        self.code = code
        self.text = text
        self.runId = runId
        self.atUSec = atUSec
        self.messageId = messageId
    }
}
