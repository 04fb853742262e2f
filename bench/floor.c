// floor: the machine's own limits for each benchmark scenario, measured by the simplest C that does
// the same job, and the load and stamp helpers the benchmark drives taskd with. Every time is
// CLOCK_REALTIME (stamps cross processes) or CLOCK_MONOTONIC, printed in nanoseconds, one per line.
//
//   floor rtt N                       Unix connect + request + reply + close to a C server (forked),
//                                     samples PACE_US apart, as stamp-client's
//   floor spawn-server SOCK FIFO      accept, read a request, posix_spawn "floor stamp FIFO", reply
//   floor stamp FIFO                  write CLOCK_REALTIME ns to FIFO; with LISTEN_FDS, answer fd 3
//   floor stamp-client SOCK N REQ FIFO  per sample: t0, connect, send REQ\0, read a reply, close, read
//                                     the handler's stamp from FIFO; prints stamp - t0; PACE_US apart
//   floor timers N SPAN_MS            N deadlines at random in SPAN_MS, a binary heap, one timerfd:
//                                     prints each lateness
//   floor timerfd N INTERVAL_MS       one timerfd armed N times: prints each overshoot
//   floor kill-reap N                 a child ignoring SIGTERM in its own group: SIGKILL + waitpid
//   floor deadline-reap N BUDGET_MS   taskd's whole job in C: posix_spawn "floor hang" in its own group,
//                                     a timerfd at its budget's end, SIGKILL, poll its pidfd, waitpid:
//                                     prints reaped - deadline
//   floor load SOCK CLIENTS SECONDS REQ  CLIENTS threads on persistent connections send REQ\0 and
//                                     read the reply, as fast as answered: prints the count
//   floor durable-server SOCK LOG [SYNC_MS]  the sustained floor: an epoll loop reads requests from
//                                     any number of clients, a writer thread appends one line per
//                                     request to LOG (kept zero-filled ahead, as taskd does) and replies
//                                     to the batch's requests; with SYNC_MS 0 (the default) it fdatasyncs
//                                     each batch before replying (group commit), else it replies once
//                                     written and fdatasyncs at most every SYNC_MS (taskd's
//                                     SyncIntervalSec=)
//   floor accept-idle SOCK            blocks in accept(2) forever (the idle floor)
//   floor hang                        ignores SIGTERM and waits for SIGKILL (a handler over budget)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static struct sockaddr_un address(const char *path) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    return a;
}

static int listen_on(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = address(path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0) die("listen");
    return fd;
}

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = address(path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write");
        p += w;
        n -= (size_t)w;
    }
}

/// Reads until a NUL (the Varlink message end) or EOF; the bytes read, or -1 at EOF before any.
static ssize_t read_message(int fd, char *buf, size_t size) {
    size_t used = 0;
    while (used < size) {
        ssize_t r = read(fd, buf + used, size - used);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return used ? (ssize_t)used : -1;
        used += (size_t)r;
        if (memchr(buf + used - r, 0, (size_t)r)) return (ssize_t)used;
    }
    return (ssize_t)used;
}

static const char reply[] = "{\"parameters\":{}}";

// The pause between two samples of a request-reply client. stamp-client needs it (the run must end
// so that the next wake starts one), and rtt keeps it too: a server woken from idle is slower than
// one kept hot in a tight ping-pong, and a floor must meet the conditions of what it is the floor of.
#define PACE_US 5000

static void rtt(int n) {
    char path[] = "/tmp/floor-rtt-XXXXXX";
    if (!mkdtemp(path)) die("mkdtemp");
    char sock[128];
    snprintf(sock, sizeof sock, "%s/s", path);
    int lfd = listen_on(sock);
    pid_t server = fork();
    if (server == 0) {
        char buf[4096];
        for (;;) {
            int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c < 0) continue;
            if (read_message(c, buf, sizeof buf) > 0) write_all(c, reply, sizeof reply);
            close(c);
        }
    }
    close(lfd);
    const char request[] = "{\"method\":\"io.taskd.Scheduler.Wake\",\"parameters\":{\"target\":\"noop\"}}";
    char buf[4096];
    for (int i = 0; i < n; i++) {
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        int fd = connect_to(sock);
        write_all(fd, request, sizeof request);
        read_message(fd, buf, sizeof buf);
        close(fd);
        printf("%lld\n", (long long)(now_ns(CLOCK_MONOTONIC) - t0));
        usleep(PACE_US);
    }
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(sock);
    rmdir(path);
}

static void stamp(const char *fifo) {
    int64_t t = now_ns(CLOCK_REALTIME);
    char line[64];
    int len = snprintf(line, sizeof line, "%lld\n", (long long)t);
    int fd = open(fifo, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        write_all(fd, line, (size_t)len);
        close(fd);
    }
    const char *listen_fds = getenv("LISTEN_FDS");
    if (listen_fds && atoi(listen_fds) >= 1) {  // systemd-socket-activate --accept: fd 3 is the client
        char buf[4096];
        if (read_message(3, buf, sizeof buf) > 0) write_all(3, reply, sizeof reply);
        close(3);
    }
}

static void spawn_server(const char *sock, const char *fifo, const char *self) {
    int lfd = listen_on(sock);
    char buf[4096];
    char *argv[] = {(char *)self, "stamp", (char *)fifo, NULL};
    for (;;) {
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        if (read_message(c, buf, sizeof buf) > 0) {
            pid_t pid;
            posix_spawn(&pid, self, NULL, NULL, argv, environ);
            write_all(c, reply, sizeof reply);
        }
        close(c);
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
    }
}

static void stamp_client(const char *sock, int n, const char *request, const char *fifo) {
    int stamps = open(fifo, O_RDWR | O_CLOEXEC);  // RDWR: never EOF between writers
    if (stamps < 0) die("open fifo");
    FILE *in = fdopen(stamps, "r");
    char buf[65536];
    for (int i = 0; i < n; i++) {
        int64_t t0 = now_ns(CLOCK_REALTIME);
        int fd = connect_to(sock);
        write_all(fd, request, strlen(request) + 1);
        if (read_message(fd, buf, sizeof buf) < 0) die("no reply");
        close(fd);
        long long t1;
        if (fscanf(in, "%lld", &t1) != 1) die("no stamp");
        printf("%lld\n", t1 - (long long)t0);
        fflush(stdout);
        usleep(PACE_US);  // let the run end, so that the next wake starts a run rather than joining it
    }
}

// A binary min-heap of deadlines.
static int64_t *heap;
static int heap_n;
static void heap_push(int64_t v) {
    int i = heap_n++;
    heap[i] = v;
    while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
        int64_t t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}
static int64_t heap_pop(void) {
    int64_t top = heap[0];
    heap[0] = heap[--heap_n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_n && heap[l] < heap[m]) m = l;
        if (r < heap_n && heap[r] < heap[m]) m = r;
        if (m == i) break;
        int64_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
    return top;
}

static void arm(int tfd, int64_t at) {
    struct itimerspec its = {.it_value = {.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000}};
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void timers(int n, int span_ms) {
    heap = malloc(sizeof *heap * (size_t)n);
    srand48(getpid());
    int64_t start = now_ns(CLOCK_MONOTONIC) + 200000000;
    for (int i = 0; i < n; i++) heap_push(start + (int64_t)(drand48() * span_ms * 1e6));
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    int64_t *late = malloc(sizeof *late * (size_t)n);
    int done = 0;
    while (heap_n > 0) {
        arm(tfd, heap[0]);
        uint64_t ticks;
        if (read(tfd, &ticks, sizeof ticks) < 0 && errno == EINTR) continue;
        int64_t now = now_ns(CLOCK_MONOTONIC);
        while (heap_n > 0 && heap[0] <= now) late[done++] = now - heap_pop();
    }
    for (int i = 0; i < done; i++) printf("%lld\n", (long long)late[i]);
}

// The floor of a submitted task's run: N one-shot CLOCK_REALTIME deadlines spread over SPAN_MS, each
// a timerfd expiry that posix_spawns `self stamp FIFO`; prints each stamp's lateness (ns).
static void timer_spawn(int n, int span_ms, const char *fifo, char *self) {
    heap = malloc(sizeof *heap * (size_t)n);
    srand48(getpid());
    int64_t start = now_ns(CLOCK_REALTIME) + 200000000;
    for (int i = 0; i < n; i++) heap_push(start + (int64_t)(drand48() * span_ms * 1e6));
    int stamps = open(fifo, O_RDWR | O_CLOEXEC);
    if (stamps < 0) die("open fifo");
    FILE *in = fdopen(stamps, "r");
    int tfd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
    char *argv[] = {self, "stamp", (char *)fifo, NULL};
    while (heap_n > 0) {
        int64_t due = heap_pop();
        arm(tfd, due);
        uint64_t ticks;
        while (read(tfd, &ticks, sizeof ticks) < 0 && errno == EINTR) {}
        pid_t pid;
        posix_spawn(&pid, self, NULL, NULL, argv, environ);
        long long stamp;
        if (fscanf(in, "%lld", &stamp) != 1) die("no stamp");
        waitpid(pid, NULL, 0);
        printf("%lld\n", stamp - (long long)due);
    }
}

static void timerfd_overshoot(int n, int interval_ms) {
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    for (int i = 0; i < n; i++) {
        int64_t at = now_ns(CLOCK_MONOTONIC) + (int64_t)interval_ms * 1000000;
        arm(tfd, at);
        uint64_t ticks;
        while (read(tfd, &ticks, sizeof ticks) < 0 && errno == EINTR) {}
        printf("%lld\n", (long long)(now_ns(CLOCK_MONOTONIC) - at));
    }
}

static void kill_reap(int n) {
    for (int i = 0; i < n; i++) {
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) < 0) die("pipe");
        pid_t child = fork();
        if (child == 0) {
            setpgid(0, 0);
            signal(SIGTERM, SIG_IGN);
            close(ready[0]);
            write_all(ready[1], "x", 1);
            for (;;) pause();
        }
        close(ready[1]);
        char c;
        while (read(ready[0], &c, 1) < 0 && errno == EINTR) {}
        close(ready[0]);
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        kill(-child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
        printf("%lld\n", (long long)(now_ns(CLOCK_MONOTONIC) - t0));
    }
}

static void deadline_reap(int n, int budget_ms, char *self) {
    char *argv[] = {self, "hang", NULL};
    for (int i = 0; i < n; i++) {
        posix_spawnattr_t attributes;
        posix_spawnattr_init(&attributes);
        posix_spawnattr_setpgroup(&attributes, 0);
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
        pid_t child;
        if (posix_spawn(&child, self, NULL, &attributes, argv, environ) != 0) die("posix_spawn");
        posix_spawnattr_destroy(&attributes);
        int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
        if (pidfd < 0) die("pidfd_open");
        int64_t deadline = now_ns(CLOCK_MONOTONIC) + (int64_t)budget_ms * 1000000;
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        struct itimerspec its = {.it_value = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000}};
        if (tfd < 0 || timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) die("timerfd");
        uint64_t expirations;
        while (read(tfd, &expirations, 8) < 0 && errno == EINTR) {}
        kill(-child, SIGKILL);
        struct pollfd exited = {.fd = pidfd, .events = POLLIN};
        while (poll(&exited, 1, -1) < 0 && errno == EINTR) {}
        int64_t reaped = now_ns(CLOCK_MONOTONIC);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
        close(tfd);
        close(pidfd);
        printf("%lld\n", (long long)(reaped - deadline));
    }
}

struct load_args {
    const char *sock, *request;
    int64_t until;
    long count;
};

static void *load_thread(void *p) {
    struct load_args *a = p;
    int fd = connect_to(a->sock);
    size_t len = strlen(a->request) + 1;
    char buf[65536];
    while (now_ns(CLOCK_MONOTONIC) < a->until) {
        write_all(fd, a->request, len);
        if (read_message(fd, buf, sizeof buf) < 0) break;
        a->count++;
    }
    close(fd);
    return NULL;
}

static void load(const char *sock, int clients, double seconds, const char *request) {
    pthread_t threads[256];
    struct load_args args[256];
    if (clients > 256) clients = 256;
    int64_t until = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
    for (int i = 0; i < clients; i++) {
        args[i] = (struct load_args){.sock = sock, .request = request, .until = until};
        pthread_create(&threads[i], NULL, load_thread, &args[i]);
    }
    long total = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(threads[i], NULL);
        total += args[i].count;
    }
    printf("%ld\n", total);
}

// The durable server's batch: the lines to write and the connections to answer once they are synced.
#define DURABLE_MAX 4096
#define DURABLE_CHUNK (256 * 1024)
static struct {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    char lines[DURABLE_MAX * 128];
    size_t used;
    int waiting[DURABLE_MAX];
    int count;
    int log;
    int64_t sync_ns;  // 0: each batch is synced before its replies
} durable = {.lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER};

static const char durable_reply[] =
    "{\"parameters\":{\"runs\":[{\"runId\":\"0123456789abcdef\",\"task\":\"quiet\",\"state\":\"running\"}]}}";

static void *durable_writer(void *unused) {
    (void)unused;
    static char lines[sizeof durable.lines], zeros[DURABLE_CHUNK];
    static int answer[DURABLE_MAX];
    off_t size = 0, capacity = DURABLE_CHUNK;  // durable_server wrote the first chunk of zeros
    int64_t synced = now_ns(CLOCK_MONOTONIC);
    for (;;) {
        pthread_mutex_lock(&durable.lock);
        while (durable.count == 0) pthread_cond_wait(&durable.ready, &durable.lock);
        size_t used = durable.used;
        int count = durable.count;
        memcpy(lines, durable.lines, used);
        memcpy(answer, durable.waiting, (size_t)count * sizeof(int));
        durable.used = 0;
        durable.count = 0;
        pthread_mutex_unlock(&durable.lock);
        if (pwrite(durable.log, lines, used, size) != (ssize_t)used) die("pwrite");
        size += (off_t)used;
        if (size > capacity - DURABLE_CHUNK / 2) {
            if (pwrite(durable.log, zeros, sizeof zeros, capacity) != (ssize_t)sizeof zeros) die("pwrite");
            capacity += DURABLE_CHUNK;
        }
        if (durable.sync_ns == 0 && fdatasync(durable.log) < 0) die("fdatasync");
        for (int i = 0; i < count; i++) send(answer[i], durable_reply, sizeof durable_reply, MSG_NOSIGNAL);
        if (durable.sync_ns > 0 && now_ns(CLOCK_MONOTONIC) - synced >= durable.sync_ns) {
            if (fdatasync(durable.log) < 0) die("fdatasync");
            synced = now_ns(CLOCK_MONOTONIC);
        }
    }
    return NULL;
}

static void durable_server(const char *sock, const char *log, int sync_ms) {
    durable.sync_ns = (int64_t)sync_ms * 1000000;
    durable.log = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (durable.log < 0) die("open");
    static char zeros[DURABLE_CHUNK];
    write_all(durable.log, zeros, sizeof zeros);
    if (fsync(durable.log) < 0) die("fsync");
    pthread_t writer;
    pthread_create(&writer, NULL, durable_writer, NULL);
    int lfd = listen_on(sock), ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &event);
    struct epoll_event events[64];
    char buf[65536];
    uint64_t serial = 0;
    for (;;) {
        int n = epoll_wait(ep, events, 64, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                struct epoll_event e = {.events = EPOLLIN, .data.fd = c};
                if (c >= 0) epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
                continue;
            }
            ssize_t r = recv(fd, buf, sizeof buf, 0);
            if (r <= 0) {
                close(fd);
                continue;
            }
            pthread_mutex_lock(&durable.lock);
            for (ssize_t k = 0; k < r; k++) {
                if (buf[k] != 0 || durable.count == DURABLE_MAX) continue;
                durable.used += (size_t)snprintf(durable.lines + durable.used, 128,
                    "{\"add\":\"%016llx\",\"atUSec\":%lld,\"kind\":\"appRefresh\",\"task\":\"quiet\"}\n",
                    (unsigned long long)++serial, (long long)(now_ns(CLOCK_REALTIME) / 1000));
                durable.waiting[durable.count++] = fd;
            }
            pthread_cond_signal(&durable.ready);
            pthread_mutex_unlock(&durable.lock);
        }
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "rtt")) rtt(atoi(argv[2]));
    else if (argc >= 4 && !strcmp(argv[1], "spawn-server")) spawn_server(argv[2], argv[3], argv[0]);
    else if (argc >= 3 && !strcmp(argv[1], "stamp")) stamp(argv[2]);
    else if (argc >= 6 && !strcmp(argv[1], "stamp-client")) stamp_client(argv[2], atoi(argv[3]), argv[4], argv[5]);
    else if (argc >= 4 && !strcmp(argv[1], "timers")) timers(atoi(argv[2]), atoi(argv[3]));
    else if (argc >= 4 && !strcmp(argv[1], "timerfd")) timerfd_overshoot(atoi(argv[2]), atoi(argv[3]));
    else if (argc >= 5 && !strcmp(argv[1], "timer-spawn")) timer_spawn(atoi(argv[2]), atoi(argv[3]), argv[4], argv[0]);
    else if (argc >= 3 && !strcmp(argv[1], "kill-reap")) kill_reap(atoi(argv[2]));
    else if (argc >= 4 && !strcmp(argv[1], "deadline-reap")) deadline_reap(atoi(argv[2]), atoi(argv[3]), argv[0]);
    else if (argc >= 6 && !strcmp(argv[1], "load")) load(argv[2], atoi(argv[3]), atof(argv[4]), argv[5]);
    else if (argc >= 4 && !strcmp(argv[1], "durable-server")) durable_server(argv[2], argv[3], argc >= 5 ? atoi(argv[4]) : 0);
    else if (argc >= 3 && !strcmp(argv[1], "accept-idle")) {
        int lfd = listen_on(argv[2]);
        for (;;) accept(lfd, NULL, NULL);
    } else if (argc >= 2 && !strcmp(argv[1], "hang")) {
        signal(SIGTERM, SIG_IGN);
        for (;;) pause();
    } else {
        fprintf(stderr, "usage: see the comment at the top of bench/floor.c\n");
        return 2;
    }
    return 0;
}
