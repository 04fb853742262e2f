import TaskScheduling

/// A resource whose stall pressure a task may require to be low: `.cpu`, `.memory`, `.io`.
public typealias PressureResource = TaskScheduling.PressureResource
