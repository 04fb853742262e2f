import CTaskdCurl
import TaskdConfig

/// One kept HTTP/2 connection (a curl easy handle, with its TLS settings) for gRPC calls: requests
/// on it reuse the connection to the same member. Used by one thread at a time: `EtcdRPC` lends
/// its idle ones out under its lock, and the watch owns one of its own.
final class HTTPConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    /// A handle with `settings`' CA and client certificate; nil if curl could not make one.
    init?(_ settings: FleetSettings) {
        guard let handle = taskd_http_new(settings.caCert, settings.cert, settings.key) else { return nil }
        self.handle = handle
    }

    deinit { taskd_http_free(handle) }

    /// What a request ended with: curl's result (0: an answer came), the HTTP status, and the
    /// gRPC status and message (-1: none came).
    struct Outcome {
        var code: Int32
        var status: Int
        var grpcStatus: Int32 = -1
        var grpcMessage = ""
        var errorText: String { String(cString: taskd_http_strerror(code)) }
    }

    /// POSTs `body` to `url`, blocking; `sink` gets each piece of the answer as it comes and nil
    /// now and then while it waits: false aborts the request.
    func post(
        _ url: String, _ body: [UInt8], timeoutMS: Int, connectTimeoutMS: Int,
        sink: (UnsafeRawBufferPointer?) -> Bool
    ) -> Outcome {
        withoutActuallyEscaping(sink) { sink in
            let box = SinkBox(sink)
            var status = 0
            let code = body.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { text in
                    taskd_http_post(
                        handle, url, text.baseAddress, text.count, timeoutMS, connectTimeoutMS,
                        { context, data, length in
                            let box = Unmanaged<SinkBox>.fromOpaque(context!).takeUnretainedValue()
                            let piece = data.map { UnsafeRawBufferPointer(start: $0, count: length) }
                            return box.sink(piece) ? 0 : 1
                        }, Unmanaged.passUnretained(box).toOpaque(), &status)
                }
            }
            return withExtendedLifetime(box) {
                Outcome(
                    code: code, status: status, grpcStatus: taskd_http_grpc_status(handle),
                    grpcMessage: String(cString: taskd_http_grpc_message(handle)))
            }
        }
    }

    /// POSTs `body` and collects the whole answer (at most 16 MiB).
    func post(_ url: String, _ body: [UInt8], timeoutMS: Int, connectTimeoutMS: Int) -> (Outcome, [UInt8]) {
        var answer: [UInt8] = []
        let outcome = post(url, body, timeoutMS: timeoutMS, connectTimeoutMS: connectTimeoutMS) { piece in
            if let piece { answer.append(contentsOf: piece) }
            return answer.count < 16 << 20
        }
        return (outcome, answer)
    }

    private final class SinkBox {
        let sink: (UnsafeRawBufferPointer?) -> Bool
        init(_ sink: @escaping (UnsafeRawBufferPointer?) -> Bool) { self.sink = sink }
    }
}
