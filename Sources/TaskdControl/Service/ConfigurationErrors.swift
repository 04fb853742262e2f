/// A configuration that failed to load: its errors, each as file:line: message.
public protocol ConfigurationErrors: Error {
    var errors: [String] { get }
}
