#define _GNU_SOURCE
#include "CTaskdShim.h"
#include <spawn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <errno.h>
#include <unistd.h>

int taskd_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int taskd_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int taskd_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

int taskd_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

int taskd_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int taskd_peer_groups(int fd, gid_t *groups, int max) {
#ifdef SO_PEERGROUPS
    socklen_t len = (socklen_t)(sizeof(gid_t) * (size_t)max);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) return -1;
    return (int)(len / sizeof(gid_t));
#else
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int taskd_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int taskd_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int taskd_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
}

#include <sys/epoll.h>

int taskd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev = {.events = events, .data.u64 = token};
    return epoll_ctl(epfd, op, fd, &ev);
}

int taskd_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms) {
    struct epoll_event evs[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        tokens[i] = evs[i].data.u64;
        events[i] = evs[i].events;
    }
    return n;
}

#include <sys/timerfd.h>

int taskd_clock_change_rearm(int fd) {
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)1 << 40}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
}

int taskd_clock_change_fd(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return -1;
    if (taskd_clock_change_rearm(fd) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

#include <time.h>

const char *taskd_tzname(int dst) {
    tzset();
    const char *name = tzname[dst ? 1 : 0];
    return name ? name : "";
}

#include <string.h>
#include <sys/inotify.h>

int taskd_inotify_directory(const char *directory) {
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -1;
    if (inotify_add_watch(fd, directory, IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_ATTRIB) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int taskd_inotify_saw(int fd, const char *name) {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int saw = 0;
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) break;
        for (char *p = buffer; p < buffer + n;) {
            struct inotify_event *event = (struct inotify_event *)p;
            if (event->len > 0 && strcmp(event->name, name) == 0) saw = 1;
            p += sizeof(struct inotify_event) + event->len;
        }
    }
    return saw;
}
