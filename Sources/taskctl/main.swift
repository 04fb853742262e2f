import TaskControl

#if canImport(Glibc)
    import Glibc
#endif

// taskctl: the command-line client of taskd's control socket.
exit(Taskctl.main(Array(CommandLine.arguments.dropFirst())))
