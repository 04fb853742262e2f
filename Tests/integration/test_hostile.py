"""Hostile clients against the real daemon (issue 7): connections that never speak, requests sent a
byte at a time, a thousand connections at once. Meanwhile a well-behaved client is served, and
afterwards taskd's open file descriptors and memory are back near where they were. (Garbage, deep
nesting, invalid UTF-8, unknown methods and oversized requests: test_control.py.)"""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import IS_ROOT, VarlinkSocket, journal, task, wait_for

pytestmark = pytest.mark.integration

LIMITS = ("[Daemon]\nMaxConnections={total}\nMaxConnectionsPerUser={per_user}\n"
          "IdleTimeoutSec={idle}\nRequestTimeoutSec={request}\n")


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_targets(pid):
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(targets)


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def closed_by_peer(sock, timeout):
    """True if the peer closes `sock` within `timeout` seconds (EOF, after any reply bytes)."""
    sock.settimeout(timeout)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except socket.timeout:
        return False


@pytest.mark.slow
def test_a_silent_connection_is_closed_when_idle_but_a_waiting_call_is_not(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/true"), "slow.task": task("/bin/sleep 2.5")},
                       daemon_conf=LIMITS.format(total=64, per_user=64, idle="1s", request="5s")).start()
    silent = socket.socket(socket.AF_UNIX)
    silent.connect(d.socket)
    t0 = time.monotonic()
    assert closed_by_peer(silent, 5), "an idle connection was left open"
    assert 0.9 <= time.monotonic() - t0 < 4
    # A call in progress (wake --wait streams until the run ends) is not idle, however long it takes.
    with VarlinkSocket(d.socket) as v:
        replies = v.call("io.taskd.Scheduler.Wake", {"target": "slow"}, more=True)
        assert replies[-1]["parameters"]["runs"][0]["state"] == "completed"
        assert v.call("io.taskd.Scheduler.List")[0]["parameters"]["tasks"]  # and it is still open


def test_a_request_sent_a_byte_at_a_time_is_cut_at_the_request_timeout(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/true")},
                       daemon_conf=LIMITS.format(total=64, per_user=64, idle="30s", request="1s")).start()
    request = b'{"method":"io.taskd.Scheduler.List"}\0'
    with VarlinkSocket(d.socket) as slow, VarlinkSocket(d.socket) as bystander:
        t0 = time.monotonic()
        reply = None
        for byte in request:
            try:
                slow.send_raw(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            # The bystander is served between the slow client's bytes.
            assert bystander.call("io.taskd.Scheduler.Wake", {"target": "hello"})[0]["parameters"]["runs"]
            time.sleep(0.2)
            if time.monotonic() - t0 > 3:
                break
        reply = slow.read_reply()
        assert reply["error"] == "io.taskd.Scheduler.InvalidRequest"
        assert "not completed within 1 s" in reply["parameters"]["reason"]
        assert slow.read_reply() is None
        assert time.monotonic() - t0 < 3


HOSTILE = r"""
import os, resource, socket, sys, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
path, count, uid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if uid >= 0:
    os.setgid(uid); os.setuid(uid)
held, refused, accepted, other = [], 0, 0, []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    held.append(s)
time.sleep(1)  # a refused connection has its answer waiting and is closed; an admitted one says nothing
for s in held:
    s.setblocking(False)
    try:
        data = s.recv(4096)
        if b"TooManyConnections" in data:
            refused += 1
        else:
            other.append(data[:100])
    except BlockingIOError:
        accepted += 1
print(accepted, refused, len(other), flush=True)
sys.stdin.read()  # hold every connection until told
"""


def flood(path, count, uid=-1):
    p = subprocess.Popen([sys.executable, "-c", HOSTILE, path, str(count), str(uid)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    accepted, refused, other = map(int, p.stdout.readline().split())
    assert other == 0, f"{other} connection(s) neither admitted nor refused with TooManyConnections"
    return p, accepted, refused


def test_a_thousand_connections_meet_the_limit_and_a_well_behaved_client_is_still_served(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/true")},
                       daemon_conf=LIMITS.format(total=200, per_user=150, idle="60s", request="10s"))
    # The socket in a folder anyone may enter, so a second user (nobody) can be a client too.
    folder = tempfile.mkdtemp(prefix="taskd-hostile-")
    os.chmod(folder, 0o755)
    d.socket = os.path.join(folder, "taskd.sock")
    d.argv[d.argv.index("--socket") + 1] = d.socket
    d.start()
    os.chmod(d.socket, 0o666)
    for _ in range(20):  # warm up, so the baseline holds what serving a client costs
        d.call("io.taskd.Scheduler.Wake", {"target": "hello"})
    fd_base, rss_base = fds(d.proc.pid), rss_kib(d.proc.pid)
    before = fd_targets(d.proc.pid)
    with VarlinkSocket(d.socket) as bystander:
        hostile, accepted, refused = flood(d.socket, 1000)
        try:
            assert (accepted, refused) == (199, 801)  # MaxConnections=200, the bystander holds one
            # New connections are refused cleanly with the reason, and taskctl says so.
            r = d.taskctl("list")
            assert r.returncode == 4 and "MaxConnections=" in r.stderr, r
            for _ in range(20):  # the bystander's open connection is served throughout
                assert bystander.call("io.taskd.Scheduler.Wake", {"target": "hello"})[0]["parameters"]["runs"]
        finally:
            hostile.stdin.close()
            hostile.wait()
        wait_for(lambda: fds(d.proc.pid) <= fd_base + 1,
                 what=lambda: f"taskd to close the flood's connections: {before} → {fd_targets(d.proc.pid)}")
        assert bystander.call("io.taskd.Scheduler.List")[0]["parameters"]["tasks"]
    if os.geteuid() == 0:
        # Another user may hold at most MaxConnectionsPerUser=; root is still let in meanwhile.
        other, accepted, refused = flood(d.socket, 400, uid=65534)
        try:
            assert (accepted, refused) == (150, 250)
            assert d.call("io.taskd.Scheduler.Wake", {"target": "hello"})[0]["parameters"]["runs"]
        finally:
            other.stdin.close()
            other.wait()
    wait_for(lambda: fds(d.proc.pid) <= fd_base,
             what=lambda: f"taskd's descriptors back to their baseline: {before} → {fd_targets(d.proc.pid)}")
    rss_after = rss_kib(d.proc.pid)
    assert rss_after <= rss_base + 4096, (rss_base, rss_after)  # KiB: the flood's buffers went back
    if IS_ROOT:  # the private journald: refusals are summarized, not one entry per refused connection
        refusals = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if "TASKD_REFUSED_CONNECTIONS" in e],
                            what="the refusals' entry")
        assert 1 <= len(refusals) <= 3, refusals
        assert "MaxConnections=" in refusals[0]["MESSAGE"] and refusals[0]["PEER_UID"] == "0"
    assert d.proc.poll() is None
