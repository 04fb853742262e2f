"""Faulty handlers against the real daemon (issue 7): each is reported as what it did, and taskd
keeps serving everyone else. (A command that segfaults: test_runs.py, the SIGSEGV case; one that
ignores SIGTERM: test_runs.py, killed with its group; one that writes without end: test_exec.py.)"""
import json
import signal
import time

import pytest

from conftest import FAULTS, group_members, journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]


def ended(run_id):
    return wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "TASK_OUTCOME" in e], what="the run's end")[0]


def test_grandchildren_left_in_the_group_are_killed_when_the_command_exits(daemon_factory, tmp_path):
    pidfile = tmp_path / "leader"
    script = f"sleep 301 & sleep 302 & (sleep 303 &) ; echo $$ > {pidfile}; exit 0"
    d = daemon_factory({"forker.task": task(f"/bin/sh -c '{script}'")}).start()
    r = d.taskctl("wake", "forker", "--wait", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["state"] == "completed"
    pgid = int(pidfile.read_text())
    # Three sleeps forked and orphaned (one through a subshell): taskd, their subreaper, kills and reaps them.
    wait_for(lambda: not group_members(pgid), timeout=3, what=f"the orphans of group {pgid} to be gone")
    assert d.proc.poll() is None
    # Reaped by polling the group, not on SIGCHLD: taskd catches no SIGCHLD (a handler, libdispatch's
    # for a signal source, woke three threads at every command's exit).
    caught = int(next(line.split()[1] for line in open(f"/proc/{d.proc.pid}/status") if line.startswith("SigCgt:")), 16)
    assert not caught & (1 << (signal.SIGCHLD - 1)), f"SigCgt {caught:#x} includes SIGCHLD"


def test_a_command_that_closes_its_output_and_hangs_is_stopped_at_its_budget(daemon_factory, tmp_path):
    pidfile = tmp_path / "leader"
    script = f"echo $$ > {pidfile}; exec >&- 2>&- </dev/null; sleep 300"
    d = daemon_factory({"mute.task": task(f"/bin/sh -c '{script}'", budget="1s", grace="500ms"),
                        "hello.task": task("/bin/true")}).start()
    t0 = time.monotonic()
    r = d.taskctl("wake", "mute", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "expired", run
    assert time.monotonic() - t0 < 3
    wait_for(lambda: not group_members(int(pidfile.read_text())), timeout=2, what="the group to be gone")
    assert d.taskctl("wake", "hello", "--wait").returncode == 0


@pytest.mark.slow
def test_a_swift_handler_that_ignores_cancellation_is_abandoned_and_taskd_serves_on(daemon_factory):
    d = daemon_factory({}, binary=FAULTS).start()
    t0 = time.monotonic()
    stubborn = d.taskctl("wake", "stubborn", "--json")
    run_id = json.loads(stubborn.stdout)[0]["runId"]
    # It blocks the thread it started on (the loop's, until the standby thread takes the loop) for 6 s;
    # other runs and requests go on meanwhile.
    for _ in range(5):
        assert d.taskctl("wake", "fine", "--wait").returncode == 0
    end = ended(run_id)
    assert time.monotonic() - t0 < 4, "the abandoned run was not reported at its budget's end"
    assert end["TASK_OUTCOME"] == "killed", end
    assert "abandon" in end["MESSAGE"], end["MESSAGE"]
    # When it finally returns, its result is ignored and said so.
    late = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "after it was abandoned" in e["MESSAGE"]],
                    timeout=10, what="the late return to be journaled")
    assert late
    status = json.loads(d.taskctl("status", "stubborn", "--json").stdout)
    assert status["last"]["runId"] == run_id and status["last"]["state"] == "killed", status  # not the late return
    assert d.proc.poll() is None


def test_an_oncancel_that_blocks_does_not_hold_up_taskd(daemon_factory):
    d = daemon_factory({}, binary=FAULTS).start()
    t0 = time.monotonic()
    run_id = json.loads(d.taskctl("wake", "slowCancel", "--json").stdout)[0]["runId"]
    # Cancelled 0.5 s in, its onCancel blocks a thread for 3 s: requests and runs go on meanwhile.
    wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "cancellation signalled" in e["MESSAGE"]],
             what="the run's cancellation")
    for _ in range(3):
        assert d.taskctl("wake", "fine", "--wait", timeout=10).returncode == 0
    assert d.taskctl("list", timeout=10).returncode == 0
    assert time.monotonic() - t0 < 2.5, "requests waited for the blocked onCancel"
    end = ended(run_id)
    assert end["TASK_OUTCOME"] == "killed", end
    assert d.proc.poll() is None


def test_a_swift_handler_that_throws_fails_with_its_error(daemon_factory):
    d = daemon_factory({}, binary=FAULTS).start()
    r = d.taskctl("wake", "thrower", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "failed", run
    assert "the upstream service answered 503" in ended(run["runId"])["MESSAGE"]
    assert d.taskctl("wake", "fine", "--wait").returncode == 0
