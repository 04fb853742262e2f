import Synchronization
import TaskdConfig
import TaskdProtocol

/// etcd's v3 API through its gRPC service (protobuf over HTTP/2, on every client port), over kept
/// libcurl connections: one request is one round trip on a connection already open, with TLS and
/// client certificates from `FleetSettings` (the certificate's CN is the etcd user, as for etcdctl). Each call blocks its thread for the length
/// of the request (when a member does not answer, its timeouts, then the next member's): call it
/// on a Dispatch queue or a thread of the client's, never on the pool.
///
/// A call goes to one member at a time, the last that answered first: a member that is down costs
/// the first call after it went one timeout, not every call. A write whose answer was lost may
/// have been made: the callers' transactions are written so that doing one twice is harmless.
public final class EtcdRPC: Sendable {
    /// The members' base URLs (`http://HOST:PORT`, `https://…`).
    public let endpoints: [String]
    let settings: FleetSettings
    /// How long one request may take in all, and to connect, ms.
    let timeoutMS: Int
    let connectTimeoutMS: Int
    /// The member that answered last, first in line for the next call.
    let preferred = Mutex(0)
    /// Connections not in use, by member: a call takes one (or makes one) and puts it back.
    private let idle = Mutex<[Int: [HTTPConnection]]>([:])

    public init(_ settings: FleetSettings, timeoutMS: Int = 2000, connectTimeoutMS: Int = 1000) {
        self.settings = settings
        let tls = settings.caCert != nil || settings.cert != nil
        endpoints = (settings.endpoints.isEmpty ? ["127.0.0.1:2379"] : settings.endpoints).map {
            Self.baseURL($0, tls: tls)
        }
        self.timeoutMS = timeoutMS
        self.connectTimeoutMS = connectTimeoutMS
    }

    /// An endpoint as `FleetEndpoints=` gives it as a base URL: `HOST:PORT` gets `https://` when
    /// TLS files are set (as etcdctl dials it), else `http://`.
    public static func baseURL(_ endpoint: String, tls: Bool) -> String {
        var url = endpoint.contains("://") ? endpoint : (tls ? "https://" : "http://") + endpoint
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Sends `request` to one member after another until one answers: the answer as JSON (a
    /// stream's first message). etcd's own answers (a lease it does not know, a refusal) are not
    /// tried elsewhere.
    public func call(_ request: EtcdRequest) throws(FleetError) -> JSONValue {
        let first = preferred.withLock { $0 }
        var failure = FleetError("etcd: no endpoint")
        for attempt in 0..<endpoints.count {
            let index = (first + attempt) % endpoints.count
            do throws(FleetError) {
                let answer = try send(request, to: index)
                if attempt > 0 { preferred.withLock { $0 = index } }
                return answer
            } catch {
                if error.kind != .unreachable { throw error }
                failure = error
            }
        }
        throw failure
    }

    /// One request to member `index`, on one of its kept connections.
    func send(_ request: EtcdRequest, to index: Int) throws(FleetError) -> JSONValue {
        let endpoint = endpoints[index]
        guard let message = Protobuf.encode(request.body, as: request.message) else {
            throw FleetError("etcd: a request taskd cannot encode: \(request.body)", kind: .refused)
        }
        guard let connection = take(index) else { throw FleetError("etcd: \(endpoint): curl could not start") }
        var bytes: [UInt8] = []
        let outcome = connection.post(
            endpoint + request.path, Protobuf.frame(message), timeoutMS: timeoutMS, connectTimeoutMS: connectTimeoutMS
        ) { piece in
            if let piece { bytes.append(contentsOf: piece) }
            return bytes.count < 16 << 20
        }
        guard outcome.code == 0 else {
            // The connection may be half-used: it is dropped, and the next call makes a new one.
            throw FleetError.transport(code: outcome.code, text: outcome.errorText, endpoint: endpoint)
        }
        put(connection, back: index)
        if let error = FleetError.answered(
            httpStatus: outcome.status, grpcStatus: outcome.grpcStatus, message: outcome.grpcMessage, endpoint: endpoint
        ) {
            throw error
        }
        guard let first = Protobuf.frames(&bytes).first, let frame = first,
            let answer = Protobuf.decode(frame, as: request.answer)
        else { throw FleetError("etcd: \(endpoint): an answer that is not a \(request.answer)") }
        return answer
    }

    private func take(_ index: Int) -> HTTPConnection? {
        idle.withLock { $0[index]?.popLast() } ?? HTTPConnection(settings)
    }

    private func put(_ connection: HTTPConnection, back index: Int) {
        idle.withLock { idle in
            if idle[index, default: []].count < 4 { idle[index, default: []].append(connection) }
        }
    }

    /// A new lease of `seconds`: its id.
    public func grant(seconds: Int) throws(FleetError) -> Int64 {
        guard let id = EtcdRequest.int(try call(.grant(seconds: seconds))["ID"]), id != 0 else {
            throw FleetError("etcd: a lease grant answered no lease id")
        }
        return id
    }

    /// Renews `lease` once: the seconds it now has left (`leaseGone` if it expired: etcd answers a
    /// keep-alive of an unknown lease with no TTL).
    public func keepAlive(_ lease: Int64) throws(FleetError) -> Int {
        guard let ttl = EtcdRequest.int(try call(.keepAlive(lease))["TTL"]), ttl > 0 else {
            throw FleetError("etcd: lease \(String(lease, radix: 16)) is gone", kind: .leaseGone)
        }
        return Int(ttl)
    }

    /// Revokes `lease`: every key on it goes.
    public func revoke(_ lease: Int64) throws(FleetError) { _ = try call(.revoke(lease)) }

    /// One transaction: whether its comparisons held, the revision it ran at, and its responses.
    public func transaction(_ txn: EtcdTransaction) throws(FleetError) -> EtcdTransaction.Answer {
        EtcdTransaction.Answer(try call(.txn(txn)))
    }

    /// The keys under `prefix`, oldest first (by create revision).
    public func list(prefix: String) throws(FleetError) -> [EtcdKeyValue] {
        EtcdKeyValue.list(try call(.list(prefix: prefix)))
    }
}
