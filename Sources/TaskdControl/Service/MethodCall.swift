import TaskdProtocol

/// One call as its method's handler serves it: who called, whether it asked for `more`, and where
/// its typed replies go, now or later, from any thread.
public struct MethodCall<Reply: VarlinkReplyParameters>: Sendable {
    public let channel: any ReplyChannel
    public let more: Bool

    public init(channel: any ReplyChannel, more: Bool) {
        self.channel = channel
        self.more = more
    }

    public var peer: PeerCredentials { channel.peer }
    /// True once the client has gone.
    public var isClosed: Bool { channel.isClosed }

    /// Sends `reply`, the last one unless `continues`.
    public func reply(_ reply: Reply, continues: Bool = false) {
        do {
            channel.send(VarlinkReply(encodedParameters: try reply.encodedParameters(), continues: continues))
        } catch {
            fail(
                VarlinkError(
                    SchedulerInterface.invalidRequest, ["reason": .string("cannot encode the reply: \(error)")]))
        }
    }

    /// Answers with an error, the call's last reply.
    public func fail(_ error: VarlinkError) { channel.send(.error(error.name, error.parameters)) }
}
