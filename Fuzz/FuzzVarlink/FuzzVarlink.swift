import TaskdProtocol

/// libFuzzer entry (scripts/fuzz): bytes as a client would send them, through the framer (in two
/// chunks, to split messages anywhere) and every complete message through request decoding.
/// A decoded call must encode and decode to the same call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlink(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var framer = VarlinkFramer(maxMessageSize: 4096)
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    for chunk in [bytes[..<cut], bytes[cut...]] {
        framer.append(chunk)
        while true {
            guard let message = try? framer.next() else { return 0 }  // too large: the stream ends
            guard let call = try? VarlinkCall(message: message) else { continue }
            guard let again = try? VarlinkCall(message: call.encoded), again == call else {
                fatalError("a decoded call does not survive encoding: \(call)")
            }
        }
    }
    return 0
}
