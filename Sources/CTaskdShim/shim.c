#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
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
int taskd_malloc_trim(void) { return malloc_trim(0); }

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
#include <sys/eventfd.h>

int taskd_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

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

int taskd_inotify_add(int fd, const char *path) {
    return inotify_add_watch(fd, path, IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
}

void taskd_drain(int fd) {
    char buffer[4096];
    while (read(fd, buffer, sizeof buffer) > 0) {}
}

#include <linux/netlink.h>
int taskd_uevent_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -1;
    struct sockaddr_nl address = {.nl_family = AF_NETLINK, .nl_groups = 1};
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>

/// Reports (step, errno) to the parent through the close-on-exec pipe and exits.
static void spawn_fail(int report, int step) {
    int message[2] = {step, errno};
    ssize_t ignored = write(report, message, sizeof message);
    (void)ignored;
    _exit(127);
}

static void spawn_child(const char *path, char *const argv[], char *const envp[], int in, int out, int err,
                        int notify, const char *cwd, const struct taskd_exec_identity *id, int report) {
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (id->set_cgroup && write(id->cgroup_fd, "0", 1) < 0) spawn_fail(report, TASKD_STEP_CGROUP);
    if (setpgid(0, 0) < 0) spawn_fail(report, TASKD_STEP_SETPGID);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) spawn_fail(report, TASKD_STEP_FDS);
    // The notify pipe on 3 (dup2 onto itself would leave it close-on-exec).
    if (notify == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(notify, 3) < 0) spawn_fail(report, TASKD_STEP_FDS);
    // Close everything else but the report pipe (which closes itself at exec).
    if (report > 4) syscall(SYS_close_range, 4u, (unsigned)report - 1, 0u);
    syscall(SYS_close_range, (unsigned)report + 1, ~0u, 0u);

    if (id->set_nice) {
        errno = 0;
        if (setpriority(PRIO_PROCESS, 0, id->nice) < 0) spawn_fail(report, TASKD_STEP_NICE);
    }
    if (id->set_umask) umask(id->umask);
    // Raw syscalls: glibc's wrappers would broadcast to threads the child does not have.
    if (id->set_groups && syscall(SYS_setgroups, (size_t)id->ngroups, id->groups) < 0)
        spawn_fail(report, TASKD_STEP_GROUPS);
    if (id->set_gid && syscall(SYS_setresgid, id->gid, id->gid, id->gid) < 0) spawn_fail(report, TASKD_STEP_GID);
    if (id->set_uid && syscall(SYS_setresuid, id->uid, id->uid, id->uid) < 0) spawn_fail(report, TASKD_STEP_UID);
    if (cwd && chdir(cwd) < 0) spawn_fail(report, TASKD_STEP_CHDIR);
    execve(path, argv, envp);
    spawn_fail(report, TASKD_STEP_EXEC);
}

pid_t taskd_spawn_as(const char *path, char *const argv[], char *const envp[], int in, int out, int err,
                     int notify, const char *cwd, const struct taskd_exec_identity *identity, int *failed_step) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0) {
        *failed_step = TASKD_STEP_FORK;
        return -1;
    }
    if (report[1] < 4) {  // keep it clear of the 0-3 the child sets up
        int moved = fcntl(report[1], F_DUPFD_CLOEXEC, 4);
        close(report[1]);
        report[1] = moved;
        if (moved < 0) {
            close(report[0]);
            *failed_step = TASKD_STEP_FORK;
            return -1;
        }
    }
    // No signal handler may run in the child before it resets them all.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = vfork();
    if (pid == 0) spawn_child(path, argv, envp, in, out, err, notify, cwd, identity, report[1]);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        errno = saved;
        *failed_step = TASKD_STEP_FORK;
        return -1;
    }
    int message[2];
    ssize_t n;
    do n = read(report[0], message, sizeof message);
    while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == (ssize_t)sizeof message) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        *failed_step = message[0];
        errno = message[1];
        return -1;
    }
    return pid;
}

int taskd_monotonic_timer(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int taskd_monotonic_timer_arm(int fd, uint64_t usec) {
    struct itimerspec its = {0};
    if (usec > 0) {
        its.it_value.tv_sec = (time_t)(usec / 1000000);
        its.it_value.tv_nsec = (long)(usec % 1000000) * 1000;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

int taskd_limit_malloc_arenas(int limit) {
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_ARENA_MAX") || (tunables && strstr(tunables, "arena_max"))) return 0;
    return mallopt(M_ARENA_MAX, limit) == 1;
}

int taskd_fix_mmap_threshold(int bytes) {
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_MMAP_THRESHOLD_") || (tunables && strstr(tunables, "mmap_threshold"))) return 0;
    return mallopt(M_MMAP_THRESHOLD, bytes) == 1;
}

#include <sys/xattr.h>
long taskd_getxattr(const char *path, const char *name, void *value, unsigned long size) {
    return (long)getxattr(path, name, value, size);
}

int taskd_exchange(const char *a, const char *b) {
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

/* taskd's version, as the binary carries it: one string behind a marker, so that a package build
   may stamp its own (-DTASKD_VERSION) and a test may make a binary of another version by
   rewriting these bytes in a copy (an upgrade in place to a different build). */
#ifndef TASKD_VERSION
#define TASKD_VERSION "0.1.0"
#endif
static const char taskd_version_string[] = "taskd-version:" TASKD_VERSION;
const char *taskd_version(void) { return taskd_version_string + sizeof("taskd-version:") - 1; }
