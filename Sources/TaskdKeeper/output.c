// The keeper's half of a run's output (OUTPUT): the entries taskd made are written, to journald
// or as text to standard error, and only then are the lines' bytes taken out of the run's pipe.
#define _GNU_SOURCE
#include "keeper.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int journal_fd = -1;

/// Sends one native-protocol datagram to journald; a journald that is restarting gets 10 tries
/// 10 ms apart (the entry is dropped after: it is written for journald only).
static void journal(const char *p, size_t n) {
    if (journal_fd < 0) {
        journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (journal_fd < 0) return;
        int size = 8 << 20;  // as sd_journal_send asks for
        setsockopt(journal_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX, .sun_path = "/run/systemd/journal/socket"};
    for (int tries = 0; tries < 10; tries++) {
        ssize_t r;
        do r = sendto(journal_fd, p, n, MSG_NOSIGNAL, (struct sockaddr *)&address, sizeof address);
        while (r < 0 && errno == EINTR);
        if (r >= 0 || (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)) return;
        usleep(10000);
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
    for (uint32_t i = 0; i < m.argc && end - p >= 4; i++) {
        uint32_t length;
        memcpy(&length, p, sizeof length);
        p += sizeof length;
        if (length > (size_t)(end - p)) break;
        if (m.exited) write_all(2, p, length);
        else journal(p, length);
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
                                           .cpu_usec = taken};
    send_to_client(&written, NULL, 0);
}

