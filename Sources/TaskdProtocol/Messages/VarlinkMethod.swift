/// One method of a Varlink interface: its full name and the types of its parameters and its reply,
/// which the server decodes and encodes and the client encodes and decodes alike.
public protocol VarlinkMethod {
    associatedtype Parameters: VarlinkParameters
    associatedtype Reply: VarlinkReplyParameters
    /// `interface.Method`, as a call names it.
    static var name: String { get }
}
