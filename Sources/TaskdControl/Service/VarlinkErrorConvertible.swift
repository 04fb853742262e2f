/// An error a handler throws that has a Varlink error of its own (the daemon's refusals).
public protocol VarlinkErrorConvertible: Error {
    var varlinkError: VarlinkError { get }
}
