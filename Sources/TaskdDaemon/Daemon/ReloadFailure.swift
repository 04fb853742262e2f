/// A reload that changed nothing: the new configuration's errors, each as file:line: message.
package struct ReloadFailure: Error, Sendable {
    package var errors: [String]
}
