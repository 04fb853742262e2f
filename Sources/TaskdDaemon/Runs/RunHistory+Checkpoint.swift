import TaskScheduling
import TaskdProtocol

/// Checkpoints: a run keeps one in its task's record (`context.checkpoint`, a `CHECKPOINT=` notify
/// line), on disk and synced before a Swift handler's call returns; the task's next run, whatever
/// starts it, is handed the last one (`ResumeFrom=checkpoint`); a run that completes clears it.
extension RunHistory {
    /// `run` (nil: no longer in progress) keeps `value` as its task's checkpoint. `done` gets nil
    /// once it is on disk, or why it was refused (the run no longer its task's own, the value too large).
    func checkpoint(
        _ value: String, of runID: String, run: Run?, at now: ClockReading, journal: EventJournal,
        done: (@Sendable (String?) -> Void)? = nil
    ) {
        guard let run, run.isActive, !run.fenced else {
            done?("run \(runID.prefix(8)) is no longer its task's own run: its checkpoint is not kept")
            return
        }
        let bytes = value.utf8.count
        guard bytes <= TaskCheckpoint.maxBytes else {
            let why = "a checkpoint of \(bytes) bytes is refused: at most \(TaskCheckpoint.maxBytes) are kept"
            journal.daemon(
                .checkpoint, 4, "\(run.key.identifier): run \(runID.prefix(8)): \(why)",
                [("TASK", run.key.identifier), ("TASK_RUN_ID", runID), ("TASK_CHECKPOINT_BYTES", String(bytes))])
            done?(why)
            return
        }
        keep(TaskCheckpoint(value: value, runID: runID, atUSec: now.realtime), for: run.key) { done?(nil) }
    }

    /// The run as its handler is to see it: handed its task's checkpoint, if one is kept and the
    /// task (`definition`) says `ResumeFrom=checkpoint`; the resumption is journaled.
    func resuming(_ run: Run, _ definition: TaskDefinition?, journal: EventJournal) -> Run {
        guard let checkpoint = records[run.key]?.checkpoint, definition?.resumeFrom == .checkpoint else { return run }
        var run = run
        run.checkpoint = checkpoint.value
        run.checkpointRunID = checkpoint.runID
        let name = run.key.identifier
        let id = run.id
        journal.daemon(.checkpoint, 6) {
            (
                "\(name): run \(id.prefix(8)) resumes from the checkpoint run \(checkpoint.runID.prefix(8)) kept "
                    + "(\(checkpoint.value.utf8.count) bytes)",
                [
                    ("TASK", name), ("TASK_RUN_ID", id), ("TASK_CHECKPOINT_RUN_ID", checkpoint.runID),
                    ("TASK_CHECKPOINT_BYTES", String(checkpoint.value.utf8.count)),
                    ("TASK_CHECKPOINT_USEC", String(checkpoint.atUSec)),
                ]
            )
        }
        return run
    }
}
