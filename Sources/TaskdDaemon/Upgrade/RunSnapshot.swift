import TaskScheduling

/// A run in progress as one image of taskd hands it to the next (`taskctl upgrade`), and as
/// `active-runs.json` and the run keeper keep it: the run's document (`Run: Codable`), whole,
/// instants as they were (CLOCK_MONOTONIC goes on across `execve`).
package struct RunSnapshot: Codable, Sendable, Hashable {
    /// The run; nil when its document names what this taskd does not know (a newer taskd's
    /// trigger or reason): such a run cannot be taken over.
    private(set) var run: Run?
    /// The run's id and its task's identifier, read even when the rest cannot be.
    let id: String
    let identifier: String

    /// Nil for a run that has not started or has ended: only active runs are handed over. The
    /// snapshot leaves out the run's `checkpoint` (up to 64 KiB, handed to the handler as it
    /// started and not read after; `checkpointRunID` is kept): `active-runs.json` is rewritten
    /// up to every 10 ms, and the keeper's copy is at most 64 KiB.
    init?(_ run: Run) {
        guard run.started != nil, run.isActive else { return nil }
        var run = run
        run.checkpoint = nil
        self.run = run
        id = run.id
        identifier = run.key.identifier
    }

    /// The acknowledged wakes the run answers.
    var records: [String] {
        get { run?.records ?? [] }
        set { run?.records = newValue }
    }

    private enum CodingKeys: String, CodingKey { case id, identifier }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        identifier = try c.decode(String.self, forKey: .identifier)
        run = try? Run(from: decoder)
    }

    package func encode(to encoder: any Encoder) throws {
        if let run { return try run.encode(to: encoder) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(identifier, forKey: .identifier)
    }
}
