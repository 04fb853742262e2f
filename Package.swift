// swift-tools-version: 6.0
// taskd: the iOS background-task model as a systemd-native Linux daemon.
// No Swift package dependencies: the toolchain's libraries, libsystemd, libcurl and small C shims.
import PackageDescription

/// libFuzzer targets (scripts/fuzz builds them with `--sanitize fuzzer`, which supplies their
/// `main`); left out of ordinary builds, where they could not link.
let fuzzTargets: [Target] =
    Context.environment["TASKD_FUZZ"] == nil
    ? []
    : [
        .executableTarget(name: "FuzzVarlink", dependencies: ["TaskdProtocol"], path: "Fuzz/FuzzVarlink"),
        .executableTarget(name: "FuzzConfig", dependencies: ["TaskdConfig"], path: "Fuzz/FuzzConfig"),
        .executableTarget(name: "FuzzCalendar", dependencies: ["TaskScheduling"], path: "Fuzz/FuzzCalendar"),
        .executableTarget(name: "FuzzTimeSpan", dependencies: ["TaskScheduling"], path: "Fuzz/FuzzTimeSpan"),
    ]

let package = Package(
    name: "taskd",
    products: [
        .library(name: "Taskd", targets: ["Taskd"]),
        .library(name: "TaskdTesting", targets: ["TaskdTesting"]),
        .executable(name: "taskd", targets: ["taskd"]),
        .executable(name: "taskctl", targets: ["taskctl"]),
        .executable(name: "taskd-keeper", targets: ["taskd-keeper"]),
    ],
    targets: [
        // C layer: libsystemd through pkg-config, and the Linux calls Swift cannot reach directly.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CTaskdShim"),
        // libcurl (Debian's libcurl4-openssl-dev), for etcd's gRPC API over HTTP/2, and the shim that
        // keeps a connection and sets its options (curl_easy_setopt is variadic in C).
        .systemLibrary(name: "CLibcurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CTaskdCurl", dependencies: ["CLibcurl"]),
        // sd-bus calls (variadic in C): logind's sleep signal, inhibitors and idle state, the network state.
        .target(name: "CTaskdBus", linkerSettings: [.linkedLibrary("systemd")]),

        // The epoll thread every watched fd goes through (not Dispatch sources: see EventLoop).
        .target(name: "TaskdIO", dependencies: ["CTaskdShim"]),

        // Process-wide: glibc malloc's arenas and trimming, the kernel's random numbers.
        .target(name: "TaskdProcess", dependencies: ["CTaskdShim"]),

        // Pure core: model, time spans, target matching, the scheduler state machine.
        .target(name: "TaskScheduling", dependencies: ["CTaskdShim"]),
        // Unit-file syntax → task definitions, with file:line diagnostics.
        .target(name: "TaskdConfig", dependencies: ["TaskScheduling", "TaskdIO"]),
        // JSON, Varlink framing, the IDL, every method's typed parameters and replies, and a blocking
        // client (no libsystemd: taskctl links it; the server frames with the same code).
        .target(name: "TaskdProtocol", dependencies: ["TaskScheduling"]),
        // Running handlers: commands (posix_spawn, process groups, signals) and output capture.
        .target(name: "TaskRuntime", dependencies: ["TaskScheduling", "CTaskdShim", "TaskdIO"]),
        // journald (and its queue), sd_notify, signals, clock changes.
        .target(name: "TaskdSystem", dependencies: ["CSystemd", "CTaskdBus", "CTaskdShim", "TaskdIO"]),
        // The machine: power supplies, logind (sleep, inhibitors, idleness), the network, free space
        // and pressure, as the task conditions need them; one event type.
        .target(name: "TaskdMachine", dependencies: ["TaskScheduling", "CTaskdBus", "CTaskdShim", "TaskdIO"]),
        // The control plane: the Unix socket server (listen fds, peer credentials, limits, reply
        // order) and the service that answers its calls through a method table, driving any
        // `SchedulerControl` (the daemon conforms) without depending on it.
        .target(
            name: "TaskdControl",
            dependencies: ["CSystemd", "CTaskdShim", "TaskdIO", "TaskdProcess", "TaskdProtocol", "TaskScheduling"]),
        // Fleets: runs claimed across hosts through etcd (its v3 gRPC API over kept libcurl
        // connections, and a watch of the claims), with leases and fence tokens.
        .target(
            name: "TaskdFleet", dependencies: ["TaskScheduling", "TaskdConfig", "TaskdProtocol", "TaskdIO", "CTaskdCurl"]),
        // The daemon: the orchestrator that performs the scheduler's actions, the control service,
        // the state folder and the journal's events.
        .target(
            name: "TaskdDaemon",
            dependencies: [
                "TaskScheduling", "TaskdConfig", "TaskdProtocol", "TaskRuntime", "TaskdSystem", "TaskdMachine",
                "TaskdControl", "TaskdIO", "TaskdProcess", "TaskdFleet", "CTaskdShim",
            ]),
        // The public API an app imports: backgroundTask(_:action:) and run().
        .target(name: "Taskd", dependencies: ["TaskdDaemon", "TaskScheduling", "TaskdProtocol", "TaskdIO"]),
        // Stand-ins for the daemon's ports, for its unit tests and the kit (never for taskd itself): a
        // manual clock and machine, a store in memory, a seeded generator, no command launcher, and
        // the one in-memory log recorder.
        .target(
            name: "TaskdTestSupport",
            dependencies: ["TaskdDaemon", "TaskScheduling", "TaskdIO", "TaskdSystem", "TaskdMachine", "TaskRuntime"]),
        // The handler author's test kit: runs registered handlers on a manual clock.
        .target(
            name: "TaskdTesting",
            dependencies: [
                "Taskd", "TaskdDaemon", "TaskScheduling", "TaskdProtocol", "TaskdConfig", "TaskdIO", "TaskdSystem",
                "TaskdMachine", "TaskdTestSupport",
            ]),
        // taskctl's logic, as a library so that the executable stays thin.
        .target(name: "TaskControl", dependencies: ["TaskdProtocol", "TaskScheduling", "TaskdIO"]),

        .executableTarget(name: "taskd", dependencies: ["Taskd", "TaskdProcess"]),
        .executableTarget(name: "taskctl", dependencies: ["TaskControl"]),
        // The parent of the command runs (C): they outlive taskd, and their exit statuses are kept.
        .executableTarget(name: "taskd-keeper", dependencies: ["CTaskdShim"], path: "Sources/TaskdKeeper"),
        // The Swift handler example: its tasks (a library its tests import) and its daemon.
        .target(name: "WeatherKit", dependencies: ["Taskd"], path: "Examples/WeatherKit"),
        .executableTarget(
            name: "weatherd", dependencies: ["WeatherKit"], path: "Examples/WeatherDaemon", exclude: ["config"]),
        // The benchmark's daemon (bench/run): no-op Swift handlers that stamp when they start.
        .executableTarget(
            name: "taskd-bench", dependencies: ["Taskd", "TaskdIO", "TaskdProcess"], path: "Examples/BenchDaemon"),
        // Swift handlers that misbehave, for the reliability tests.
        .executableTarget(name: "taskd-faults", dependencies: ["Taskd"], path: "Examples/FaultyDaemon"),
        // A fake NetworkManager on D-Bus (C, sd-bus), for the integration and end-to-end tests.
        .executableTarget(
            name: "taskd-fake-nm", path: "Tests/Fixtures/FakeNetworkManager",
            linkerSettings: [.linkedLibrary("systemd")]),

        .testTarget(name: "TaskSchedulingTests", dependencies: ["TaskScheduling"]),
        .testTarget(name: "TaskdConfigTests", dependencies: ["TaskdConfig", "TaskScheduling"]),
        .testTarget(name: "TaskdProtocolTests", dependencies: ["TaskdProtocol", "TaskScheduling"]),
        .testTarget(name: "TaskdIOTests", dependencies: ["TaskdIO"]),
        .testTarget(name: "TaskdProcessTests", dependencies: ["TaskdProcess"]),
        .testTarget(name: "TaskRuntimeTests", dependencies: ["TaskRuntime", "TaskScheduling", "TaskdIO"]),
        .testTarget(name: "TaskdMachineTests", dependencies: ["TaskdMachine", "TaskScheduling", "TaskdIO"]),
        .testTarget(name: "TaskdSystemTests", dependencies: ["TaskdSystem", "TaskdIO", "TaskdTestSupport"]),
        .testTarget(
            name: "TaskdControlTests", dependencies: ["TaskdControl", "TaskdIO", "TaskdProtocol", "TaskScheduling"]),
        .testTarget(name: "TaskdFleetTests", dependencies: ["TaskdFleet", "TaskdConfig", "TaskdProtocol"]),
        .testTarget(
            name: "TaskdDaemonTests",
            dependencies: [
                "TaskdDaemon", "TaskdSystem", "TaskdMachine", "TaskdControl", "TaskdIO", "TaskdConfig", "TaskdProtocol",
                "TaskScheduling", "TaskRuntime", "TaskdFleet", "TaskdTestSupport",
            ]),
        .testTarget(
            name: "TaskdTests", dependencies: ["Taskd", "TaskdDaemon", "TaskdTesting", "TaskScheduling", "TaskdTestSupport"]),
        // The example's tests, written against the public API only, as an app's would be.
        .testTarget(
            name: "WeatherKitTests", dependencies: ["WeatherKit", "Taskd", "TaskdTesting"],
            path: "Examples/WeatherKitTests"),
    ] + fuzzTargets
)
