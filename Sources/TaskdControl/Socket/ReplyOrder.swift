/// Keeps a connection's replies in the order of its calls, whenever each is answered: every call
/// that expects a reply takes a slot; replies to the oldest open slot go out at once, replies to
/// later slots wait until every slot before theirs has had its final reply. A pure state machine:
/// `ControlConnection` writes the bytes `answer` returns.
struct ReplyOrder: Sendable, Equatable {
    /// The next slot to hand out, and the oldest slot without its final reply.
    private var next: UInt64 = 0
    private var head: UInt64 = 0
    /// Replies to slots after `head`, waiting their turn: the bytes, and whether the last was final.
    private var waiting: [UInt64: Held] = [:]

    private struct Held: Sendable, Equatable {
        var bytes: [UInt8]
        var final: Bool
    }

    /// Calls answered by no final reply yet.
    var outstanding: Int { Int(next - head) }

    /// A call that expects replies arrived: its slot.
    mutating func open() -> UInt64 {
        defer { next += 1 }
        return next
    }

    /// A reply (`final` unless it continues a `more` call) to `slot`: the bytes to write now, in
    /// order, which are empty when earlier slots are still open. A reply to a closed slot is dropped.
    mutating func answer(_ slot: UInt64, _ bytes: [UInt8], final: Bool) -> [UInt8] {
        guard slot >= head, slot < next else { return [] }
        guard slot == head else {
            waiting[slot, default: Held(bytes: [], final: false)].bytes += bytes
            if final { waiting[slot]!.final = true }
            return []
        }
        guard final else { return bytes }
        var out = bytes
        head += 1
        while let held = waiting.removeValue(forKey: head) {
            out += held.bytes
            guard held.final else { break }
            head += 1
        }
        return out
    }
}
