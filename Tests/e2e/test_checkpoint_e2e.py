"""Checkpointed 10,000-step jobs under a real systemd (nspawn), cut short at random in the ways a
service meets: `kill -9` of the daemon (systemd's Restart=on-failure brings it back), `systemctl
suspend` through the real logind (the run is cancelled, reason sleep, and runs again at the
resume), `systemctl reload` of a changed task, and the job's 3 s budget; a command job is also
SIGKILLed. A command job under taskd outlives taskd's kill (the shipped `RunKeeper=yes`: the new
taskd takes the run over); a Swift job (taskd-faults' `steps`) dies with its daemon, and its
acknowledged wake runs again. Each next run resumes from the last checkpoint: the job ends with the
result of an uninterrupted run, no more steps redone than interruptions."""
import json
import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from systemd_container import SKIP, TASKCTL, container, inside, install, main_pid, wait_inside  # noqa: E402,F401
from checkpoint_job import JOB, expected  # noqa: E402

pytestmark = [pytest.mark.nspawn, pytest.mark.slow, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

STEPS = 10_000
RESUMED = "2529a30a642f41eaaad1ad649f091839"
KEPT = "714d103c1a824a0680a48a51e9558755"
RETRIES = "MaxAttempts=1000\nHistory=1000\nRetryBackoffSec=0.1s\nRetryBackoffMaxSec=0.1s\nRetryJitter=0\n"

# taskd-faults as a service of its own, from the bind-mounted build.
FAULTS_UNIT = """[Unit]
Description=taskd-faults, for the checkpoint test
[Service]
Type=notify
ExecStart=/opt/taskd/bin/taskd-faults --config /etc/faults --state-dir /var/lib/faults --socket /run/faults.sock
ExecReload=/usr/local/bin/taskctl --socket /run/faults.sock reload
Environment=TASKD_FAULTS_STEPS="/var/lib/faults/steps.log 10000"
Restart=on-failure
RestartSec=1s
"""


class Job:
    """One daemon's checkpointed job: how to read it and how to cut it short."""

    def __init__(self, container, unit, socket, log, task_file, task_text, pidfile=None):
        self.container, self.unit, self.log, self.task_file = container, unit, log, task_file
        self.ctl = [TASKCTL] + (["--socket", socket] if socket else [])
        self.task_text, self.pidfile = task_text, pidfile

    def steps(self):
        out = inside(self.container, "sh", "-c", f"cat {self.log} 2>/dev/null || true").stdout
        return [int(line) for line in out.split()]

    def status(self):
        r = inside(self.container, *self.ctl, "status", "steps", "--json", check=False)
        return json.loads(r.stdout) if r.returncode == 0 else {}

    def journal_count(self, message_id):
        inside(self.container, "journalctl", "--sync")
        out = inside(self.container, "journalctl", "-u", self.unit, "-o", "json", f"MESSAGE_ID={message_id}",
                     check=False).stdout
        return len(out.splitlines())

    def cut(self, kind, serial):
        """Cuts the run in progress by `kind`; False if there was nothing to cut (the run had just ended)."""
        c = self.container
        if kind == "kill-daemon":
            pid = main_pid_of(c, self.unit)
            inside(c, "sh", "-c", f"kill -9 {pid}")
            wait_inside(c, lambda: main_pid_of(c, self.unit) not in (0, pid), "systemd to restart the daemon")
        elif kind == "suspend":
            seen = self.journal_count(RESUMED)
            inside(c, "systemctl", "suspend")
            wait_inside(c, lambda: self.journal_count(RESUMED) > seen, "the resume", tries=200)
        elif kind == "reload":
            write(c, self.task_file, self.task_text(f"steps {serial}"))
            inside(c, "systemctl", "reload", self.unit)
        else:
            return inside(c, "sh", "-c", f"kill -9 $(cat {self.pidfile})", check=False).returncode == 0
        return True


def main_pid_of(container, unit):
    return int(inside(container, "systemctl", "show", unit, "-p", "MainPID", "--value").stdout.strip())


def write(container, path, text):
    inside(container, "sh", "-c", f"cat > {path} <<'EOF'\n{text}EOF")


def cut_until_done(job, kinds, cuts, seed):
    """Wakes the job, cuts it `cuts` times (kinds at random), waits for it to complete; returns its
    runs (oldest first), the cuts by kind and the steps done."""
    rng = random.Random(seed)
    injected = {kind: 0 for kind in kinds}
    c = job.container
    inside(c, *job.ctl, "wake", "steps")
    while sum(injected.values()) < cuts:
        goal = len(job.steps()) + rng.randint(5, 60)
        wait_inside(c, lambda: (job.status().get("current") or {}).get("state") == "running"
                    and len(job.steps()) >= goal, "the job to make progress", tries=300)
        kind = rng.choice(kinds)
        if not job.cut(kind, sum(injected.values()) + 1):
            continue
        injected[kind] += 1
        # A run that is not run again by itself (none should be) is woken again: a wake while one
        # is in progress joins it.
        wait_inside(c, lambda: job.status().get("current") is not None
                    or inside(c, *job.ctl, "wake", "steps", check=False).returncode == 0, "a run of the job")
        assert len(job.steps()) < STEPS, f"the job ended after {injected}: too few steps"
    wait_inside(c, lambda: (job.status().get("last") or {}).get("state") == "completed", "the job to complete",
                tries=600)
    runs = list(reversed(json.loads(inside(c, *job.ctl, "history", "steps", "--json", "-n", "1000").stdout)))
    done = job.steps()
    interrupted = [r for r in runs if r["state"] != "completed"]
    print(f"{len(runs)} runs, {len(interrupted)} interrupted ({injected}); {len(done) - STEPS} steps redone")
    assert runs[-1]["result"] == expected(STEPS), runs[-1]
    assert sorted(set(done)) == list(range(STEPS)), "every step was done"
    assert len(done) - STEPS <= len(interrupted), f"{len(done) - STEPS} steps redone in {len(interrupted)} interruptions"
    return runs, injected


@pytest.fixture
def suspend_simulated(container):
    """systemd-suspend.service runs `sleep 1` instead of reaching the kernel (see test_systemd_e2e)."""
    inside(container, "sh", "-c", "mkdir -p /etc/systemd/system/systemd-suspend.service.d && printf "
                                  "'[Service]\\nExecStart=\\nExecStart=/bin/sleep 1\\n' "
                                  "> /etc/systemd/system/systemd-suspend.service.d/test.conf && systemctl daemon-reload")
    yield
    inside(container, "sh", "-c", "rm -rf /etc/systemd/system/systemd-suspend.service.d && systemctl daemon-reload")


def test_a_command_job_goes_on_through_restarts_sleep_reloads_and_kills(container, suspend_simulated):
    install(container)
    log, pidfile = "/var/lib/taskd/steps.log", "/var/lib/taskd/job.pid"
    write(container, "/usr/local/bin/checkpoint-job", JOB)
    inside(container, "chmod", "755", "/usr/local/bin/checkpoint-job")
    text = (lambda description: f"[Task]\nKind=processing\nDescription={description}\nRuntimeBudgetSec=3s\n"
            f"CancelGraceSec=1s\n{RETRIES}[Exec]\nExecStart=/usr/local/bin/checkpoint-job {log} {STEPS} {pidfile}\n")
    job = Job(container, "taskd.service", None, log, "/etc/taskd/tasks.d/steps.task", text, pidfile)
    write(container, job.task_file, text("steps"))
    inside(container, "rm", "-f", log)
    try:
        inside(container, "systemctl", "restart", "taskd.service")
        runs, injected = cut_until_done(job, ["kill-daemon", "suspend", "reload", "kill-job"], 30,
                                        int(os.environ.get("TASKD_CHECKPOINT_SEED", "53")))
        reasons = {r.get("cancelReason") for r in runs}
        assert {"sleep", "reconfigured", "budget"} <= reasons, reasons
        # The shipped taskd.conf keeps command runs across a crash (RunKeeper=yes): no kill -9 of
        # taskd cut the job short (no run is lost); the restarted taskd took the run over and it
        # went on. (A kill can come just after a run's budget ended it: then there was none to keep.)
        assert not [r for r in runs if r.get("failureReason") == "lost"], runs
        assert 1 <= job.journal_count(KEPT) <= injected["kill-daemon"]
    finally:
        inside(container, "rm", "-f", job.task_file)
        inside(container, "systemctl", "restart", "taskd.service")


def test_a_swift_job_resumes_after_its_daemons_kill_sleep_reloads_and_budgets(container, suspend_simulated):
    install(container)
    log = "/var/lib/faults/steps.log"
    text = (lambda description: f"[Task]\nKind=processing\nIdentifier=steps\nDescription={description}\n"
            f"RuntimeBudgetSec=3s\nCancelGraceSec=1s\n{RETRIES}")
    job = Job(container, "faults.service", "/run/faults.sock", log, "/etc/faults/tasks.d/steps.task", text)
    inside(container, "mkdir", "-p", "/etc/faults/tasks.d", "/var/lib/faults")
    write(container, "/etc/systemd/system/faults.service", FAULTS_UNIT)
    write(container, job.task_file, text("steps"))
    inside(container, "rm", "-f", log)
    try:
        inside(container, "systemctl", "daemon-reload")
        inside(container, "systemctl", "start", "faults.service")
        runs, injected = cut_until_done(job, ["kill-daemon", "suspend", "reload"], 30,
                                        int(os.environ.get("TASKD_CHECKPOINT_SEED", "59")))
        reasons = {r.get("cancelReason") or r.get("failureReason") for r in runs}
        assert {"sleep", "reconfigured", "budget", "lost"} <= reasons, reasons
        restarts = int(inside(container, "systemctl", "show", "faults.service", "-p", "NRestarts", "--value").stdout)
        assert restarts == injected["kill-daemon"]
    finally:
        inside(container, "systemctl", "stop", "faults.service")
        inside(container, "rm", "-rf", "/etc/systemd/system/faults.service", "/etc/faults", "/var/lib/faults")
        inside(container, "systemctl", "daemon-reload")
