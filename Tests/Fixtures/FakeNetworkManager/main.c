/*
 * taskd-fake-nm: a test fixture that stands in for NetworkManager's D-Bus API, serving only the three
 * properties taskd reads (State, Connectivity and Metered on /org/freedesktop/NetworkManager, interface
 * org.freedesktop.NetworkManager, defaults 70 connected-global, 4 full, 2 not metered). The integration tests
 * run it on a private dbus-daemon (--bus ADDRESS, or DBUS_SYSTEM_BUS_ADDRESS), the end-to-end tests on the
 * system bus of a systemd-nspawn container. It prints "ready" once it owns org.freedesktop.NetworkManager;
 * a test then changes the network either with `busctl set-property org.freedesktop.NetworkManager
 * /org/freedesktop/NetworkManager org.freedesktop.NetworkManager Metered u 1` or by writing a line such as
 * "Metered 1" to its stdin (answered with "ok"); either way every client gets PropertiesChanged with the new
 * value. SIGTERM or SIGINT ends it with status 0; EOF on stdin does not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#define NM_NAME "org.freedesktop.NetworkManager"
#define NM_PATH "/org/freedesktop/NetworkManager"

static struct nm {
    uint32_t state;        /* NMState: 20 disconnected, 70 connected (global) */
    uint32_t connectivity; /* NMConnectivityState: 1 none, 4 full */
    uint32_t metered;      /* NMMetered: 0 unknown, 1 yes, 2 no, 3 guess yes, 4 guess no */
} nm = {.state = 70, .connectivity = 4, .metered = 2};

static const struct property {
    const char *name;
    const char *option;
    uint32_t *value;
} properties[] = {
    {"State", "--state", &nm.state},
    {"Connectivity", "--connectivity", &nm.connectivity},
    {"Metered", "--metered", &nm.metered},
};

static const struct property *find_property(const char *name, int by_option) {
    for (size_t i = 0; i < sizeof properties / sizeof properties[0]; i++)
        if (strcmp(by_option ? properties[i].option : properties[i].name, name) == 0) return &properties[i];
    return NULL;
}

static int parse_u32(const char *text, uint32_t *value) {
    char *end;
    errno = 0;
    unsigned long parsed = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || parsed > UINT32_MAX) return -EINVAL;
    *value = (uint32_t)parsed;
    return 0;
}

/* Set-property: sd-bus hands over the field itself (the object's userdata plus the property's offset). */
static int set_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)error;
    int r = sd_bus_message_read(value, "u", (uint32_t *)userdata);
    if (r < 0) return r;
    return sd_bus_emit_properties_changed(bus, path, interface, property, NULL);
}

#define NM_PROPERTY(name, field)                                                                              \
    SD_BUS_WRITABLE_PROPERTY(name, "u", NULL, set_property, offsetof(struct nm, field),                  \
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE | SD_BUS_VTABLE_UNPRIVILEGED)

static const sd_bus_vtable nm_vtable[] = {
    SD_BUS_VTABLE_START(0),
    NM_PROPERTY("State", state),
    NM_PROPERTY("Connectivity", connectivity),
    NM_PROPERTY("Metered", metered),
    SD_BUS_VTABLE_END,
};

/* One stdin line, "NAME VALUE": set the property, emit the change, flush it to the bus, answer "ok". */
static void run_command(sd_bus *bus, const char *line) {
    char name[32], value[32], extra;
    const struct property *property;
    uint32_t parsed;
    int fields = sscanf(line, "%31s %31s %c", name, value, &extra);
    if (fields <= 0) return; /* blank line */
    if (fields != 2 || !(property = find_property(name, 0)) || parse_u32(value, &parsed) < 0) {
        printf("error: expected 'State|Connectivity|Metered VALUE', got '%s'\n", line);
    } else {
        *property->value = parsed;
        int r = sd_bus_emit_properties_changed(bus, NM_PATH, NM_NAME, property->name, NULL);
        if (r >= 0) r = sd_bus_flush(bus);
        if (r < 0) printf("error: %s\n", strerror(-r));
        else printf("ok\n");
    }
    fflush(stdout);
}

static int on_stdin(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
    static char line[256];
    static size_t used;
    char buffer[256];
    (void)revents;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    for (ssize_t i = 0; i < n; i++) {
        if (buffer[i] == '\n') {
            line[used] = '\0';
            run_command(userdata, line);
            used = 0;
        } else if (used < sizeof line - 1) {
            line[used++] = buffer[i];
        }
    }
    if (n > 0) return 0;
    /* EOF (or a read error): finish a last unterminated line, then stop watching stdin but keep serving. */
    line[used] = '\0';
    if (used > 0) run_command(userdata, line);
    used = 0;
    return sd_event_source_set_enabled(source, SD_EVENT_OFF);
}

static int on_signal(sd_event_source *source, const struct signalfd_siginfo *info, void *userdata) {
    (void)info, (void)userdata;
    return sd_event_exit(sd_event_source_get_event(source), 0);
}

static int fail(const char *what, int r) {
    fprintf(stderr, "taskd-fake-nm: %s: %s\n", what, strerror(-r));
    return 1;
}

int main(int argc, char **argv) {
    const char *address = "system";
    for (int i = 1; i < argc; i += 2) {
        const struct property *property = find_property(argv[i], 1);
        int is_bus = strcmp(argv[i], "--bus") == 0;
        if (i + 1 >= argc || (!is_bus && !property) || (property && parse_u32(argv[i + 1], property->value) < 0)) {
            fprintf(stderr, "usage: taskd-fake-nm [--bus system|ADDRESS] [--state U] [--connectivity U] "
                            "[--metered U]\n");
            return 2;
        }
        if (is_bus) address = argv[i + 1];
    }

    sd_bus *bus = NULL;
    int r;
    if (strcmp(address, "system") == 0) {
        r = sd_bus_open_system(&bus);
    } else {
        r = sd_bus_new(&bus);
        if (r >= 0) r = sd_bus_set_address(bus, address);
        if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0) r = sd_bus_start(bus);
    }
    if (r < 0) return fail("cannot connect to the bus", r);

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    sd_event *event = NULL;
    r = sd_event_default(&event);
    if (r < 0) return fail("cannot create the event loop", r);
    if ((r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL)) < 0 ||
        (r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL)) < 0)
        return fail("cannot watch signals", r);
    if ((r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL)) < 0 ||
        (r = sd_bus_set_exit_on_disconnect(bus, 1)) < 0)
        return fail("cannot attach the bus to the event loop", r);

    r = sd_bus_add_object_vtable(bus, NULL, NM_PATH, NM_NAME, nm_vtable, &nm);
    if (r < 0) return fail("cannot add the " NM_PATH " object", r);
    r = sd_bus_request_name(bus, NM_NAME, 0);
    if (r < 0) return fail("cannot own " NM_NAME, r);

    /* Stdin is optional: epoll refuses /dev/null and regular files (EPERM), and it may be closed (EBADF). */
    r = sd_event_add_io(event, NULL, STDIN_FILENO, EPOLLIN, on_stdin, bus);
    if (r < 0 && r != -EPERM && r != -EBADF) return fail("cannot watch stdin", r);

    printf("ready\n");
    fflush(stdout);

    r = sd_event_loop(event);
    if (r < 0) return fail("event loop failed", r);
    if (r != 0) fprintf(stderr, "taskd-fake-nm: the bus connection closed\n");
    sd_bus_flush_close_unref(bus);
    sd_event_unref(event);
    return r == 0 ? 0 : 1;
}
