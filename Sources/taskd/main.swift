import Taskd

// taskd: the command-handler daemon; every task comes from the configuration directory. A
// synchronous main: the main thread waits while the daemon runs on its event loop.
TaskDaemon(name: "taskd").runMain()
