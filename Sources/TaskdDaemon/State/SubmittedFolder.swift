import TaskScheduling
import TaskdConfig
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Where submitted tasks are kept (`taskctl submit`): `submitted/NAME.task` in the state folder,
/// written and synced before the task is added, removed once it is spent. Its calls block: the
/// daemon makes them off the event loop. With no directory (TaskdTesting) nothing is kept.
package struct SubmittedFolder: Sendable {
    let directory: String?
    let stateDirectory: String?

    package init(stateDirectory: String?) {
        self.stateDirectory = stateDirectory
        directory = stateDirectory.map { $0 + "/submitted" }
    }

    /// The tasks kept, and when each was submitted (its file's mtime, CLOCK_REALTIME µs).
    package struct Kept {
        package var tasks: [TaskDefinition] = []
        var submittedUSec: [TaskKey: UInt64] = [:]

        /// Gives a task never triggered its submission as its last trigger: its time counts from
        /// there, so a time passed while taskd was down is a missed elapse (`Persistent=`), run now.
        package func backdate(_ records: inout [TaskKey: TaskRecord]) {
            for (key, at) in submittedUSec where records[key]?.lastTriggerUSec == nil {
                records[key, default: TaskRecord()].lastTriggerUSec = at
            }
        }
    }

    /// The tasks kept; `report` hears what is wrong with the files that could not be read.
    package func load(report: (String) -> Void) -> Kept {
        guard let directory else { return Kept() }
        let (tasks, diagnostics) = SubmittedTaskFile.load(directory: directory)
        for d in diagnostics { report("\(d.description): the submitted task is not loaded") }
        var kept = Kept(tasks: tasks)
        for task in tasks {
            var info = stat()
            guard stat(directory + "/" + task.key.identifier + ".task", &info) == 0 else { continue }
            kept.submittedUSec[task.key] = UInt64(info.st_mtim.tv_sec) * 1_000_000 + UInt64(info.st_mtim.tv_nsec / 1000)
        }
        return kept
    }

    /// Keeps the task's file, synced; why not, if it could not.
    func save(_ name: String, _ text: String) -> String? {
        guard let directory else { return nil }
        if mkdir(directory, 0o700) != 0, errno != EEXIST { return "\(directory): \(String(cString: strerror(errno)))" }
        let path = directory + "/" + name + ".task"
        if let error = FileIO.replace(path, with: Array(text.utf8)) { return "\(path): \(error)" }
        return FileIO.syncDirectory(directory) ? nil : "\(directory): fsync failed"
    }

    /// Removes the task's file; why not, if it could not.
    func remove(_ name: String) -> String? {
        guard let directory else { return nil }
        let path = directory + "/" + name + ".task"
        return FileIO.remove(path).map { "\(path): \($0)" }
    }

    /// Removes the task's record (`tasks/submitted:NAME.json`, `StateStore`'s) once it is written.
    func removeRecord(_ name: String) {
        guard let stateDirectory else { return }
        _ = FileIO.remove(stateDirectory + "/tasks/" + SubmittedTaskFile.kind + ":" + name + ".json")
    }
}
