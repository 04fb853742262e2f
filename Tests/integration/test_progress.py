"""Progress and status from a run (issue 34): a command's PROGRESS=/STATUS= lines on its notify
descriptor and a Swift handler's reportProgress/setStatus, shown by taskctl status, wake --wait
and the journal, whose progress entries stay bounded however often a handler reports; and
ProgressTimeoutSec=."""
import json
import time

import pytest

from conftest import FAULTS, journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]


def progress_id():
    text = (__import__("conftest").ROOT / "Sources" / "TaskdDaemon" / "Journal" / "MessageID.swift").read_text()
    return next(line.split('"')[1] for line in text.splitlines() if "case runProgress" in line)


def test_a_commands_progress_and_status_reach_status_events_and_the_journal(daemon_factory, tmp_path):
    gate = tmp_path / "gate"
    script = (f'echo "PROGRESS=2/4" >&$TASKD_NOTIFY_FD; echo "STATUS=step two" >&3; '
              f'while [ ! -e {gate} ]; do sleep 0.02; done; echo PROGRESS=4/4 >&3')
    d = daemon_factory({"steps.task": task(f"/bin/sh -c '{script}'")}).start()
    assert d.taskctl("wake", "steps").returncode == 0
    def shown():
        out = d.taskctl("status", "steps").stdout
        return out if "Progress:" in out else None
    status = wait_for(shown, what="a Progress line in taskctl status")
    assert "Progress: 2/4 (50%), step two" in status, status
    current = json.loads(d.taskctl("status", "steps", "--json").stdout)["current"]
    assert (current["progressCompleted"], current["progressTotal"], current["status"]) == (2, 4, "step two")
    gate.touch()
    ended = wait_for(lambda: [e for e in journal(TASK="steps") if "TASK_OUTCOME" in e], what="the run's end")[0]
    assert ended["TASK_PROGRESS_COMPLETED"] == "4" and ended["TASK_STATUS"] == "step two"
    told = journal(TASK="steps", MESSAGE_ID=progress_id())
    assert told and told[0]["TASK_PROGRESS_COMPLETED"] == "2", told


def test_wake_wait_events_carry_the_progress_as_it_comes(daemon_factory):
    script = "echo PROGRESS=1/3 >&3; sleep 1.2; echo PROGRESS=2/3 >&3; sleep 1.2; echo PROGRESS=3/3 >&3"
    d = daemon_factory({"three.task": task(f"/bin/sh -c '{script}'")}).start()
    r = d.taskctl("wake", "three", "--wait", "--events")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert [e["final"] for e in events][-1] is True and not any(e["final"] for e in events[:-1])
    seen = [e["runs"][0].get("progressCompleted") for e in events]
    assert {1, 2, 3} <= set(seen), seen
    assert events[-1]["runs"][0]["state"] == "completed"


@pytest.mark.slow
def test_a_swift_handler_reporting_10000_times_a_second_keeps_the_journal_bounded(daemon_factory):
    d = daemon_factory({}, binary=FAULTS).start()
    t0 = time.monotonic()
    r = d.taskctl("wake", "chatty", "--wait", "--json")
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    run = json.loads(r.stdout)[0]
    assert (run["progressCompleted"], run["progressTotal"], run["status"]) == (20000, 20000, "batch 20")
    told = journal(TASK_RUN_ID=run["runId"], MESSAGE_ID=progress_id())
    # 20,000 reports in about 2-4 s: at most one progress entry a second, plus the first.
    assert 1 <= len(told) <= elapsed + 2, (len(told), elapsed)
    print(f"20,000 reports in {elapsed:.1f} s: {len(told)} progress entries")


@pytest.mark.slow
def test_progress_timeout_cancels_a_silent_run_and_says_why(daemon_factory):
    d = daemon_factory({
        "quiet.task": task("/bin/sleep 30", budget="30s", grace="1s", extra="ProgressTimeoutSec=1s"),
        "talks.task": task("/bin/sh -c 'for i in 1 2 3 4; do echo PROGRESS=$i >&3; sleep 0.4; done'",
                           extra="ProgressTimeoutSec=1s"),
    }).start()
    quiet = json.loads(d.taskctl("wake", "quiet", "--wait", "--json").stdout)[0]
    assert quiet["state"] == "cancelled" and quiet["cancelReason"] == "no-progress", quiet
    talks = json.loads(d.taskctl("wake", "talks", "--wait", "--json").stdout)[0]
    assert talks["state"] == "completed", talks
    # The Swift one: its Task.sleep is cancelled at ProgressTimeoutSec.
    s = daemon_factory({}, binary=FAULTS).start()
    silent = json.loads(s.taskctl("wake", "silent", "--wait", "--json").stdout)[0]
    assert silent["state"] == "cancelled" and silent["cancelReason"] == "no-progress", silent


def test_wake_wait_follows_a_failed_run_into_its_retry_and_exits_by_the_last_attempt(daemon_factory, tmp_path):
    counter = tmp_path / "attempts"
    # Fails on its first attempt, succeeds on the second.
    script = f'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; [ "$n" -ge 1 ]'
    d = daemon_factory({"flaky.task": task(f"/bin/sh -c '{script}'",
                                           extra="MaxAttempts=3\nRetryBackoffSec=300ms\nRetryJitter=0")}).start()
    r = d.taskctl("wake", "flaky", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any("failed" in line and "retry 2 in 300ms" in line for line in lines), lines
    assert "completed" in lines[-1] and "attempt 2" in lines[-1], lines
    events = [json.loads(line) for line in d.taskctl("wake", "flaky", "--wait", "--events").stdout.splitlines()]
    assert events[-1]["final"] and events[-1]["runs"][0]["state"] == "completed"
    # Not followed: the first failure is the answer (exit 1), and the retry runs on.
    counter.unlink()
    r = d.taskctl("wake", "flaky", "--wait", "--no-follow-retries", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "failed" and "retryInUSec" not in run, r.stdout
    wait_for(lambda: counter.read_text().strip() == "2", what="the retry to run anyway")


def test_a_run_asked_for_in_code_survives_a_restart(daemon_factory):
    d = daemon_factory({}, binary=FAULTS).start()
    t0 = time.time()
    assert d.taskctl("wake", "chain", "--wait").returncode == 0
    asked = wait_for(lambda: journal(TASK="chain", MESSAGE_ID=requested_id()), what="the request's entry")[0]
    requested = int(asked["TASK_REQUESTED_USEC"])
    assert abs(requested / 1e6 - (t0 + 3600)) < 60, (requested, t0)
    assert d.stop() == 0
    record = json.loads(next((d.state / "tasks").glob("appRefresh:chain.json")).read_text())
    assert record["requestedUSec"] == requested, record
    d.start()
    info = json.loads(d.taskctl("status", "chain", "--json").stdout)
    assert abs(info["nextElapseUSec"] - requested) < 2_000_000, (info, requested)


def requested_id():
    text = (__import__("conftest").ROOT / "Sources" / "TaskdDaemon" / "Journal" / "MessageID.swift").read_text()
    return next(line.split('"')[1] for line in text.splitlines() if "case runRequested" in line)
