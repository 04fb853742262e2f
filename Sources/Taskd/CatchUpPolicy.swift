import TaskScheduling

/// What timer elapses missed during downtime or sleep make (`CatchUp=`): none, the latest, or all.
public typealias CatchUpPolicy = TaskScheduling.CatchUpPolicy
