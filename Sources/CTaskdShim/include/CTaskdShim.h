// Linux calls that Swift cannot reach from Glibc: variadic wrappers and _GNU_SOURCE-only declarations.
#pragma once
#include <sys/types.h>

/// pidfd_open(2); returns the fd or -1 with errno set.
int taskd_pidfd_open(pid_t pid);
/// prctl(PR_SET_CHILD_SUBREAPER, 1); 0 or -1 with errno.
int taskd_set_child_subreaper(void);
/// memfd_create(2) with MFD_CLOEXEC; the fd or -1 with errno.
int taskd_memfd_create(const char *name);
/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK.
int taskd_accept(int fd);
/// SO_PEERCRED of a connected Unix socket; 0 or -1 with errno.
int taskd_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);
/// pipe2(2) with O_CLOEXEC.
/// The peer's supplementary groups (SO_PEERGROUPS) into groups; their count, or -1 (errno set).
int taskd_peer_groups(int fd, gid_t *groups, int max);
int taskd_pipe_cloexec(int fds[2]);

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
