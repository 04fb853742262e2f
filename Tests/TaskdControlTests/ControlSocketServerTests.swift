import Synchronization
import TaskdControl
import TaskdIO
import TaskdProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket with a real Unix socket and a blocking client: every call is served on the
/// event loop's thread, in order, and replies leave in the order of the calls however late each comes.
@Suite("Control socket: calls served on the loop, replies in call order")
struct ControlSocketServerTests {
    /// The calls `serve` got: the method, and whether it ran on the loop's thread.
    final class Served: Sendable {
        let list = Mutex<[(method: String, onLoop: Bool)]>([])
        /// Replies held back, to be sent later from another thread.
        let held = Mutex<[CallReply]>([])
    }

    @Test(
        "pipelined calls answered out of order reach the client in call order; oneway calls get no reply",
        .timeLimit(.minutes(1)))
    func repliesKeepCallOrder() async throws {
        let path = "/tmp/taskd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let server = try ControlSocketServer(path: path, onReject: { _, _ in })
        let served = Served()
        server.start { call, reply in
            served.list.withLock { $0.append((call.method, EventLoop.shared.isCurrent)) }
            switch call.method {
            case "test.Later":
                // Answered from another thread once the next call has been answered.
                served.held.withLock { $0.append(reply) }
            case "test.Stream":
                reply.send(VarlinkReply(parameters: ["n": 1], continues: true))
                reply.send(VarlinkReply(parameters: ["n": 2]))
            default:
                reply.send(VarlinkReply(parameters: ["method": .string(call.method)]))
                let held = served.held.withLock { h in
                    defer { h.removeAll() }
                    return h
                }
                for reply in held {
                    _ = Thread.detach { reply.send(VarlinkReply(parameters: ["method": "test.Later"])) }
                }
            }
        }
        // One write with four calls, read back on a thread of its own (not the cooperative pool).
        let received = await Thread.run { () -> [String] in
            let fd = Self.connect(path)
            guard fd >= 0 else { return ["unreachable"] }
            defer { close(fd) }
            let calls = [
                VarlinkCall(method: "test.Later"), VarlinkCall(method: "test.Silent", oneway: true),
                VarlinkCall(method: "test.Now"), VarlinkCall(method: "test.Stream", more: true),
            ]
            let request = Array(calls.map { $0.encoded + [0] }.joined())
            guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { return [] }
            var messages: [String] = []
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while messages.count < 4 {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                buffer += chunk[..<n]
                while let end = buffer.firstIndex(of: 0) {
                    let reply = try? VarlinkReply(message: Array(buffer[..<end]))
                    let p = reply?.parameters
                    messages.append(p?["method"]?.stringValue ?? p?["n"].map { "n=\($0)" } ?? "?")
                    buffer.removeFirst(end + 1)
                }
            }
            return messages
        }
        server.stop()
        #expect(received == ["test.Later", "test.Now", "n=1", "n=2"])
        let methods = served.list.withLock { $0 }
        #expect(methods.map(\.method) == ["test.Later", "test.Silent", "test.Now", "test.Stream"])
        #expect(methods.filter { !$0.onLoop }.isEmpty, "served on the event loop's thread")
    }

    static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    @Test(
        "a reply too big for the socket, sent before the connection is watched, still arrives whole",
        .timeLimit(.minutes(1)))
    func bigReplyBeforeWatching() async throws {
        let path = "/tmp/taskd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let server = try ControlSocketServer(path: path, onReject: { _, _ in })
        // The request waits in the socket before the server accepts: it is read, and answered, by
        // the read that starts the connection, before the connection is registered with the loop.
        // 2 MiB is past the socket's buffer (about 200 KiB here) and under `maxPendingOutput`: the
        // rest must wait for writability, which `watch` then asks for.
        let fd = Self.connect(path)
        #expect(fd >= 0)
        let request = VarlinkCall(method: "test.Big").encoded + [0]
        #expect(request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == request.count)
        let big = String(repeating: "x", count: 2 << 20)
        let sent = Atomic(false)
        server.start { call, reply in
            reply.send(VarlinkReply(parameters: ["big": .string(big)]))
            sent.store(true, ordering: .releasing)
        }
        let received = await Thread.run { () -> Int in
            // Nothing is read until the send has returned: the socket filled and the rest is pending.
            while !sent.load(ordering: .acquiring) { usleep(1_000) }
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { return -1 }
                total += n
                if buffer[n - 1] == 0 { return total }
            }
        }
        close(fd)
        server.stop()
        #expect(received > big.utf8.count)
    }
}
