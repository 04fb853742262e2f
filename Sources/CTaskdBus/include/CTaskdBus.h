#pragma once
// What taskd asks of the system bus, in C because sd-bus's API is variadic: logind's sleep
// signal, inhibitors and idle state, and NetworkManager's or systemd-networkd's network state.
// Every call is asynchronous; the caller drives the connection from its event loop
// (taskd_bus_fd/events/timeout/process) and reads the state after each callback.
#include <stddef.h>
#include <stdint.h>

typedef struct taskd_bus taskd_bus;

/// Where the network state comes from.
enum taskd_network_source { TASKD_NETWORK_NONE = 0, TASKD_NETWORK_NM = 1, TASKD_NETWORK_NETWORKD = 2 };

/// What the bus said last.
typedef struct taskd_bus_state {
    int logind;                       // logind answered
    int idle_hint;                    // logind IdleHint
    uint64_t idle_since_monotonic;    // logind IdleSinceHintMonotonic (µs, CLOCK_MONOTONIC)
    uint64_t inhibit_delay_max_usec;  // logind InhibitDelayMaxUSec
    int delay_inhibitor;              // taskd holds its sleep delay inhibitor
    int block_inhibitor;              // taskd holds a sleep block inhibitor
    int network_source;               // enum taskd_network_source
    uint32_t nm_state, nm_connectivity, nm_metered;
    char networkd_online[16];         // networkd OnlineState ("online", "partial", "offline", …)
    char networkd_operational[16];    // networkd OperationalState ("routable", …)
} taskd_bus_state;

/// What a callback tells.
enum taskd_bus_event {
    TASKD_BUS_STATE_CHANGED = 1,   // a property changed: read taskd_bus_get_state
    TASKD_BUS_PREPARE_SLEEP = 2,   // logind PrepareForSleep(true): the system is about to sleep
    TASKD_BUS_RESUMED = 3,         // logind PrepareForSleep(false): it woke up (or the sleep failed)
};

typedef void (*taskd_bus_callback)(void *context, int event);

/// Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured), subscribes to what it
/// tells, and asks for the current state. NULL with errno if there is no bus.
taskd_bus *taskd_bus_open(taskd_bus_callback callback, void *context);
void taskd_bus_close(taskd_bus *bus);

/// The connection's fd, the poll events it waits for, and the CLOCK_MONOTONIC µs by which
/// taskd_bus_process must run again (UINT64_MAX: none).
int taskd_bus_fd(taskd_bus *bus);
int taskd_bus_events(taskd_bus *bus);
uint64_t taskd_bus_timeout(taskd_bus *bus);
/// Processes everything pending (callbacks run inside); < 0 once the connection is lost.
int taskd_bus_process(taskd_bus *bus);

void taskd_bus_get_state(taskd_bus *bus, taskd_bus_state *state);

/// Takes logind's sleep *delay* inhibitor (asynchronous; state.delay_inhibitor says when held).
void taskd_bus_take_delay_inhibitor(taskd_bus *bus);
/// Releases it: the system may sleep now.
void taskd_bus_release_delay_inhibitor(taskd_bus *bus);
/// Takes (on) or releases (off) a sleep *block* inhibitor, naming `why`.
void taskd_bus_block_sleep(taskd_bus *bus, int on, const char *why);

/* The type of the job systemd has queued for this process's unit ("restart", "stop", ...) into
   out, "" when there is none: 0, or a negative errno when systemd could not be asked. Blocking
   (two or three D-Bus round trips): call it off the event loop. */
int taskd_service_job_type(char *out, size_t size);

/* Starts the transient scope unit `name` (Delegate=yes) holding `pid`, in this process's slice, so
   that the process and what it spawns outlive this process's own unit (StartTransientUnit). 0, or a
   negative errno; the error's message into `why`. Blocking: call it off the event loop. */
int taskd_start_scope(const char *name, int pid, const char *description, char *why, size_t size);
