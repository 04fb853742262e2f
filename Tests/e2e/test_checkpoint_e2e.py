"""A checkpointed command job under a real systemd (nspawn), in the ways a service meets: `kill -9`
of taskd (systemd's Restart=on-failure brings it back, and the run, kept by taskd-keeper as the
shipped taskd.conf says, is taken over and goes on), `systemctl suspend` through the real logind
(the run is cancelled, reason sleep, and runs again at the resume), `systemctl reload` of a changed
task, SIGKILL of the job, and its 3 s budget. Each next run resumes from the last checkpoint: the
job ends with the result of an uninterrupted run, no more steps redone than interruptions."""
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
LOG = "/var/lib/taskd/steps.log"
PIDFILE = "/var/lib/taskd/job.pid"
RESUMED = "2529a30a642f41eaaad1ad649f091839"
KEPT = "714d103c1a824a0680a48a51e9558755"


def task_text(description):
    return (f"[Task]\nKind=processing\nDescription={description}\nRuntimeBudgetSec=3s\nCancelGraceSec=1s\n"
            f"MaxAttempts=1000\nHistory=1000\nRetryBackoffSec=0.1s\nRetryBackoffMaxSec=0.1s\nRetryJitter=0\n"
            f"[Exec]\nExecStart=/usr/local/bin/checkpoint-job {LOG} {STEPS} {PIDFILE}\n")


def write(container, path, text):
    inside(container, "sh", "-c", f"cat > {path} <<'EOF'\n{text}EOF")


def steps_done(container):
    out = inside(container, "sh", "-c", f"cat {LOG} 2>/dev/null || true").stdout
    return [int(line) for line in out.split()]


def status(container):
    r = inside(container, TASKCTL, "status", "job", "--json", check=False, timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def journal_count(container, message_id):
    inside(container, "journalctl", "--sync")
    out = inside(container, "journalctl", "-u", "taskd", "-o", "json", f"MESSAGE_ID={message_id}", check=False).stdout
    return len(out.splitlines())


def test_a_checkpointed_job_goes_on_through_restarts_sleep_reloads_and_kills(container):
    install(container)
    inside(container, "sh", "-c", "mkdir -p /etc/systemd/system/systemd-suspend.service.d && printf "
                                  "'[Service]\\nExecStart=\\nExecStart=/bin/sleep 1\\n' "
                                  "> /etc/systemd/system/systemd-suspend.service.d/test.conf && systemctl daemon-reload")
    write(container, "/usr/local/bin/checkpoint-job", JOB)
    inside(container, "chmod", "755", "/usr/local/bin/checkpoint-job")
    write(container, "/etc/taskd/tasks.d/job.task", task_text("steps"))
    inside(container, "rm", "-f", LOG)
    rng = random.Random(int(os.environ.get("TASKD_CHECKPOINT_SEED", "53")))
    injected = {"kill-taskd": 0, "suspend": 0, "reload": 0, "kill-job": 0}
    try:
        inside(container, "systemctl", "restart", "taskd.service")
        inside(container, TASKCTL, "wake", "job")
        while sum(injected.values()) < 30:
            before = len(steps_done(container))
            goal = before + rng.randint(5, 60)
            wait_inside(container, lambda: (status(container).get("current") or {}).get("state") == "running"
                        and len(steps_done(container)) >= goal, "the job to make progress", tries=300)
            kind = rng.choice(sorted(injected))
            if kind == "kill-taskd":
                pid = main_pid(container)
                inside(container, "sh", "-c", f"kill -9 {pid}")
                wait_inside(container, lambda: main_pid(container) not in (0, pid), "systemd to restart taskd")
            elif kind == "suspend":
                seen = journal_count(container, RESUMED)
                inside(container, "systemctl", "suspend")
                wait_inside(container, lambda: journal_count(container, RESUMED) > seen, "the resume", tries=200)
            elif kind == "reload":
                write(container, "/etc/taskd/tasks.d/job.task", task_text(f"steps {injected['reload'] + 1}"))
                inside(container, "systemctl", "reload", "taskd.service")
            elif inside(container, "sh", "-c", f"kill -9 $(cat {PIDFILE})", check=False).returncode != 0:
                continue  # the run had just ended (its budget): nothing was killed
            injected[kind] += 1
            # A run that is not run again by itself (none should be) is woken again: a wake while
            # one is in progress joins it.
            wait_inside(container, lambda: status(container).get("current") is not None
                        or inside(container, TASKCTL, "wake", "job", check=False).returncode == 0, "a run of the job")
            assert len(steps_done(container)) < STEPS, f"the job ended after {injected}: too few steps"
        wait_inside(container, lambda: (status(container).get("last") or {}).get("state") == "completed",
                    "the job to complete", tries=600)
        runs = list(reversed(json.loads(inside(container, TASKCTL, "history", "job", "--json", "-n", "1000").stdout)))
        assert runs[-1]["result"] == expected(STEPS), runs[-1]
        done = steps_done(container)
        assert sorted(set(done)) == list(range(STEPS)), "every step was done"
        interrupted = [r for r in runs if r["state"] != "completed"]
        redone = len(done) - STEPS
        print(f"{len(runs)} runs, {len(interrupted)} interrupted ({injected}); {redone} steps redone")
        assert redone <= len(interrupted), f"{redone} steps redone in {len(interrupted)} interruptions"
        reasons = {r.get("cancelReason") for r in interrupted}
        assert {"sleep", "reconfigured", "budget"} <= reasons, reasons
        # The shipped taskd.conf keeps command runs across a crash (RunKeeper=yes): each kill -9 of
        # taskd cut nothing short; the restarted taskd took the run over and it went on.
        assert journal_count(container, KEPT) == injected["kill-taskd"]
        restarts = int(inside(container, "systemctl", "show", "taskd.service", "-p", "NRestarts", "--value").stdout)
        assert restarts >= injected["kill-taskd"]
    finally:
        inside(container, "sh", "-c", "rm -rf /etc/systemd/system/systemd-suspend.service.d "
                                      "/etc/taskd/tasks.d/job.task && systemctl daemon-reload")
        inside(container, "systemctl", "restart", "taskd.service")
