"""Checkpoints of commands, through the real taskd: `CHECKPOINT=` on the notify descriptor, kept in
the task's state file, handed to the next run as `TASKD_CHECKPOINT` whatever cut the last one short
(its kill, taskd's kill and restart, the budget, a reload), cleared when a run completes."""
import json
import os
import random
import signal
import time

import pytest

from checkpoint_job import JOB, expected
from conftest import journal, wait_for

pytestmark = pytest.mark.integration

CHECKPOINT_ID = "518abd77c32e4a2bb059e12b0774aee6"


def job_task(tmp_path, steps, extra=""):
    job = tmp_path / "job.sh"
    job.write_text(JOB)
    job.chmod(0o755)
    return (f"[Task]\nKind=processing\nDescription=steps\nRuntimeBudgetSec=3s\nCancelGraceSec=1s\n"
            f"MaxAttempts=1000\nHistory=1000\nRetryBackoffSec=0.1s\nRetryBackoffMaxSec=0.1s\nRetryJitter=0\n{extra}"
            f"[Exec]\nExecStart={job} {tmp_path / 'steps.log'} {steps} {tmp_path / 'job.pid'}\n")


def status(d):
    r = d.taskctl("status", "job", "--json")
    assert r.returncode == 0, r
    return json.loads(r.stdout)


def done_steps(tmp_path):
    log = tmp_path / "steps.log"
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def history(d):
    r = d.taskctl("history", "job", "--json", "-n", "1000")
    assert r.returncode == 0, r
    return json.loads(r.stdout)


def test_a_checkpoint_is_handed_to_the_next_run_shown_in_status_and_cleared_by_completion(daemon_factory, tmp_path):
    d = daemon_factory({"job.task": job_task(tmp_path, 200)}).start()
    assert d.taskctl("wake", "job").returncode == 0
    wait_for(lambda: len(done_steps(tmp_path)) >= 50, what="50 steps")
    wait_for(lambda: (status(d).get("checkpointBytes") or 0) > 0, what="a checkpoint in status")
    os.kill(int((tmp_path / "job.pid").read_text()), signal.SIGKILL)
    # The retry resumes where the killed run's last checkpoint was: its journal entry says so.
    wait_for(lambda: len(history(d)) >= 2 and history(d)[0]["state"] == "completed", timeout=30,
             what="the retry to complete")
    runs = list(reversed(history(d)))
    assert runs[0]["state"] == "failed" and runs[1]["attempt"] == 2, runs
    # The history tells the end before taskd's queue has handed the run's entries to journald.
    resumed = wait_for(lambda: journal(MESSAGE_ID=CHECKPOINT_ID, TASK_RUN_ID=runs[1]["runId"]),
                       what="the resumed run's checkpoint entry")
    assert resumed and resumed[0]["TASK_CHECKPOINT_RUN_ID"] == runs[0]["runId"], resumed
    steps = done_steps(tmp_path)
    assert sorted(set(steps)) == list(range(200)) and len(steps) - 200 <= 1, "resumed, at most one step redone"
    assert runs[1]["result"] == expected(200)
    info = status(d)
    assert info.get("checkpointBytes") is None and info["resumeFrom"] == "checkpoint", "completion cleared it"
    text = d.taskctl("status", "job").stdout
    assert "Checkpoint:" not in text


def test_resume_from_start_keeps_the_checkpoint_but_hands_it_to_no_run(daemon_factory, tmp_path):
    d = daemon_factory({"job.task": job_task(tmp_path, 100, extra="ResumeFrom=start\n")}).start()
    assert d.taskctl("wake", "job").returncode == 0
    wait_for(lambda: len(done_steps(tmp_path)) >= 20, what="20 steps")
    os.kill(int((tmp_path / "job.pid").read_text()), signal.SIGKILL)
    wait_for(lambda: history(d) and history(d)[0]["state"] == "completed", timeout=30, what="the retry to complete")
    steps = done_steps(tmp_path)
    assert steps.count(0) == 2, "the retry started from step 0"
    assert "Checkpoint:" not in d.taskctl("status", "job").stdout


@pytest.mark.slow
def test_a_10000_step_job_interrupted_100_times_ends_with_the_same_result(daemon_factory, tmp_path):
    # Interruptions: SIGKILL of the job, SIGKILL of taskd and a new taskd on the same state folder
    # (the run is recorded lost and runs again through its wake), a reload that changes the task
    # (the run is cancelled, reconfigured, and woken again), and the 3 s budget (expired, retried).
    steps = 10_000
    rng = random.Random(int(os.environ.get("TASKD_CHECKPOINT_SEED", "47")))
    d = daemon_factory({"job.task": job_task(tmp_path, steps)}).start()
    assert d.taskctl("wake", "job").returncode == 0
    injected = {"kill-job": 0, "kill-taskd": 0, "reload": 0}
    description = 0

    def running():
        current = status(d).get("current")
        return current is not None and current["state"] == "running"

    while sum(injected.values()) < 100:
        # Let the job get on a little (random, so that the cut falls anywhere in a step).
        before = len(done_steps(tmp_path))
        wait_for(lambda: running() and len(done_steps(tmp_path)) >= before + rng.randint(5, 60), timeout=30,
                 interval=0.01, what="the job to make progress")
        kind = rng.choices(["kill-job", "kill-taskd", "reload"], weights=[7, 1, 2])[0]
        if kind == "kill-job":
            os.kill(int((tmp_path / "job.pid").read_text()), signal.SIGKILL)
        elif kind == "kill-taskd":
            d.proc.kill()
            d.proc.wait()
            d.start()
        else:
            description += 1
            task_file = d.config / "tasks.d" / "job.task"
            task_file.write_text(job_task(tmp_path, steps).replace("Description=steps",
                                                                  f"Description=steps {description}"))
            assert d.taskctl("reload").returncode == 0
        injected[kind] += 1
        # A run a reload cancelled is not retried: wake the task again (a wake while one runs joins it).
        wait_for(lambda: status(d).get("current") is not None or d.taskctl("wake", "job").returncode == 0,
                 what="a run of the job")
        assert len(done_steps(tmp_path)) < steps, f"the job ended after {injected} interruptions: too few steps"
    wait_for(lambda: history(d) and history(d)[0]["state"] == "completed", timeout=300, what="the job to complete")
    runs = list(reversed(history(d)))
    interrupted = [r for r in runs if r["state"] != "completed"]
    assert runs[-1]["result"] == expected(steps), runs[-1]
    done = done_steps(tmp_path)
    assert sorted(set(done)) == list(range(steps)), "every step was done"
    redone = len(done) - steps
    print(f"{len(runs)} runs, {len(interrupted)} interrupted ({injected}, "
          f"{sum(r['state'] in ('expired', 'killed') for r in runs)} by the budget); {redone} steps redone")
    assert redone <= len(interrupted), f"{redone} steps redone in {len(interrupted)} interruptions"
    assert len(interrupted) >= 100
