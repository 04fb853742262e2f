import TaskRuntime

/// Where a taskd's command runs live, as start-up found and set it up (`DaemonProcess.placeRuns`):
/// the run keeper, the run cgroups, and the runs a previous taskd's keeper kept for this one.
struct RunPlacement {
    let keeper: RunKeeper?
    /// The keeper to start for new runs (`RunKeeper=yes`), beside taskd's executable.
    let keeperExecutable: String?
    let cgroups: RunCgroups?
    /// Whether the keeper and the run cgroups are in a scope outside taskd's unit, so that runs
    /// outlive a restart of it.
    let outliveUnit: Bool
    /// The runs the keeper kept, to take over.
    let kept: [HandedRun]
}
