import Taskd
import TaskdProcess

// taskd: the command-handler daemon; every task comes from the configuration directory. A
// synchronous main: the main thread waits while the daemon runs on its event loop. Process-wide
// tunables are the program's to set, not the library's: glibc's malloc is kept to two arenas
// (unless the environment sets MALLOC_ARENA_MAX) before any thread allocates, and its mmap threshold
// is fixed at 128 KiB, so that replies of megabytes (List, Metrics) are mmapped blocks, given back
// once written (unless MALLOC_MMAP_THRESHOLD_ is set).
MallocArenas.limit()
MallocArenas.keepLargeBlocksMapped()
TaskDaemon(name: "taskd").runMain()
