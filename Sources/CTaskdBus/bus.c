#define _GNU_SOURCE
#include "CTaskdBus.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#define LOGIND "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"
#define NM "org.freedesktop.NetworkManager"
#define NM_PATH "/org/freedesktop/NetworkManager"
#define NETWORKD "org.freedesktop.network1"
#define NETWORKD_PATH "/org/freedesktop/network1"
#define NETWORKD_MANAGER "org.freedesktop.network1.Manager"
#define DELAY_WHY "taskd cancels runs before the system sleeps"

struct taskd_bus {
    sd_bus *bus;
    taskd_bus_callback callback;
    void *context;
    taskd_bus_state state;
    int delay_fd, block_fd;
    int want_delay, want_block;
    int nm_present, networkd_present;
};

static void changed(taskd_bus *b) {
    b->state.network_source = b->nm_present ? TASKD_NETWORK_NM
                              : b->networkd_present ? TASKD_NETWORK_NETWORKD : TASKD_NETWORK_NONE;
    b->callback(b->context, TASKD_BUS_STATE_CHANGED);
}

static void copy_string(char *to, size_t size, const char *from) {
    strncpy(to, from ? from : "", size - 1);
    to[size - 1] = 0;
}

/// Reads one property (already entered: name read by the caller) into the state, skipping unknown ones.
static int read_property(taskd_bus *b, sd_bus_message *m, const char *interface, const char *name) {
    int r;
    if (strcmp(interface, LOGIND_MANAGER) == 0) {
        if (strcmp(name, "IdleHint") == 0) return sd_bus_message_read(m, "v", "b", &b->state.idle_hint);
        if (strcmp(name, "IdleSinceHintMonotonic") == 0)
            return sd_bus_message_read(m, "v", "t", &b->state.idle_since_monotonic);
        if (strcmp(name, "InhibitDelayMaxUSec") == 0)
            return sd_bus_message_read(m, "v", "t", &b->state.inhibit_delay_max_usec);
    } else if (strcmp(interface, NM) == 0) {
        if (strcmp(name, "State") == 0) return sd_bus_message_read(m, "v", "u", &b->state.nm_state);
        if (strcmp(name, "Connectivity") == 0) return sd_bus_message_read(m, "v", "u", &b->state.nm_connectivity);
        if (strcmp(name, "Metered") == 0) return sd_bus_message_read(m, "v", "u", &b->state.nm_metered);
    } else if (strcmp(interface, NETWORKD_MANAGER) == 0) {
        const char *s = NULL;
        if (strcmp(name, "OnlineState") == 0) {
            if ((r = sd_bus_message_read(m, "v", "s", &s)) < 0) return r;
            copy_string(b->state.networkd_online, sizeof b->state.networkd_online, s);
            return r;
        }
        if (strcmp(name, "OperationalState") == 0) {
            if ((r = sd_bus_message_read(m, "v", "s", &s)) < 0) return r;
            copy_string(b->state.networkd_operational, sizeof b->state.networkd_operational, s);
            return r;
        }
    }
    return sd_bus_message_skip(m, "v");
}

/// Reads an a{sv} of `interface`'s properties (GetAll's reply, PropertiesChanged's second argument).
static int read_properties(taskd_bus *b, sd_bus_message *m, const char *interface) {
    int r = sd_bus_message_enter_container(m, 'a', "{sv}");
    if (r < 0) return r;
    while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        const char *name;
        if ((r = sd_bus_message_read(m, "s", &name)) < 0) return r;
        if ((r = read_property(b, m, interface, name)) < 0) return r;
        if ((r = sd_bus_message_exit_container(m)) < 0) return r;
    }
    if (r < 0) return r;
    return sd_bus_message_exit_container(m);
}

static void mark_present(taskd_bus *b, const char *interface, int present) {
    if (strcmp(interface, LOGIND_MANAGER) == 0) b->state.logind = present;
    if (strcmp(interface, NM) == 0) b->nm_present = present;
    if (strcmp(interface, NETWORKD_MANAGER) == 0) b->networkd_present = present;
}

/// GetAll's reply handler gets the interface from a small heap string given as its userdata.
typedef struct get_all_request {
    taskd_bus *bus;
    char interface[64];
} get_all_request;

static int on_get_all_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    get_all_request *request = userdata;
    taskd_bus *b = request->bus;
    if (sd_bus_message_is_method_error(m, NULL)) {
        mark_present(b, request->interface, 0);
    } else if (read_properties(b, m, request->interface) >= 0) {
        mark_present(b, request->interface, 1);
    }
    free(request);
    changed(b);
    return 0;
}

static void ask_all(taskd_bus *b, const char *service, const char *path, const char *interface) {
    get_all_request *request = calloc(1, sizeof *request);
    if (!request) return;
    request->bus = b;
    copy_string(request->interface, sizeof request->interface, interface);
    if (sd_bus_call_method_async(b->bus, NULL, service, path, "org.freedesktop.DBus.Properties", "GetAll",
                                 on_get_all_reply, request, "s", interface) < 0)
        free(request);
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    taskd_bus *b = userdata;
    const char *interface;
    if (sd_bus_message_read(m, "s", &interface) < 0) return 0;
    if (strcmp(interface, LOGIND_MANAGER) != 0 && strcmp(interface, NM) != 0 &&
        strcmp(interface, NETWORKD_MANAGER) != 0)
        return 0;
    if (read_properties(b, m, interface) < 0) return 0;
    // logind does not send IdleHint changes for inhibitors: ask again when they change.
    if (strcmp(interface, LOGIND_MANAGER) == 0) ask_all(b, LOGIND, LOGIND_PATH, LOGIND_MANAGER);
    changed(b);
    return 0;
}

static void inhibit(taskd_bus *b, int block, const char *why);

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    taskd_bus *b = userdata;
    const char *name, *old_owner, *new_owner;
    if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0) return 0;
    int present = new_owner[0] != 0;
    if (strcmp(name, LOGIND) == 0) {
        b->state.logind = present;
        if (present) {
            ask_all(b, LOGIND, LOGIND_PATH, LOGIND_MANAGER);
            // A restarted logind forgot our inhibitors: take them again.
            if (b->want_delay) inhibit(b, 0, DELAY_WHY);
        }
    } else if (strcmp(name, NM) == 0) {
        b->nm_present = present;
        if (present) ask_all(b, NM, NM_PATH, NM);
    } else if (strcmp(name, NETWORKD) == 0) {
        b->networkd_present = present;
        if (present) ask_all(b, NETWORKD, NETWORKD_PATH, NETWORKD_MANAGER);
    } else {
        return 0;
    }
    changed(b);
    return 0;
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    taskd_bus *b = userdata;
    int start;
    if (sd_bus_message_read(m, "b", &start) < 0) return 0;
    b->callback(b->context, start ? TASKD_BUS_PREPARE_SLEEP : TASKD_BUS_RESUMED);
    return 0;
}

typedef struct inhibit_request {
    taskd_bus *bus;
    int block;
} inhibit_request;

static int on_inhibit_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    inhibit_request *request = userdata;
    taskd_bus *b = request->bus;
    int block = request->block;
    free(request);
    int fd = -1;
    if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "h", &fd) < 0) return 0;
    int *slot = block ? &b->block_fd : &b->delay_fd;
    int wanted = block ? b->want_block : b->want_delay;
    if (!wanted || *slot >= 0) return 0;  // released meanwhile, or already held
    *slot = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (block) b->state.block_inhibitor = *slot >= 0;
    else b->state.delay_inhibitor = *slot >= 0;
    changed(b);
    return 0;
}

static void inhibit(taskd_bus *b, int block, const char *why) {
    inhibit_request *request = calloc(1, sizeof *request);
    if (!request) return;
    request->bus = b;
    request->block = block;
    if (sd_bus_call_method_async(b->bus, NULL, LOGIND, LOGIND_PATH, LOGIND_MANAGER, "Inhibit", on_inhibit_reply,
                                 request, "ssss", "sleep", "taskd", why, block ? "block" : "delay") < 0)
        free(request);
}

static void release(taskd_bus *b, int block) {
    int *slot = block ? &b->block_fd : &b->delay_fd;
    if (*slot >= 0) close(*slot);
    *slot = -1;
    if (block) b->state.block_inhibitor = 0;
    else b->state.delay_inhibitor = 0;
}

taskd_bus *taskd_bus_open(taskd_bus_callback callback, void *context) {
    taskd_bus *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->callback = callback;
    b->context = context;
    b->delay_fd = b->block_fd = -1;
    int r = sd_bus_open_system(&b->bus);
    if (r < 0) {
        free(b);
        errno = -r;
        return NULL;
    }
    sd_bus_match_signal_async(b->bus, NULL, LOGIND, LOGIND_PATH, LOGIND_MANAGER, "PrepareForSleep",
                              on_prepare_for_sleep, NULL, b);
    sd_bus_match_signal_async(b->bus, NULL, NULL, NULL, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                              on_properties_changed, NULL, b);
    sd_bus_match_signal_async(b->bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                              "org.freedesktop.DBus", "NameOwnerChanged", on_name_owner_changed, NULL, b);
    ask_all(b, LOGIND, LOGIND_PATH, LOGIND_MANAGER);
    ask_all(b, NM, NM_PATH, NM);
    ask_all(b, NETWORKD, NETWORKD_PATH, NETWORKD_MANAGER);
    return b;
}

void taskd_bus_close(taskd_bus *b) {
    if (!b) return;
    release(b, 0);
    release(b, 1);
    sd_bus_flush_close_unref(b->bus);
    free(b);
}

int taskd_bus_fd(taskd_bus *b) { return sd_bus_get_fd(b->bus); }
int taskd_bus_events(taskd_bus *b) { return sd_bus_get_events(b->bus); }

uint64_t taskd_bus_timeout(taskd_bus *b) {
    uint64_t usec = UINT64_MAX;
    if (sd_bus_get_timeout(b->bus, &usec) < 0) return UINT64_MAX;
    return usec;
}

int taskd_bus_process(taskd_bus *b) {
    int r;
    while ((r = sd_bus_process(b->bus, NULL)) > 0) {
    }
    return r;
}

void taskd_bus_get_state(taskd_bus *b, taskd_bus_state *state) { *state = b->state; }

void taskd_bus_take_delay_inhibitor(taskd_bus *b) {
    b->want_delay = 1;
    if (b->delay_fd < 0) inhibit(b, 0, DELAY_WHY);
}

void taskd_bus_release_delay_inhibitor(taskd_bus *b) {
    b->want_delay = 0;
    release(b, 0);
}

void taskd_bus_block_sleep(taskd_bus *b, int on, const char *why) {
    b->want_block = on;
    if (on && b->block_fd < 0) inhibit(b, 1, why);
    if (!on) release(b, 1);
}

/* The service manager's bus, for a question to systemd: its private socket as root (no bus daemon
   needed), else the system bus. NULL, errno set, if neither answers. */
static sd_bus *manager_bus(void) {
    sd_bus *bus = NULL;
    if (geteuid() == 0 && sd_bus_new(&bus) >= 0) {
        if (sd_bus_set_address(bus, "unix:path=/run/systemd/private") >= 0 && sd_bus_start(bus) >= 0) return bus;
        bus = sd_bus_unref(bus);
    }
    int r = sd_bus_open_system(&bus);
    if (r < 0) {
        errno = -r;
        return NULL;
    }
    return bus;
}

/// The name of this process's service unit ("taskd.service"), from /proc/self/cgroup: its last
/// component that ends in ".service". 0, or -1 if there is none.
static int own_service(char *name, size_t size) {
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return -1;
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0) continue;
        line[strcspn(line, "\n")] = 0;
        for (char *part = strtok(line + 3, "/"); part; part = strtok(NULL, "/")) {
            size_t n = strlen(part);
            if (n > 8 && strcmp(part + n - 8, ".service") == 0 && n < size) {
                memcpy(name, part, n + 1);
                found = 0;
            }
        }
    }
    fclose(f);
    return found;
}

int taskd_service_job_type(char *out, size_t size) {
    if (size > 0) out[0] = 0;
    sd_bus *bus = manager_bus();
    if (!bus) return -errno;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *unit_reply = NULL, *job_reply = NULL;
    char *type = NULL;
    const char *unit, *job;
    uint32_t id = 0;
    // By name: GetUnitByPID answers with a scope this process made (the run keeper's), whose
    // creator systemd counts among the scope's processes.
    char service[256];
    int r = own_service(service, sizeof service) == 0
                ? sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "GetUnit", &error, &unit_reply, "s", service)
                : sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "GetUnitByPID", &error, &unit_reply, "u",
                                     (uint32_t)getpid());
    if (r >= 0) r = sd_bus_message_read(unit_reply, "o", &unit);
    if (r >= 0)
        r = sd_bus_get_property(bus, "org.freedesktop.systemd1", unit, "org.freedesktop.systemd1.Unit", "Job",
                                &error, &job_reply, "(uo)");
    if (r >= 0) r = sd_bus_message_read(job_reply, "(uo)", &id, &job);
    if (r >= 0 && id != 0) {
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", job, "org.freedesktop.systemd1.Job",
                                       "JobType", &error, &type);
        if (r >= 0 && size > 0) snprintf(out, size, "%s", type);
    }
    free(type);
    sd_bus_message_unref(job_reply);
    sd_bus_message_unref(unit_reply);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : 0;
}

int taskd_start_scope(const char *name, int pid, const char *description, char *why, size_t size) {
    if (size > 0) why[0] = 0;
    sd_bus *bus = manager_bus();
    if (!bus) return -errno;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *m = NULL, *reply = NULL;
    int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
    if (r >= 0) r = sd_bus_message_append(m, "ss", name, "fail");
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sv)");
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "Description", "s", description);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t)pid);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
    if (r >= 0) r = sd_bus_call(bus, m, 0, &error, &reply);
    if (r < 0 && size > 0) snprintf(why, size, "%s", error.message ? error.message : strerror(-r));
    sd_bus_message_unref(reply);
    sd_bus_message_unref(m);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : 0;
}
