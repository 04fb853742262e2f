import TaskScheduling

/// The kernel's pressure average a pressure requirement reads: `.tenSeconds`, `.oneMinute`, `.fiveMinutes`.
public typealias PressureWindow = TaskScheduling.PressureWindow
