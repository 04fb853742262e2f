import Synchronization
import TaskdIO
import TaskdProtocol
import TaskdSystem
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket with a real Unix socket and a blocking client: which calls are served at once
/// on the event loop's thread, and which reach a serving task through `connections`.
@Suite("Control socket: calls served at once, and the rest by a task")
struct ControlSocketServerTests {
    /// What `serveAtOnce` was offered: the method, and whether it ran on the loop's thread.
    final class Offers: Sendable {
        let list = Mutex<[(method: String, onLoop: Bool)]>([])
    }

    @Test(
        "a lone call is offered on the loop's thread; one declined hands the connection to a task for good",
        .timeLimit(.minutes(1)))
    func servedAtOnceThenByTask() async throws {
        let path = "/tmp/taskd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let server = try ControlSocketServer(path: path, onReject: { _, _ in })
        let offers = Offers()
        server.start { call, connection in
            offers.list.withLock { $0.append((call.method, EventLoop.shared.isCurrent)) }
            guard call.method == "test.Echo" else { return false }
            connection.send(VarlinkReply(parameters: ["by": "loop"]))
            return true
        }
        let served = Task {
            await withTaskGroup(of: Void.self) { group -> Int in
                var connections = 0
                for await connection in server.connections {
                    connections += 1
                    group.addTask {
                        for await call in connection.calls {
                            connection.send(VarlinkReply(parameters: ["by": "task", "method": .string(call.method)]))
                        }
                    }
                }
                return connections
            }
        }
        // Blocking clients, on a thread of their own (not the cooperative pool).
        let replies = await Thread.run { () -> [String] in
            var by: [String] = []
            func ask(_ client: VarlinkClient, _ method: String) {
                let reply = try? client.call(VarlinkCall(method: method))
                by.append(reply?.parameters["by"]?.stringValue ?? "none")
            }
            guard let first = try? VarlinkClient(path: path), let second = try? VarlinkClient(path: path) else {
                return ["unreachable"]
            }
            ask(first, "test.Echo")
            ask(first, "test.Other")
            ask(first, "test.Echo")
            ask(second, "test.Echo")
            return by
        }
        server.stop()
        let connections = await served.value
        #expect(replies == ["loop", "task", "task", "loop"])
        let offered = offers.list.withLock { $0 }
        let methods = offered.map { $0.method }
        let onLoop = offered.filter { $0.onLoop }.count
        // The first connection's third call went to its task unoffered; the last is the second's.
        #expect(methods == ["test.Echo", "test.Other", "test.Echo"])
        #expect(onLoop == offered.count, "offered on the event loop's thread")
        #expect(connections == 1, "a connection whose calls were all served at once needs no task")
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
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(connected == 0)
        let request = VarlinkCall(method: "test.Big").encoded + [0]
        #expect(request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == request.count)
        let big = String(repeating: "x", count: 2 << 20)
        let sent = Atomic(false)
        server.start { call, connection in
            connection.send(VarlinkReply(parameters: ["big": .string(big)]))
            sent.store(true, ordering: .releasing)
            return true
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
