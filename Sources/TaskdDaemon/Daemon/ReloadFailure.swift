/// A reload that changed nothing: the new configuration's errors, each as file:line: message.
struct ReloadFailure: Error, Sendable {
    var errors: [String]
}
