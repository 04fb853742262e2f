import Synchronization
import TaskRuntime
import TaskdConfig
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// etcd's v3 API through the official client, `etcdctl`, run once per request: TLS, client
/// certificates and etcd's users come with it, and taskd links no gRPC or TLS library. Each call
/// blocks its thread for the length of the request (about 30 ms; when a member does not answer,
/// its timeouts, then the next member's): call it on a Dispatch queue, never on the pool.
///
/// A call goes to one member at a time, the last that answered first: a member that is down costs
/// the first call after it went one dial timeout, not every call (etcdctl given every endpoint
/// balances over them, and fails a write sent to the dead one). A write whose answer was lost may
/// have been made: the callers' transactions are written so that doing one twice is harmless.
public final class Etcdctl: Sendable {
    let executable: String
    let global: [String]
    let endpoints: [String]
    /// The member that answered last, first in line for the next call.
    private let preferred = Mutex(0)
    /// How long one call may take in all, ms.
    let timeoutMS: Int32

    public init(_ settings: FleetSettings, commandTimeoutMS: Int = 2000, dialTimeoutMS: Int = 1000) {
        executable = settings.etcdctl ?? Self.find("etcdctl") ?? "/usr/bin/etcdctl"
        var global = [
            "--command-timeout=\(commandTimeoutMS)ms", "--dial-timeout=\(dialTimeoutMS)ms", "--write-out=json",
        ]
        if let ca = settings.caCert { global.append("--cacert=" + ca) }
        if let cert = settings.cert { global.append("--cert=" + cert) }
        if let key = settings.key { global.append("--key=" + key) }
        self.global = global
        endpoints = settings.endpoints.isEmpty ? ["127.0.0.1:2379"] : settings.endpoints
        // etcdctl's own timeouts do not bound `txn` and `lease keep-alive` against a member that
        // is down (seen with 3.4: they wait for ever): a call is killed a little after them.
        timeoutMS = Int32(commandTimeoutMS + dialTimeoutMS + 300)
    }

    /// Runs `etcdctl GLOBAL ARGUMENTS` with `input` on its stdin against one member after another,
    /// until one answers: its JSON answer. etcd's own refusals (a lease it does not know) are not
    /// tried elsewhere.
    func call(_ arguments: [String], input: String = "") throws(FleetError) -> JSONValue {
        let first = preferred.withLock { $0 }
        var failure = FleetError("etcd: no endpoint")
        for attempt in 0..<endpoints.count {
            let index = (first + attempt) % endpoints.count
            let outcome = ToolProcess.run(
                [executable, "--endpoints=" + endpoints[index]] + global + arguments, input: Array(input.utf8),
                environment: ["ETCDCTL_API=3", "PATH=/usr/bin:/bin"], timeoutMS: timeoutMS)
            let errors = outcome.errorText.split(separator: "\n").last.map(String.init) ?? ""
            guard outcome.status == 0 else {
                let why =
                    outcome.problem ?? (errors.isEmpty ? "etcdctl exited with status \(outcome.status ?? -1)" : errors)
                failure = FleetError(
                    "etcd: \(endpoints[index]): \(why)", leaseGone: why.contains("requested lease not found"),
                    refused: why.contains("permission denied") || why.contains("authentication failed"))
                if failure.leaseGone || failure.refused { throw failure }
                continue
            }
            if attempt > 0 { preferred.withLock { $0 = index } }
            do {
                return try JSONParser.parse(outcome.output)
            } catch {
                throw FleetError("etcd: etcdctl's answer is not JSON: \(outcome.outputText.prefix(200))")
            }
        }
        throw failure
    }

    /// A new lease of `seconds`: its id.
    public func grant(seconds: Int) throws(FleetError) -> Int64 {
        guard let id = try call(["lease", "grant", String(seconds)])["ID"]?.intValue, id != 0 else {
            throw FleetError("etcd: a lease grant answered no lease id")
        }
        return id
    }

    /// Renews `lease` once: the seconds it now has left (`leaseGone` if it expired).
    public func keepAlive(_ lease: Int64) throws(FleetError) -> Int {
        let answer = try call(["lease", "keep-alive", "--once", String(lease, radix: 16)])
        guard let ttl = answer["TTL"]?.intValue, ttl > 0 else {
            throw FleetError("etcd: lease \(String(lease, radix: 16)) is gone", leaseGone: true)
        }
        return Int(ttl)
    }

    /// Revokes `lease`: every key on it goes.
    public func revoke(_ lease: Int64) throws(FleetError) {
        _ = try call(["lease", "revoke", String(lease, radix: 16)])
    }

    /// One transaction: whether its comparisons held, the revision it ran at, and its responses.
    public func transaction(_ txn: EtcdTransaction) throws(FleetError) -> EtcdTransaction.Answer {
        let answer = try call(["txn"], input: txn.text)
        return EtcdTransaction.Answer(
            succeeded: answer["succeeded"]?.boolValue ?? false,
            revision: UInt64(clamping: answer["header"]?["revision"]?.intValue ?? 0),
            responses: answer["responses"]?.arrayValue ?? [])
    }

    /// The keys under `prefix`, oldest first (by create revision).
    public func list(prefix: String) throws(FleetError) -> [EtcdKeyValue] {
        let answer = try call(["get", "--prefix", "--sort-by=CREATE", "--order=ASCEND", prefix])
        return EtcdKeyValue.list(answer)
    }

    static func find(_ name: String) -> String? {
        for folder in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let path = folder + "/" + name
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }
}
