import Taskd

// taskd: the command-handler daemon; every task comes from the configuration directory.
await TaskDaemon(name: "taskd").run()
