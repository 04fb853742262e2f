"""How the real taskd sets up its process: a synchronous main that parks its thread (no
pthread_exit, no unwinder loaded), and glibc's malloc limited to two arenas unless the
environment says otherwise. What each saves is in docs/swift-handlers.md."""
import signal

import pytest

from conftest import task

pytestmark = pytest.mark.integration


def status(pid, tid=None):
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    return dict(line.split(":", 1) for line in open(path).read().splitlines())


def thread_arenas(pid):
    """glibc maps each thread arena as a 64 MiB aligned heap: read-write as far as used, the rest
    PROT_NONE. The main arena is the brk heap and is not counted."""
    rows = []
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        start, end = (int(x, 16) for x in f[0].split("-"))
        rows.append((start, end, f[1], len(f) > 5))
    count = 0
    for i, (start, end, perms, named) in enumerate(rows):
        if perms.startswith("rw") and not named and start % (64 << 20) == 0:
            if i + 1 < len(rows) and rows[i + 1][0] == end and rows[i + 1][2].startswith("---"):
                end = rows[i + 1][1]
            count += end - start == 64 << 20
    return count


def test_the_main_thread_waits_with_every_signal_blocked_and_sigterm_still_stops_taskd(daemon_factory):
    d = daemon_factory({"a.task": task("/bin/true")}).start()
    assert d.taskctl("wake", "a", "--wait").returncode == 0
    main = status(d.proc.pid, d.proc.pid)
    # Parked in pause(2) (x86-64 system call 34). An async main's thread would sit in
    # rt_sigsuspend (130) instead, in libdispatch's destructor, after pthread_exit unwound it.
    syscall = open(f"/proc/{d.proc.pid}/task/{d.proc.pid}/syscall").read().split()[0]
    assert main["State"].split()[0] == "S" and syscall == "34", (main["State"], syscall)
    # Every signal but SIGKILL and SIGSTOP, which cannot be blocked, and glibc's own two (32 and 33,
    # for thread cancellation and set*id), which pthread_sigmask leaves alone.
    unblockable = {signal.SIGKILL, signal.SIGSTOP, 32, 33}
    expected = sum(1 << (n - 1) for n in range(1, 65) if n not in unblockable)
    assert int(main["SigBlk"], 16) == expected, main["SigBlk"]
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=10) == 0


def test_malloc_keeps_to_two_arenas_unless_the_environment_sets_its_own_limit(daemon_factory):
    counts = {}
    for name, env in [("default", {}), ("MALLOC_ARENA_MAX", {"MALLOC_ARENA_MAX": "8"}),
                      ("GLIBC_TUNABLES", {"GLIBC_TUNABLES": "glibc.malloc.arena_max=8"})]:
        d = daemon_factory({"a.task": task("/bin/true")}, env=env).start()
        assert d.taskctl("wake", "a", "--wait").returncode == 0
        counts[name] = thread_arenas(d.proc.pid)
        d.stop()
    assert counts["default"] <= 1, counts
    # The probe sees arenas where threads have their own: the environment's limit won.
    assert counts["MALLOC_ARENA_MAX"] > 1 and counts["GLIBC_TUNABLES"] > 1, counts
