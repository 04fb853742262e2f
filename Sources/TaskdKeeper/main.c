// taskd-keeper: the parent of taskd's command runs, so that they outlive taskd.
//
// taskd starts it once, in a session of its own, with a listening socket on fd 3 (in taskd's state
// folder), and asks it over that socket to spawn each command run (the same vfork + exec as taskd's
// own, taskd_spawn_as). The keeper is each run's parent and a child subreaper: it reaps every run
// and keeps its wait status and resource usage, and it holds a copy of the read ends of the run's
// pipes, so a run that writes while no taskd reads blocks instead of dying of SIGPIPE. When taskd
// dies (a crash, kill -9), the runs go on; the next taskd connects, lists the runs held (their pids,
// read ends, and the status of those that ended meanwhile) and takes them over. The keeper answers
// one taskd at a time (the newest connection), only of its own user or root; it exits when taskd
// says QUIT (a clean stop), once no taskd is connected and it holds no run, or when no taskd has
// come back for 10 minutes after all its runs ended (their statuses are then lost).
// A run's output is journaled by the keeper, from entries taskd makes: taskd reads the pipes with
// tee(2), which leaves the bytes in them, and sends the entries of the complete lines it read with
// their length (OUTPUT); the keeper writes the entries (to journald, or as text to its standard
// error) and then takes those bytes out of the pipe, in one step that a taskd killed meanwhile
// cannot cut in two. Lines a dead taskd had read but not sent are still in the pipe for the next
// one: none is lost and none is written twice.
// Single-threaded: poll over the listening socket, the connection and a signalfd for SIGCHLD.
#define _GNU_SOURCE
#include "keeper.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct run *runs;
size_t run_count;
static size_t run_capacity;
int client = -1;
/// Answers to the connection are not needed (a taskd that went away: see finish_client).
static int unanswered;

void drop_client(void) {
    if (client >= 0) close(client);
    client = -1;
}

static void lose_client(void);

int send_to_client(const struct taskd_keeper_message *m, const int *fds, int nfds) {
    if (client < 0) return -1;
    if (taskd_keeper_sendmsg(client, m, NULL, 0, fds, nfds) < 0) {
        if (!unanswered) lose_client();
        return -1;
    }
    return 0;
}

static void fill_exit(struct taskd_keeper_message *m, const struct run *r) {
    m->pid = r->pid;
    m->exited = r->exited;
    m->status = r->status;
    m->cpu_usec = r->cpu_usec;
    m->read_blocks = r->read_blocks;
    m->write_blocks = r->write_blocks;
    memcpy(m->run_id, r->run_id, sizeof m->run_id);
}

static void forget(size_t i) {
    for (int k = 0; k < 3; k++)
        if (runs[i].fds[k] >= 0) close(runs[i].fds[k]);
    free(runs[i].snapshot);
    runs[i] = runs[--run_count];
}

/// How long a keeper without taskd keeps runs that have all ended (their statuses) before it exits.
#define IDLE_LIMIT_MS (10 * 60 * 1000)

static int all_ended(void) {
    for (size_t i = 0; i < run_count; i++)
        if (!runs[i].exited) return 0;
    return 1;
}

/// Reaps every child that has exited; a run's status is kept and sent to taskd.
static void reap(void) {
    for (;;) {
        int status;
        struct rusage usage;
        pid_t pid = wait4(-1, &status, WNOHANG, &usage);
        if (pid <= 0) return;
        for (size_t i = 0; i < run_count; i++) {
            if (runs[i].pid != pid) continue;
            struct run *r = &runs[i];
            r->exited = 1;
            r->status = status;
            r->cpu_usec = (uint64_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000u +
                          (uint64_t)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
            r->read_blocks = (uint64_t)usage.ru_inblock;
            r->write_blocks = (uint64_t)usage.ru_oublock;
            struct taskd_keeper_message m = {.type = TASKD_KEEPER_EXITED};
            fill_exit(&m, r);
            send_to_client(&m, NULL, 0);
            break;
        }
    }
}

/// Reads the client's next message whole, with up to 8 descriptors passed with it (more are
/// closed): the buffer (one byte longer, to free), its size and how much was read; NULL if no
/// whole message could be had (the client is dropped).
static char *receive_whole(ssize_t *size, ssize_t *got, int fds[8], int *nfds) {
    struct taskd_keeper_message peek;
    *size = recv(client, &peek, sizeof peek, MSG_PEEK | MSG_TRUNC);
    if (*size < (ssize_t)sizeof peek) {
        drop_client();
        return NULL;
    }
    char *buffer = malloc((size_t)*size + 1);
    if (!buffer) {
        drop_client();
        return NULL;
    }
    struct iovec iov = {buffer, (size_t)*size};
    union {
        char data[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.data,
                         .msg_controllen = sizeof control.data};
    *got = recvmsg(client, &msg, MSG_CMSG_CLOEXEC);
    *nfds = 0;
    if (*got < 0) return buffer;  // no control data to walk: the caller sees the short read
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < count; i++) {
            int fd = ((int *)CMSG_DATA(c))[i];
            if (*nfds < 8) fds[(*nfds)++] = fd;
            else close(fd);
        }
    }
    return buffer;
}

/// Spawns the command a SPAWN message `m` describes (its strings already split out) and keeps
/// it as a run, taking its three read ends out of `fds`; the reply to send.
static struct taskd_keeper_message start_run(const struct taskd_keeper_message *m, const char *path, char **argv,
                                             char **envp, const char *cwd, gid_t *groups, int fds[8], int nfds,
                                             const char *snapshot, size_t snapshot_length) {
    struct taskd_keeper_message reply = {.type = TASKD_KEEPER_FAILED, .step = TASKD_STEP_FDS, .error = EPROTO};
    if (run_count == run_capacity) {
        size_t capacity = run_capacity ? run_capacity * 2 : 16;
        struct run *grown = realloc(runs, capacity * sizeof *runs);
        if (!grown) return reply;
        runs = grown;
        run_capacity = capacity;
    }
    struct taskd_exec_identity id = {
        .set_groups = m->set_groups, .groups = groups, .ngroups = m->ngroups,
        .set_gid = m->set_gid, .gid = m->gid, .set_uid = m->set_uid, .uid = m->uid,
        .set_umask = m->set_umask, .umask = m->umask, .set_nice = m->set_nice, .nice = m->nice,
        .set_cgroup = nfds == 8, .cgroup_fd = nfds == 8 ? fds[7] : -1};
    int step = 0;
    pid_t pid = taskd_spawn_as(path, argv, envp, fds[0], fds[1], fds[2], fds[3], cwd, &id, &step);
    if (pid <= 0) {
        reply.step = step;
        reply.error = errno;
        return reply;
    }
    struct run *r = &runs[run_count++];
    memset(r, 0, sizeof *r);
    r->pid = pid;
    memcpy(r->run_id, m->run_id, sizeof r->run_id);
    r->run_id[sizeof r->run_id - 1] = 0;
    for (int k = 0; k < 3; k++) {
        r->fds[k] = fds[4 + k];
        fds[4 + k] = -1;
    }
    r->snapshot = snapshot_length ? malloc(snapshot_length) : NULL;
    if (r->snapshot) {
        memcpy(r->snapshot, snapshot, snapshot_length);
        r->snapshot_length = snapshot_length;
    }
    return (struct taskd_keeper_message){.type = TASKD_KEEPER_SPAWNED, .pid = pid};
}

/// A SPAWN request: the message, its strings and descriptors, read whole.
static void spawn(void) {
    ssize_t size, n;
    int fds[8], nfds;
    char *buffer = receive_whole(&size, &n, fds, &nfds);
    if (!buffer) return;
    struct taskd_keeper_message m;
    memcpy(&m, buffer, sizeof m);
    struct taskd_keeper_message reply = {.type = TASKD_KEEPER_FAILED, .step = TASKD_STEP_FDS, .error = EPROTO};
    size_t argc = m.argc, envc = m.envc;
    char **argv = calloc(argc + 1, sizeof(char *)), **envp = calloc(envc + 1, sizeof(char *));
    if (n == size && nfds >= 7 && m.payload == (uint32_t)(size - (ssize_t)sizeof m) && argv && envp && argc > 0 &&
        m.ngroups >= 0 && (size_t)m.ngroups * sizeof(gid_t) <= m.payload) {
        buffer[size] = 0;
        char *p = buffer + sizeof m, *end = buffer + size;
        gid_t *groups = (gid_t *)p;  // the payload starts 8-aligned, right after the message
        p += sizeof(gid_t) * (size_t)m.ngroups;
        const char *path = p;
        p += strlen(p) + 1;
        const char *cwd = NULL;
        if (m.has_cwd && p < end) {
            cwd = p;
            p += strlen(p) + 1;
        }
        int complete = 1;
        for (size_t i = 0; i < argc; i++) {
            if (p >= end) complete = 0;
            argv[i] = complete ? p : NULL;
            if (complete) p += strlen(p) + 1;
        }
        for (size_t i = 0; i < envc; i++) {
            if (p >= end) complete = 0;
            envp[i] = complete ? p : NULL;
            if (complete) p += strlen(p) + 1;
        }
        size_t snapshot_length =
            m.status > 0 && complete && p <= end && (size_t)(end - p) >= (size_t)m.status ? (size_t)m.status : 0;
        if (complete) reply = start_run(&m, path, argv, envp, cwd, groups, fds, nfds, p, snapshot_length);
    }
    for (int i = 0; i < nfds; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(argv);
    free(envp);
    free(buffer);
    send_to_client(&reply, NULL, 0);
}

/// NOTE: the run's snapshot, replaced.
static void note(void) {
    struct taskd_keeper_message m;
    int fds[3], nfds = 0;
    char *payload = NULL;
    size_t length = 0;
    if (taskd_keeper_receive(client, &m, fds, &nfds, 1, &payload, &length) <= 0) return drop_client();
    for (int i = 0; i < nfds; i++) close(fds[i]);
    for (size_t i = 0; i < run_count && payload; i++) {
        if (runs[i].pid != m.pid) continue;
        free(runs[i].snapshot);
        runs[i].snapshot = payload;
        runs[i].snapshot_length = length;
        payload = NULL;
    }
    free(payload);
}

/// LIST: every run held, with its read ends and its status if it has ended.
static void list(void) {
    for (size_t i = 0; i < run_count; i++) {
        struct taskd_keeper_message m = {.type = TASKD_KEEPER_RUN};
        fill_exit(&m, &runs[i]);
        int fds[3], nfds = 0;
        for (int k = 0; k < 3; k++)
            if (runs[i].fds[k] >= 0) fds[nfds++] = runs[i].fds[k];
        m.payload = (uint32_t)runs[i].snapshot_length;
        if (client < 0) return;
        if (taskd_keeper_sendmsg(client, &m, runs[i].snapshot, runs[i].snapshot_length, fds, nfds) < 0) {
            lose_client();
            return;
        }
    }
    struct taskd_keeper_message end = {.type = TASKD_KEEPER_LIST_END};
    send_to_client(&end, NULL, 0);
}

/// One message from taskd; 1 to go on, 0 when asked to quit.
static int serve(void) {
    struct taskd_keeper_message m;
    ssize_t n = recv(client, &m, sizeof m, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 1;
    if (n < (ssize_t)sizeof m) {
        drop_client();
        return 1;
    }
    if (m.type == TASKD_KEEPER_SPAWN) {
        spawn();
        return 1;
    }
    if (m.type == TASKD_KEEPER_OUTPUT) {
        output();
        return 1;
    }
    if (m.type == TASKD_KEEPER_NOTE) {
        note();
        return 1;
    }
    int fds[3], nfds = 0;
    if (taskd_keeper_receive(client, &m, fds, &nfds, 1, NULL, NULL) <= 0) {
        drop_client();
        return 1;
    }
    for (int i = 0; i < nfds; i++) close(fds[i]);
    switch (m.type) {
    case TASKD_KEEPER_RELEASE:
        for (size_t i = 0; i < run_count; i++)
            if (runs[i].pid == m.pid) {
                forget(i);
                break;
            }
        return 1;
    case TASKD_KEEPER_LIST:
        list();
        return 1;
    case TASKD_KEEPER_QUIT:
        return 0;
    case TASKD_KEEPER_HELLO: {
        struct taskd_keeper_message hello = {.type = TASKD_KEEPER_HELLO, .pid = getpid(),
                                             .status = TASKD_KEEPER_PROTOCOL};
        send_to_client(&hello, NULL, 0);
        return 1;
    }
    default:
        drop_client();
        return 1;
    }
}

/// Before the next taskd is served, what the one before sent of its runs' output and state
/// (OUTPUT, NOTE) is done, so that the next one does not read again what it asked to write.
static void finish_client(void) {
    unanswered = 1;
    while (client >= 0) {
        struct taskd_keeper_message m;
        ssize_t n = recv(client, &m, sizeof m, MSG_PEEK | MSG_DONTWAIT);
        if (n < (ssize_t)sizeof m) break;
        if (m.type == TASKD_KEEPER_OUTPUT) {
            output();
            continue;
        }
        if (m.type == TASKD_KEEPER_NOTE) {
            note();
            continue;
        }
        // The rest is read and dropped, but for RELEASE: a run whose end it recorded is forgotten.
        // (No SPAWN is done for a taskd that is gone, no QUIT obeyed: the next taskd decides.)
        int fds[3], nfds = 0;
        if (taskd_keeper_receive(client, &m, fds, &nfds, 1, NULL, NULL) <= 0) break;
        for (int i = 0; i < nfds; i++) close(fds[i]);
        if (m.type != TASKD_KEEPER_RELEASE) continue;
        for (size_t i = 0; i < run_count; i++)
            if (runs[i].pid == m.pid) {
                forget(i);
                break;
            }
    }
    unanswered = 0;
}

/// The taskd served went away (an answer could not be sent, or another connected): what it sent
/// of its runs' output and state is done first.
static void lose_client(void) {
    finish_client();
    drop_client();
}

/// A new connection replaces the one before, if it comes from this user or root.
static void accept_client(int listener) {
    int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || (cred.uid != getuid() && cred.uid != 0)) {
        close(fd);
        return;
    }
    lose_client();
    client = fd;
}

int main(void) {
    const int listener = 3;
    if (fcntl(listener, F_SETFD, FD_CLOEXEC) < 0) return 2;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    prctl(PR_SET_NAME, "taskd-keeper", 0, 0, 0);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int children = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (children < 0) return 2;
    int served = 0;
    for (;;) {
        // Without taskd and without runs there is nothing to keep (taskd starts a new keeper).
        if (served && client < 0 && run_count == 0) return 0;
        // Without taskd, runs that have all ended are kept for the next one for IDLE_LIMIT_MS.
        int idle = served && client < 0 && all_ended();
        struct pollfd p[3] = {{listener, POLLIN, 0}, {children, POLLIN, 0}, {client, POLLIN, 0}};
        int ready = poll(p, client >= 0 ? 3 : 2, idle ? IDLE_LIMIT_MS : -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return 2;
        }
        if (ready == 0 && idle) return 0;
        if (p[1].revents) {
            struct signalfd_siginfo info;
            while (read(children, &info, sizeof info) > 0) {}
            reap();
        }
        if (client >= 0 && p[2].revents) {
            if (!(p[2].revents & POLLIN)) drop_client();
            else if (!serve()) return 0;
        }
        if (p[0].revents & POLLIN) {
            accept_client(listener);
            served = 1;
        }
    }
}
