import TaskScheduling
import TaskdProtocol

/// An acknowledged wake of one task, kept in `STATE/wakes.log` from before the acknowledgement
/// until the run that answers it has ended for good; replayed after a crash (at-least-once).
package struct WakeRecord: Hashable, Sendable {
    package var id: String
    var key: TaskKey
    var wakeID: String?
    var payload: String?
    /// When it was acknowledged, CLOCK_REALTIME µs.
    package var acknowledgedUSec: UInt64

    /// One line of the log: `{"add": …}`.
    var line: [UInt8] {
        var o = JSONObjectWriter()
        o.string("add", id)
        o.int("atUSec", acknowledgedUSec)
        o.string("kind", key.kind)
        o.string("payload", payload)
        o.string("task", key.identifier)
        o.string("wakeId", wakeID)
        return o.finish() + [UInt8(ascii: "\n")]
    }

    /// The line that settles record `id`.
    static func settleLine(_ id: String) -> [UInt8] {
        JSONValue.object(["settle": .string(id)]).bytes + [UInt8(ascii: "\n")]
    }

    /// One parsed line: a record added, or the id of one settled; nil if the line is not valid.
    static func parse(_ line: Substring) -> (added: WakeRecord?, settled: String?)? {
        guard let json = try? JSONParser.parse(String(line)) else { return nil }
        if let id = json["settle"]?.stringValue { return (nil, id) }
        guard let id = json["add"]?.stringValue, let kind = json["kind"]?.stringValue,
            let task = json["task"]?.stringValue
        else { return nil }
        let record = WakeRecord(
            id: id, key: TaskKey(kind: kind, identifier: task), wakeID: json["wakeId"]?.stringValue,
            payload: json["payload"]?.stringValue,
            acknowledgedUSec: json["atUSec"]?.intValue.map { UInt64(clamping: $0) } ?? 0)
        return (record, nil)
    }
}

extension Scheduler {
    /// Replays the wakes acknowledged before a crash or stop that had not been answered: the
    /// actions, and the records of those that name a task no longer there.
    mutating func replay(_ wakes: [WakeRecord], at now: ClockReading) -> ([SchedulerAction], dropped: [String]) {
        var actions: [SchedulerAction] = []
        var dropped: [String] = []
        for wake in wakes {
            let (result, more) = self.wake(
                key: wake.key, wakeID: wake.wakeID, payload: wake.payload, record: wake.id,
                acknowledged: wake.acknowledgedUSec, at: now)
            if result == nil { dropped.append(wake.id) }
            actions += more
        }
        return (actions, dropped)
    }
}
