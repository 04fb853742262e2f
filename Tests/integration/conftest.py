"""Integration-test harness: the real taskd/taskctl/weatherd binaries, a private journald.

As root, the whole pytest process first moves into a private mount namespace (unshare(CLONE_NEWNS)
through libc, before any thread exists) and mounts tmpfs over /run/systemd/journal,
/run/log/journal and /var/log/journal, then starts its own systemd-journald: everything the tests
run logs there and nothing touches the host's journal. Without root, tests that need the journal
or namespaces are skipped with the reason.
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TASKD_BUILD_DIR", ROOT / ".build" / "debug"))
TASKD = BUILD / "taskd"
TASKCTL = BUILD / "taskctl"
WEATHERD = BUILD / "weatherd"
FAULTS = BUILD / "taskd-faults"
VARLINK_CALL = ROOT.parent / "shared" / "tools" / "varlink-call"
IS_ROOT = os.geteuid() == 0
JOURNAL_DIRS = ["/run/systemd/journal", "/run/log/journal", "/var/log/journal"]
_journald = None


def _private_journal():
    """Enter a private mount namespace and start a journald of our own there."""
    global _journald
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNS = 0x00020000
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    for d in JOURNAL_DIRS:
        if d != "/var/log/journal":
            os.makedirs(d, exist_ok=True)
        if os.path.isdir(d):
            subprocess.run(["mount", "-t", "tmpfs", "tmpfs", d], check=True)
    start_journald()


def stop_journald():
    """Stops the private journald (a faulty-machine test); `start_journald` brings it back."""
    _journald.terminate()
    _journald.wait(timeout=10)


def start_journald():
    global _journald
    _journald = subprocess.Popen(["/lib/systemd/systemd-journald"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not os.path.exists("/run/systemd/journal/socket"):
        if time.monotonic() > deadline:
            raise RuntimeError("private journald did not start")
        time.sleep(0.01)
    # Its sockets exist before journald serves them (systemd-cat is refused meanwhile): a sender that
    # falls back to stderr when a send fails (taskd does) would lose entries for the tests. Ready is
    # when an entry comes back.
    marker = f"journald-ready-{time.monotonic_ns()}"
    while True:
        subprocess.run(["systemd-cat", "-t", "taskd-tests", "echo", marker], stderr=subprocess.DEVNULL)
        try:
            if [e for e in journal(SYSLOG_IDENTIFIER="taskd-tests") if e.get("MESSAGE") == marker]:
                break
        except subprocess.CalledProcessError:
            pass  # journalctl --sync refused as well
        if time.monotonic() > deadline:
            raise RuntimeError("private journald did not answer")
        time.sleep(0.02)


def pytest_configure(config):
    if IS_ROOT and os.path.exists("/lib/systemd/systemd-journald"):
        _private_journal()


TIERS = ("integration", "nspawn", "vm")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Stops the session if a collected test has no tier or more than one (pytest.ini's markers), before
    `-m` deselects any: a test without a tier would silently fall out of every lane."""
    wrong = []
    for item in items:
        tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS})
        if len(tiers) != 1:
            wrong.append(f"{item.nodeid}: {', '.join(tiers) or 'no tier'}")
    if wrong:
        pytest.exit("each test needs exactly one tier marker of " + ", ".join(TIERS) + ":\n  " + "\n  ".join(wrong),
                    returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_unconfigure(config):
    if _journald is not None:
        _journald.terminate()
        _journald.wait(timeout=10)


needs_journal = pytest.mark.skipif(not IS_ROOT,
                                   reason="a private journald needs root (mount namespace)")


# The journal's cursor when the current test started (None outside a test, or without the private
# journald): `journal` returns only entries after it, so no test sees another's (two tests may have
# a task of the same name; every daemon of the session logs to the one journald).
_test_cursor = None


def journal_cursor():
    """The cursor of the newest entry, once journald stored everything it was handed (--sync)."""
    subprocess.run(["journalctl", "--sync"], check=True)
    out = subprocess.run(["journalctl", "--no-pager", "-q", "-n", "1", "-o", "json"], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["__CURSOR"] if out.strip() else None


@pytest.fixture(autouse=True)
def _journal_of_this_test():
    """Scopes `journal` to the entries logged since this test started (after the previous test's
    daemons were stopped and their entries stored)."""
    global _test_cursor
    _test_cursor = journal_cursor() if _journald is not None else None
    yield
    _test_cursor = None


def journal(**fields):
    """Every journal entry of the current test matching all fields, oldest first (after journalctl --sync)."""
    subprocess.run(["journalctl", "--sync"], check=True)
    args = ["journalctl", "--no-pager", "-o", "json"] + [f"{k}={v}" for k, v in fields.items()]
    if _test_cursor is not None:
        # --cursor, not --after-cursor: with matches, journalctl 252's --after-cursor also skips the
        # first matching entry after the cursor when the cursor's own entry does not match.
        args.append(f"--cursor={_test_cursor}")
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    entries = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [e for e in entries if e["__CURSOR"] != _test_cursor]


def e2e_skip_reason(needs_root_to, tools):
    """Why an end-to-end module cannot run here (not root, a tool or the build missing), or None."""
    if os.geteuid() != 0:
        return f"{needs_root_to} needs root"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not (BUILD / "taskd").exists():
        return f"no taskd build in {BUILD}"
    return None


def wait_for(predicate, timeout=10.0, interval=0.02, what="condition"):
    """Polls `predicate` until it is true; `what` names it in the failure (a callable: made then)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        time.sleep(interval)


class Daemon:
    """A real taskd (or weatherd) on a private config, state folder and socket."""

    def __init__(self, tmp: Path, tasks: dict, binary=TASKD, env=None, wrapper=(), daemon_conf=None):
        self.dir = tmp
        self.config = tmp / "config"
        (self.config / "tasks.d").mkdir(parents=True, exist_ok=True)
        for name, text in tasks.items():
            (self.config / "tasks.d" / name).write_text(text)
        if daemon_conf:
            (self.config / "taskd.conf").write_text(daemon_conf)
        self.state = tmp / "state"
        self.socket = str(tmp / "taskd.sock")
        self.stderr_path = tmp / "taskd.stderr"
        # No test's taskd talks to the host's system bus (its logind, its network manager): a test
        # that needs one gives its own private bus.
        self.env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/taskd-test-bus", **(env or {})}
        self.env.pop("NOTIFY_SOCKET", None)
        self.argv = list(wrapper) + [str(binary), "--config", str(self.config), "--state-dir", str(self.state),
                                     "--socket", self.socket]
        self.proc = None

    def start(self, wait=True):
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=self.stderr, stderr=self.stderr)
        if wait:
            wait_for(self.accepts, what=f"{self.argv[0]} to accept on {self.socket}")
        return self

    def accepts(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode}: {self.stderr_text()}")
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def stop(self, timeout=15):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def stderr_text(self):
        return self.stderr_path.read_text(errors="replace")

    def taskctl(self, *args, timeout=60):
        return subprocess.run([str(TASKCTL), "--socket", self.socket, *args], capture_output=True, text=True,
                              timeout=timeout)

    def call(self, method, parameters=None, more=False):
        """One raw Varlink call; the list of replies (several with more)."""
        with VarlinkSocket(self.socket) as v:
            return v.call(method, parameters, more)


class VarlinkSocket:
    """A raw Varlink connection: write NUL-terminated JSON, read replies."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(20)
        self.sock.connect(path)
        self.buffer = b""

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.sock.close()

    def send_raw(self, data: bytes):
        self.sock.sendall(data)

    def read_reply(self):
        while b"\0" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, parameters=None, more=False):
        request = {"method": method}
        if parameters is not None:
            request["parameters"] = parameters
        if more:
            request["more"] = True
        self.send_raw(json.dumps(request).encode() + b"\0")
        replies = [self.read_reply()]
        while replies[-1] is not None and replies[-1].get("continues"):
            replies.append(self.read_reply())
        return replies


@pytest.fixture
def daemon_factory(tmp_path):
    started = []

    def make(tasks, **kwargs):
        d = Daemon(tmp_path / f"d{len(started)}", tasks, **kwargs)
        started.append(d)
        return d

    yield make
    for d in started:
        d.stop()


@pytest.fixture
def open_socket_daemon(daemon_factory):
    """A taskd started on a socket any local user can connect to (in a folder of its own), so that
    taskd's own checks decide who is served."""
    def make(tasks, daemon_conf=None):
        folder = tempfile.mkdtemp(prefix="taskd-open-")
        os.chmod(folder, 0o755)
        d = daemon_factory(tasks, daemon_conf=daemon_conf)
        d.socket = os.path.join(folder, "taskd.sock")
        d.argv[d.argv.index("--socket") + 1] = d.socket
        d.start()
        os.chmod(d.socket, 0o666)
        return d
    return make


def task(exec_start, kind="appRefresh", budget=None, grace=None, extra=""):
    lines = ["[Task]", f"Kind={kind}"]
    if budget:
        lines.append(f"RuntimeBudgetSec={budget}")
    if grace:
        lines.append(f"CancelGraceSec={grace}")
    lines += [extra, "[Exec]", f"ExecStart={exec_start}"]
    return "\n".join(lines) + "\n"


def group_members(pgid):
    """(pid, state) of each process in process group pgid, zombies included, from /proc: empty once
    every member has exited and been reaped."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid:
            members.append((int(entry), fields[0]))
    return members
