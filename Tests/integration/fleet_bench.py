"""The fleet's test bench: a real 3-member etcd cluster on loopback (Debian's etcd-server), taskd
instances that share tasks through it (each its own state folder, socket and FleetHost=), and the job
their runs do, which appends to one log: `start SLOT TOKEN HOST NS`, then `end …`, or `cancelled …`
when taskd cancels it (SIGTERM)."""
import shutil
import socket
import subprocess
import os
from pathlib import Path

import pytest

from conftest import wait_for

ETCD = shutil.which("etcd")
ETCDCTL = shutil.which("etcdctl")
needs_etcd = pytest.mark.skipif(not (ETCD and ETCDCTL), reason="etcd is not installed (scripts/packages etcd-server etcd-client)")

JOB = """#!/bin/sh
# A fleet run's job: its slot, its fence token and its host, when it starts and how it ends; its
# slot to the journal too.
log="$1"; seconds="$2"
trap 'echo "cancelled $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"; exit 1' TERM
echo "start $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"
echo "slot $TASKD_SCHEDULED_USEC"  # to the journal, as the run's output
# "random": from 0.5 to 2.5 s.
[ "$seconds" = random ] && seconds=$(od -An -N1 -tu1 /dev/urandom | awk '{ print 0.5 + $1 / 128 }')
sleep "$seconds" & wait $!
echo "end $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdCluster:
    """Three etcd members on loopback, each a process the test can kill and start again."""

    def __init__(self, folder: Path, size=3):
        self.names = [f"m{i}" for i in range(size)]
        self.procs = {}
        # A port found free may be taken before etcd binds it (an outgoing connection's): a
        # member that exits at once is started again, on new ports, with its cluster.
        for attempt in range(3):
            self.folder = folder / f"try{attempt}"
            self.folder.mkdir(parents=True)
            self.client = {n: free_port() for n in self.names}
            self.peer = {n: free_port() for n in self.names}
            self.initial = ",".join(f"{n}=http://127.0.0.1:{self.peer[n]}" for n in self.names)
            for n in self.names:
                self.start(n)
            try:
                wait_for(lambda: self.healthy() or any(p.poll() is not None for p in self.procs.values()),
                         timeout=30, what="the etcd cluster to be healthy")
            except AssertionError:
                pass
            if all(p.poll() is None for p in self.procs.values()) and self.healthy():
                return
            self.stop_all()
        logs = {n: (self.folder / f"{n}.log").read_text()[-2000:] for n in self.names}
        raise AssertionError(f"no healthy etcd cluster in 3 tries; the last one's logs: {logs}")

    @property
    def endpoints(self):
        return ",".join(f"127.0.0.1:{self.client[n]}" for n in self.names)

    def start(self, name):
        log = open(self.folder / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(
            [ETCD, "--name", name, "--data-dir", str(self.folder / name),
             "--listen-client-urls", f"http://127.0.0.1:{self.client[name]}",
             "--advertise-client-urls", f"http://127.0.0.1:{self.client[name]}",
             "--listen-peer-urls", f"http://127.0.0.1:{self.peer[name]}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer[name]}",
             "--initial-cluster", self.initial, "--initial-cluster-state", "new", "--logger", "zap",
             "--log-outputs", "stderr"],
            stdout=log, stderr=log)

    def kill(self, name):
        self.procs[name].kill()
        self.procs[name].wait()

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    def ctl(self, *args):
        return subprocess.run([ETCDCTL, "--endpoints", self.endpoints, *args], capture_output=True, text=True,
                              env={**os.environ, "ETCDCTL_API": "3"}, timeout=30)

    def healthy(self):
        return self.ctl("endpoint", "health").returncode == 0


@pytest.fixture
def etcd(tmp_path):
    cluster = EtcdCluster(tmp_path / "etcd")
    yield cluster
    cluster.stop_all()


def conf(etcd, host, lease=4, extra=""):
    return (f"[Daemon]\nFleetEndpoints={etcd.endpoints}\nFleetHost={host}\nFleetLeaseSec={lease}\n"
            f"FleetName=test\n{extra}")


def job(tmp_path, seconds):
    path = tmp_path / "job.sh"
    path.write_text(JOB)
    path.chmod(0o755)
    return f"{path} {tmp_path / 'runs.log'} {seconds}"


def fleet_task(command, fleet="once", extra=""):
    return (f"[Task]\nKind=processing\nFleet={fleet}\nRuntimeBudgetSec=60\nCancelGraceSec=5\n{extra}"
            f"[Timer]\nOnCalendar=*:*:*\n[Exec]\nExecStart={command}\n")


def read_log(tmp_path):
    """The job's lines: (what, slot µs, token, host, ns) each."""
    path = tmp_path / "runs.log"
    lines = path.read_text().split("\n") if path.exists() else []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            out.append((parts[0], int(parts[1]), int(parts[2]) if parts[2] else 0, parts[3],
                        int(parts[4]) if len(parts) > 4 else 0))
    return out


def instances(daemon_factory, etcd, tmp_path, tasks, hosts=4, lease=4, extra=""):
    return [daemon_factory(tasks, daemon_conf=conf(etcd, f"h{i}", lease, extra)).start() for i in range(hosts)]
