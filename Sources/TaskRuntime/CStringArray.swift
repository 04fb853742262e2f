/// NUL-terminated copies of strings made in one allocation, with the nil-ended array of pointers
/// to them that `posix_spawn` and `execve` take (argv, envp): one allocation where `strdup` made
/// one per string. A string's bytes end at its first NUL, as a C reader sees them.
enum CStringArray {
    /// Calls `body` with the pointers, valid only during the call.
    static func with<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let total = strings.reduce(0) { $0 + $1.utf8.count + 1 }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        defer { storage.deallocate() }
        var pointers: [UnsafeMutablePointer<CChar>?] = []
        pointers.reserveCapacity(strings.count + 1)
        var next = storage
        for string in strings {
            var string = string
            let count = string.withUTF8 { bytes in
                if let source = bytes.baseAddress {
                    UnsafeMutableRawPointer(next).copyMemory(from: source, byteCount: bytes.count)
                }
                return bytes.count
            }
            next[count] = 0
            pointers.append(next)
            next += count + 1
        }
        pointers.append(nil)
        return body(pointers)
    }
}
