// The keeper's half of a run's output (OUTPUT): the entries taskd made are written, to journald
// or as text to standard error, and only then are the lines' bytes taken out of the run's pipe.
#define _GNU_SOURCE
#include "keeper.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int journal_fd = -1;

/// How long one OUTPUT request may wait for a journald that falls behind (or restarts) before
/// its remaining entries are shed (counted in WRITTEN): the keeper also spawns and reaps.
#define JOURNAL_PATIENCE_MS 100

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/// Sends one native-protocol datagram to journald, waiting for room (or for a journald that
/// restarts) until `deadline`; 0, or -1 if it was not sent.
static int journal(const char *p, size_t n, int64_t deadline) {
    if (journal_fd < 0) {
        journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (journal_fd < 0) return -1;
        int size = 8 << 20;  // as sd_journal_send asks for
        setsockopt(journal_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX, .sun_path = "/run/systemd/journal/socket"};
    for (;;) {
        ssize_t r;
        do r = sendto(journal_fd, p, n, MSG_NOSIGNAL, (struct sockaddr *)&address, sizeof address);
        while (r < 0 && errno == EINTR);
        if (r >= 0) return 0;
        int64_t left = deadline - now_ms();
        if (left <= 0 || (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)) return -1;
        if (errno == EAGAIN) {
            struct pollfd room = {journal_fd, POLLOUT, 0};
            poll(&room, 1, (int)left);
        } else {
            usleep(10000);
        }
    }
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return;
        p += r;
        n -= (size_t)r;
    }
}

void output(void) {
    struct taskd_keeper_message peek;
    ssize_t size = recv(client, &peek, sizeof peek, MSG_PEEK | MSG_TRUNC);
    if (size < (ssize_t)sizeof peek) return drop_client();
    char *buffer = malloc((size_t)size);
    if (!buffer) return drop_client();
    ssize_t n;
    do n = recv(client, buffer, (size_t)size, 0);
    while (n < 0 && errno == EINTR);
    struct taskd_keeper_message m;
    memcpy(&m, buffer, sizeof m);
    if (n != size || m.payload != (uint32_t)(size - (ssize_t)sizeof m) || m.step < 0 || m.step > 2) {
        free(buffer);
        return drop_client();
    }
    const char *p = buffer + sizeof m, *end = buffer + size;
    int64_t deadline = now_ms() + JOURNAL_PATIENCE_MS;
    int32_t shed = 0;
    for (uint32_t i = 0; i < m.argc && end - p >= 4; i++) {
        uint32_t length;
        memcpy(&length, p, sizeof length);
        p += sizeof length;
        if (length > (size_t)(end - p)) break;
        if (m.exited) write_all(2, p, length);
        else if (journal(p, length, deadline) < 0) shed++;
        p += length;
    }
    free(buffer);
    uint64_t taken = 0;
    for (size_t i = 0; i < run_count; i++) {
        if (runs[i].pid != m.pid || runs[i].fds[m.step] < 0) continue;
        char scratch[16384];
        while (taken < m.cpu_usec) {
            uint64_t left = m.cpu_usec - taken;
            ssize_t r = read(runs[i].fds[m.step], scratch, left < sizeof scratch ? (size_t)left : sizeof scratch);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            taken += (uint64_t)r;
        }
        break;
    }
    struct taskd_keeper_message written = {.type = TASKD_KEEPER_WRITTEN, .pid = m.pid, .step = m.step,
                                           .cpu_usec = taken, .status = shed};
    send_to_client(&written, NULL, 0);
}

