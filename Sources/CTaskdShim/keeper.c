// taskd's side of the run keeper's socket (the keeper itself is Sources/TaskdKeeper).
#define _GNU_SOURCE
#include "CTaskdShim.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/// `directory`/`name` as a short path through /proc/self/fd (a state folder may be longer than
/// sun_path holds); the directory's O_PATH fd in *dirfd, to close after the bind or connect.
static int keeper_address(const char *directory, const char *name, struct sockaddr_un *address, int *dirfd) {
    *dirfd = open(directory, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0) return -1;
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    int n = snprintf(address->sun_path, sizeof address->sun_path, "/proc/self/fd/%d/%s", *dirfd, name);
    if (n < 0 || (size_t)n >= sizeof address->sun_path) {
        close(*dirfd);
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/// A SOCK_SEQPACKET socket bound and listening at `directory`/`name` (`listening`), or connected to it.
static int keeper_socket(const char *directory, const char *name, int listening) {
    struct sockaddr_un address;
    int dirfd;
    if (keeper_address(directory, name, &address, &dirfd) < 0) return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int r = fd < 0 ? -1 : 0;
    if (r == 0 && listening) {
        unlinkat(dirfd, name, 0);
        mode_t old = umask(0077);
        r = bind(fd, (struct sockaddr *)&address, sizeof address);
        umask(old);
        if (r == 0) r = listen(fd, 4);
    } else if (r == 0) {
        r = connect(fd, (struct sockaddr *)&address, sizeof address);
    }
    int saved = errno;
    if (r < 0 && fd >= 0) close(fd);
    close(dirfd);
    errno = saved;
    return r < 0 ? -1 : fd;
}

int taskd_keeper_listen(const char *directory, const char *name) { return keeper_socket(directory, name, 1); }

int taskd_keeper_connect(const char *directory, const char *name) { return keeper_socket(directory, name, 0); }

pid_t taskd_keeper_start(const char *executable, int listen_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        posix_spawn_file_actions_adddup2(&actions, devnull, 0);
        posix_spawn_file_actions_adddup2(&actions, devnull, 1);
    }
    posix_spawn_file_actions_adddup2(&actions, listen_fd, 3);
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigfillset(&defaults);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {(char *)"taskd-keeper", NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (devnull >= 0) close(devnull);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return pid;
}

int taskd_keeper_sendmsg(int sock, const struct taskd_keeper_message *message, const char *payload, size_t length,
                          const int *fds, int nfds) {
    struct iovec iov[2] = {{(void *)message, sizeof *message}, {(void *)payload, length}};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = length ? 2 : 1};
    if (nfds > 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buffer;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : 0;
}

int taskd_keeper_request_spawn(int sock, const char *run_id, const char *path, char *const argv[],
                               char *const envp[], const char *cwd, const struct taskd_exec_identity *id,
                               const int *fds, int nfds, const char *snapshot, size_t snapshot_length) {
    struct taskd_keeper_message m = {.type = TASKD_KEEPER_SPAWN};
    snprintf(m.run_id, sizeof m.run_id, "%s", run_id);
    m.set_groups = id->set_groups;
    m.ngroups = id->set_groups ? id->ngroups : 0;
    m.set_gid = id->set_gid;
    m.gid = id->gid;
    m.set_uid = id->set_uid;
    m.uid = id->uid;
    m.set_umask = id->set_umask;
    m.umask = id->umask;
    m.set_nice = id->set_nice;
    m.nice = id->nice;
    m.has_cwd = cwd != NULL;
    // The payload: the groups, then path, cwd, argv and envp, each string with its NUL.
    size_t length = sizeof(gid_t) * (size_t)m.ngroups + strlen(path) + 1 + (cwd ? strlen(cwd) + 1 : 0);
    for (m.argc = 0; argv[m.argc]; m.argc++) length += strlen(argv[m.argc]) + 1;
    for (m.envc = 0; envp[m.envc]; m.envc++) length += strlen(envp[m.envc]) + 1;
    m.status = (int32_t)snapshot_length;
    length += snapshot_length;
    char *payload = malloc(length ? length : 1);
    if (!payload) return -1;
    char *p = payload;
    if (m.ngroups) {
        memcpy(p, id->groups, sizeof(gid_t) * (size_t)m.ngroups);
        p += sizeof(gid_t) * (size_t)m.ngroups;
    }
    p = stpcpy(p, path) + 1;
    if (cwd) p = stpcpy(p, cwd) + 1;
    for (uint32_t i = 0; i < m.argc; i++) p = stpcpy(p, argv[i]) + 1;
    for (uint32_t i = 0; i < m.envc; i++) p = stpcpy(p, envp[i]) + 1;
    if (snapshot_length) memcpy(p, snapshot, snapshot_length);
    m.payload = (uint32_t)length;
    int r = taskd_keeper_sendmsg(sock, &m, payload, length, fds, nfds);
    int saved = errno;
    free(payload);
    errno = saved;
    return r;
}

int taskd_keeper_send_output(int sock, pid_t pid, int pipe, int text, uint64_t consume, uint32_t records,
                             const char *payload, size_t length) {
    struct taskd_keeper_message m = {.type = TASKD_KEEPER_OUTPUT, .pid = pid, .step = pipe, .exited = text,
                                     .cpu_usec = consume, .argc = records, .payload = (uint32_t)length};
    return taskd_keeper_sendmsg(sock, &m, payload, length, NULL, 0);
}

ssize_t taskd_tee(int from, int to, size_t length) {
    ssize_t n;
    do n = tee(from, to, length, SPLICE_F_NONBLOCK);
    while (n < 0 && errno == EINTR);
    return n;
}

int taskd_keeper_send_note(int sock, pid_t pid, const char *snapshot, size_t length) {
    struct taskd_keeper_message m = {.type = TASKD_KEEPER_NOTE, .pid = pid, .payload = (uint32_t)length};
    return taskd_keeper_sendmsg(sock, &m, snapshot, length, NULL, 0);
}

int taskd_keeper_send(int sock, uint32_t type, pid_t pid) {
    struct taskd_keeper_message m = {.type = type, .pid = pid};
    return taskd_keeper_sendmsg(sock, &m, NULL, 0, NULL, 0);
}

int taskd_keeper_receive(int sock, struct taskd_keeper_message *message, int fds[3], int *nfds, int dontwait,
                         char **payload, size_t *length) {
    union {
        char buffer[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } control;
    *nfds = 0;
    if (payload) {
        *payload = NULL;
        *length = 0;
    }
    // The size of what waits, to receive a payload after the message whole.
    size_t extra = 0;
    if (payload) {
        struct taskd_keeper_message peek;
        ssize_t size;
        do size = recv(sock, &peek, sizeof peek, MSG_PEEK | MSG_TRUNC | (dontwait ? MSG_DONTWAIT : 0));
        while (size < 0 && errno == EINTR);
        if (size < 0) return -1;
        if ((size_t)size > sizeof *message) {
            extra = (size_t)size - sizeof *message;
            *payload = malloc(extra);
            if (!*payload) extra = 0;
        }
    }
    struct iovec iov[2] = {{message, sizeof *message}, {payload ? *payload : NULL, extra}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = extra ? 2 : 1, .msg_control = control.buffer,
                         .msg_controllen = sizeof control.buffer};
    ssize_t n;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | (dontwait ? MSG_DONTWAIT : 0));
    while (n < 0 && errno == EINTR);
    if (extra && n > (ssize_t)sizeof *message) {
        *length = (size_t)n - sizeof *message;
    } else if (payload && *payload) {
        free(*payload);
        *payload = NULL;
    }
    if (n < 0) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *received = (int *)CMSG_DATA(c);
        for (int i = 0; i < count; i++) {
            if (*nfds < 3) fds[(*nfds)++] = received[i];
            else close(received[i]);
        }
    }
    if (n == 0) return 0;
    if ((size_t)n < sizeof *message) {
        for (int i = 0; i < *nfds; i++) close(fds[i]);
        *nfds = 0;
        errno = EPROTO;
        return -1;
    }
    return 1;
}
