// Linux calls that Swift cannot reach from Glibc: variadic wrappers and _GNU_SOURCE-only declarations.
#pragma once
#include <sys/types.h>

/// pidfd_open(2); returns the fd or -1 with errno set.
int taskd_pidfd_open(pid_t pid);
/// prctl(PR_SET_CHILD_SUBREAPER, 1); 0 or -1 with errno.
int taskd_set_child_subreaper(void);
/// malloc_trim(0): returns free heap pages to the kernel; 1 if any were released.
int taskd_malloc_trim(void);
/// memfd_create(2) with MFD_CLOEXEC; the fd or -1 with errno.
int taskd_memfd_create(const char *name);
/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK.
int taskd_accept(int fd);
/// SO_PEERCRED of a connected Unix socket; 0 or -1 with errno.
int taskd_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);
/// The peer's supplementary groups (SO_PEERGROUPS) into groups; their count, or -1 (errno set).
int taskd_peer_groups(int fd, gid_t *groups, int max);
/// pipe2(2) with O_CLOEXEC.
int taskd_pipe_cloexec(int fds[2]);
/// eventfd(2) with EFD_CLOEXEC | EFD_NONBLOCK; the fd or -1 with errno.
int taskd_eventfd(void);

#include <sys/random.h>  // getrandom(2), for SystemRandom

#include <spawn.h>
/// posix_spawn_file_actions_addchdir_np (glibc ≥ 2.29).
int taskd_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);
/// posix_spawn_file_actions_addclosefrom_np (glibc ≥ 2.34): close every fd ≥ lowfd in the child.
int taskd_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd);

#include <stdint.h>
#include <sys/epoll.h>
/// epoll_ctl(ADD/MOD) with `events` and `token` as the event's data.u64.
int taskd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
/// epoll_wait into parallel arrays of tokens and event masks; the count, or -1 with errno.
int taskd_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms);

/// A CLOCK_REALTIME timerfd armed far in the future with TFD_TIMER_CANCEL_ON_SET: reading it fails
/// with ECANCELED once the wall clock is set. Returns the fd, or -1 with errno.
int taskd_clock_change_fd(void);
/// Arms such a timerfd again after it reported a change.
int taskd_clock_change_rearm(int fd);

/// tzname[0] (standard) or tzname[1] (daylight saving) after tzset(); never NULL.
const char *taskd_tzname(int dst);

/// An inotify fd (non-blocking) watching `directory` for entries created, replaced, moved in or
/// deleted; -1 with errno on failure.
int taskd_inotify_directory(const char *directory);
/// Reads every pending event of such an fd; 1 if any concerned the entry `name`, else 0.
int taskd_inotify_saw(int fd, const char *name);
/// Adds `path` to inotify fd `fd`, for files written, created, deleted or moved in or out; -1 with errno.
int taskd_inotify_add(int fd, const char *path);
/// Reads (and drops) whatever `fd` has to read, without blocking.
void taskd_drain(int fd);
/// A non-blocking netlink socket for the kernel's device events (NETLINK_KOBJECT_UEVENT, group 1);
/// -1 where there is none (a container, no permission).
int taskd_uevent_socket(void);

/// What a command changes about itself between fork and exec ([Exec] User=, Group=, ...).
struct taskd_exec_identity {
    int set_groups;        ///< setgroups(ngroups, groups) when non-zero
    const gid_t *groups;
    int ngroups;
    int set_gid;           ///< setresgid(gid) when non-zero
    gid_t gid;
    int set_uid;           ///< setresuid(uid) when non-zero
    uid_t uid;
    int set_umask;         ///< umask(umask) when non-zero
    mode_t umask;
    int set_nice;          ///< setpriority(PRIO_PROCESS, 0, nice) when non-zero
    int nice;
    int set_cgroup;        ///< write "0" to cgroup_fd (a cgroup.procs) first, when non-zero
    int cgroup_fd;
};

/// The step of taskd_spawn_as that failed, reported through *failed_step.
enum taskd_spawn_step {
    TASKD_STEP_FORK = 1, TASKD_STEP_SETPGID, TASKD_STEP_FDS, TASKD_STEP_NICE, TASKD_STEP_GROUPS,
    TASKD_STEP_GID, TASKD_STEP_UID, TASKD_STEP_CHDIR, TASKD_STEP_EXEC, TASKD_STEP_CGROUP,
};

/// vfork + exec for a command that changes identity or enters a cgroup (posix_spawn can do
/// neither): the child moves itself into its cgroup (before it could fork), leads its own process
/// group, has every signal reset and unblocked, fds 0-3 from in/out/err/notify and nothing else
/// open, then nice, umask, groups, gid, uid, chdir (as the new user), execve. Only
/// async-signal-safe calls and raw syscalls run in the child, which shares the parent's memory
/// until it execs (all signals stay blocked until it has reset their handlers). Returns the pid once the exec has succeeded, or -1 with
/// errno and *failed_step set (the failed child already reaped).
pid_t taskd_spawn_as(const char *path, char *const argv[], char *const envp[], int in, int out, int err, int notify,
                     const char *cwd, const struct taskd_exec_identity *identity, int *failed_step);

/// A non-blocking CLOCK_MONOTONIC timerfd; -1 with errno.
int taskd_monotonic_timer(void);
/// Arms it to expire at `usec` on CLOCK_MONOTONIC (absolute; a time already past fires at once),
/// or disarms it when usec is 0.
int taskd_monotonic_timer_arm(int fd, uint64_t usec);

/// Limits glibc's malloc arenas to `limit` (mallopt M_ARENA_MAX) unless MALLOC_ARENA_MAX, or an
/// arena_max in GLIBC_TUNABLES, is set in the environment. 1 if set, 0 if the environment wins.
int taskd_limit_malloc_arenas(int limit);
/// Fixes glibc's mmap threshold at `bytes` (mallopt M_MMAP_THRESHOLD, which also stops it and the
/// trim threshold from growing) unless MALLOC_MMAP_THRESHOLD_ or an mmap_threshold in
/// GLIBC_TUNABLES is set; 1 if set.
int taskd_fix_mmap_threshold(int bytes);

/// getxattr(2) (the Glibc module does not export it): the attribute's size, or -1 with errno.
long taskd_getxattr(const char *path, const char *name, void *value, unsigned long size);

/// renameat2(2) with RENAME_EXCHANGE (the Glibc module exports neither): swaps the two paths
/// atomically; 0, or -1 with errno (EINVAL where the file system cannot).
int taskd_exchange(const char *a, const char *b);

/* taskd's version (TASKD_VERSION at build time), kept behind the marker "taskd-version:". */
const char *taskd_version(void);

/* The run keeper (taskd-keeper): the parent of every command run, so that a run outlives taskd
   (a crash, kill -9) and its exit status is kept for the next taskd. taskd and the keeper speak
   over a SOCK_SEQPACKET Unix socket in the state folder; each message is one
   `struct taskd_keeper_message`, a SPAWN request followed by its strings, with file descriptors
   passed alongside (SCM_RIGHTS). docs/run-life.md, "Runs that outlive taskd". */
enum taskd_keeper_type {
    TASKD_KEEPER_SPAWN = 1,  ///< taskd → keeper: run_id, identity, then path, cwd, argv, envp, groups, and
                             ///< `status` bytes of the run's snapshot, kept for the next taskd;
                             ///< fds: stdin, stdout, stderr, notify (write ends), their 3 read ends[, cgroup.procs]
    TASKD_KEEPER_SPAWNED,    ///< pid
    TASKD_KEEPER_FAILED,     ///< step, error (as taskd_spawn_as reports them)
    TASKD_KEEPER_EXITED,     ///< pid, status (a wait status), usage
    TASKD_KEEPER_RELEASE,    ///< taskd → keeper: pid; the run's end is recorded, forget it
    TASKD_KEEPER_LIST,       ///< taskd → keeper: one RUN per run held, then LIST_END
    TASKD_KEEPER_RUN,        ///< pid, run_id, exited (status and usage then hold); fds: the 3 read ends;
                             ///< payload: the snapshot SPAWN gave (none from a keeper before it)
    TASKD_KEEPER_LIST_END,
    TASKD_KEEPER_QUIT,       ///< taskd → keeper: exit now (taskd stopped, its runs ended)
    TASKD_KEEPER_HELLO,      ///< taskd → keeper, and its answer: pid (the keeper's), status (its protocol)
    TASKD_KEEPER_OUTPUT,     ///< taskd → keeper: pid, step (the pipe: 0 stdout, 1 stderr, 2 notify), argc records in the
                             ///< payload (each a uint32 length, then its bytes), exited (1: text for standard
                             ///< error, 0: journald datagrams), cpu_usec (the bytes to take out of the pipe after)
    TASKD_KEEPER_WRITTEN,    ///< keeper → taskd: the OUTPUT before is written: pid, step, cpu_usec (the bytes
                             ///< taken out of the pipe: fewer than asked if it did not hold them), status
                             ///< (entries shed: journald took none for 100 ms)
    TASKD_KEEPER_NOTE,       ///< taskd → keeper: pid; payload: the run's snapshot now (a wake joined it)
};

/// What a keeper answers HELLO with in `status`: 1 once it takes OUTPUT (0, the field's zero, before).
#define TASKD_KEEPER_PROTOCOL 1

struct taskd_keeper_message {
    uint32_t type;
    int32_t pid;
    int32_t status;
    int32_t exited;
    int32_t step;
    int32_t error;
    uint64_t cpu_usec;
    uint64_t read_blocks;
    uint64_t write_blocks;
    char run_id[64];
    /* SPAWN only: the identity, and the counts of the strings that follow the message. */
    int32_t set_groups, ngroups, set_gid, set_uid, set_umask, set_nice, nice, has_cwd;
    uint32_t gid, uid, umask, argc, envc, payload;
};

/// A SOCK_SEQPACKET socket listening at `directory`/`name` (a stale one replaced), mode 0600.
int taskd_keeper_listen(const char *directory, const char *name);
/// A connection to the keeper listening at `directory`/`name`; -1 with errno (ENOENT, ECONNREFUSED: none).
int taskd_keeper_connect(const char *directory, const char *name);
/// Starts `executable` (the keeper) in a session of its own with `listen_fd` as its fd 3; its pid or -1.
pid_t taskd_keeper_start(const char *executable, int listen_fd);
/// Sends a SPAWN request; `fds` holds 7 descriptors, or 8 with the run's cgroup.procs last. 0 or -1 (errno).
int taskd_keeper_request_spawn(int sock, const char *run_id, const char *path, char *const argv[],
                               char *const envp[], const char *cwd, const struct taskd_exec_identity *identity,
                               const int *fds, int nfds, const char *snapshot, size_t snapshot_length);
/// Sends `message`, `length` bytes of `payload` after it, and `nfds` (at most 8) descriptors. 0 or -1 (errno).
int taskd_keeper_sendmsg(int sock, const struct taskd_keeper_message *message, const char *payload, size_t length,
                         const int *fds, int nfds);
/// Sends an OUTPUT request: `records` records in `payload`, then `consume` bytes to take from the pipe. 0 or -1.
int taskd_keeper_send_output(int sock, pid_t pid, int pipe, int text, uint64_t consume, uint32_t records,
                             const char *payload, size_t length);
/// Sends a NOTE: the run's snapshot now. 0 or -1 (errno).
int taskd_keeper_send_note(int sock, pid_t pid, const char *snapshot, size_t length);
/// Copies up to `length` bytes from pipe `from` to pipe `to` without taking them out (tee(2), non-blocking).
ssize_t taskd_tee(int from, int to, size_t length);
/// Sends a message without strings or descriptors (RELEASE, LIST, QUIT). 0 or -1 (errno).
int taskd_keeper_send(int sock, uint32_t type, pid_t pid);
/// Receives one message, its descriptors into fds (at most 3, close-on-exec) and, given `payload`,
/// what follows the message into a buffer to free (*payload NULL and *length 0 if nothing does);
/// 1, 0 at end of stream, -1 with errno (EAGAIN with `dontwait`).
int taskd_keeper_receive(int sock, struct taskd_keeper_message *message, int fds[3], int *nfds, int dontwait,
                         char **payload, size_t *length);
