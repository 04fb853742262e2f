import Taskd
import TaskdProcess

// taskd: the command-handler daemon; every task comes from the configuration directory. A
// synchronous main: the main thread waits while the daemon runs on its event loop. Process-wide
// tunables are the program's to set, not the library's: glibc's malloc is kept to two arenas
// (unless the environment sets MALLOC_ARENA_MAX) before any thread allocates.
MallocArenas.limit()
TaskDaemon(name: "taskd").runMain()
