/// The places of the concurrency groups (`ConcurrencyGroup=`): for each group, the runs that hold
/// one (ready to start, or running) and the runs that wait for one, in the order they came.
/// Bookkeeping only: `Scheduler+Groups` decides who passes.
struct GroupGate: Sendable {
    private(set) var holders: [String: [String]] = [:]
    private(set) var waiting: [String: [String]] = [:]
    /// Each group's size, from the task definitions (`Scheduler.init`, `reload`).
    var sizes: [String: Int] = [:]

    /// True when a run of `name` that comes now may take a place: one is free and no run waits
    /// before it.
    func isOpen(_ name: String) -> Bool {
        holders[name, default: []].count < sizes[name, default: 1] && waiting[name, default: []].isEmpty
    }

    func holds(_ id: String, in name: String) -> Bool { holders[name]?.contains(id) ?? false }

    mutating func hold(_ id: String, in name: String) { holders[name, default: []].append(id) }

    /// `id` waits for a place in `name`, after those waiting already.
    mutating func enqueue(_ id: String, in name: String) { waiting[name, default: []].append(id) }

    /// `id` leaves its group: it ended, or waits for its conditions again. True if it held a place.
    mutating func leave(_ id: String, from name: String) -> Bool {
        if let i = waiting[name]?.firstIndex(of: id) {
            waiting[name]!.remove(at: i)
            if waiting[name]!.isEmpty { waiting[name] = nil }
            return false
        }
        guard let i = holders[name]?.firstIndex(of: id) else { return false }
        holders[name]!.remove(at: i)
        if holders[name]!.isEmpty { holders[name] = nil }
        return true
    }

    /// The first run waiting in `name`, out of the line and holding a place, if a place is free.
    mutating func admitNext(in name: String) -> String? {
        guard holders[name, default: []].count < sizes[name, default: 1], var line = waiting[name], !line.isEmpty
        else { return nil }
        let id = line.removeFirst()
        waiting[name] = line.isEmpty ? nil : line
        hold(id, in: name)
        return id
    }
}
