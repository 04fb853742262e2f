"""Command handlers as another user, and their output in the journal: identity, umask, nice, rate limit."""
import json
import os

import pytest

from conftest import journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

SUPPRESSED = "c9dda88d31d242beb08f3d2cd50538ba"
COMPLETED = "e1494e7e0a484939823f308918b213dd"


def entries_through_end(run_id):
    """The run's journal entries once its last one (the end event) has arrived: taskd hands entries
    to journald from its own queue, so a reply can overtake the last of them."""
    def complete():
        entries = journal(TASK_RUN_ID=run_id)
        return entries if any(e.get("MESSAGE_ID") == COMPLETED for e in entries) else None
    return wait_for(complete, what=f"the end of run {run_id} in the journal")


def stdout_of(run_id):
    entries_through_end(run_id)
    return [e["MESSAGE"] for e in journal(TASK_RUN_ID=run_id, TASK_STREAM="stdout")]


@pytest.mark.skipif(os.geteuid() != 0, reason="User= needs taskd to run as root")
def test_a_command_with_user_runs_as_that_user_with_its_groups_umask_nice_and_environment(daemon_factory):
    script = ("id -u; id -g; id -G; umask; echo \"$HOME $USER $LOGNAME $SHELL\"; "
              "nice; touch \"$STATE_FILE\" 2>&1 || echo cannot-write")
    d = daemon_factory({"asnobody.task": task(f"/bin/sh -c '{script}'") +
                        "User=nobody\nSupplementaryGroups=adm\nUMask=0077\nNice=5\n"
                        "Environment=STATE_FILE=/root/taskd-should-not-exist\n"}).start()
    r = d.taskctl("wake", "asnobody", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 0, r.stderr
    out = stdout_of(run["runId"])
    assert out[:6] == ["65534", "65534", "65534 4", "0077", "/nonexistent nobody nobody /usr/sbin/nologin", "5"]
    # Really unprivileged: root's home is closed to it.
    assert "Permission denied" in out[6] and not os.path.exists("/root/taskd-should-not-exist")


@pytest.mark.skipif(os.geteuid() != 0, reason="User= needs taskd to run as root")
def test_a_step_failing_before_exec_fails_the_run_with_the_step_and_the_reason(daemon_factory):
    d = daemon_factory({"locked.task": task("/bin/true") + "User=nobody\nWorkingDirectory=/root\n"}).start()
    r = d.taskctl("wake", "locked", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "failed"
    assert "WorkingDirectory=/root" in run["error"] and "Permission denied" in run["error"]


def test_a_flood_of_output_is_rate_limited_and_the_drop_is_journaled(daemon_factory):
    d = daemon_factory({"flood.task": task("/bin/sh -c 'seq 1 30000; echo tail >&2'") +
                        "LogRateLimitBurst=40\nLogRateLimitIntervalSec=1h\n"}).start()
    r = d.taskctl("wake", "flood", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 0 and run["state"] == "completed", r.stdout
    entries = entries_through_end(run["runId"])
    lines = [e["MESSAGE"] for e in entries if "TASK_STREAM" in e]
    assert lines == [str(n) for n in range(1, 41)]
    suppressed = [e for e in entries if e.get("MESSAGE_ID") == SUPPRESSED]
    assert len(suppressed) == 1
    s = suppressed[0]
    assert s["TASK_OUTPUT_SUPPRESSED"] == str(30001 - 40) and s["TASK"] == "flood" and s["PRIORITY"] == "4"
    assert "LogRateLimitBurst=40" in s["MESSAGE"]
    ids = [e.get("MESSAGE_ID") for e in entries]
    assert ids.index(SUPPRESSED) < ids.index(COMPLETED)


def test_by_default_a_run_may_write_a_thousand_lines_per_ten_seconds(daemon_factory):
    d = daemon_factory({"chatty.task": task("/usr/bin/seq 1 1200")}).start()
    run = json.loads(d.taskctl("wake", "chatty", "--wait", "--json").stdout)[0]
    entries = entries_through_end(run["runId"])
    assert len([e for e in entries if "TASK_STREAM" in e]) == 1000
    assert [e["TASK_OUTPUT_SUPPRESSED"] for e in entries if e.get("MESSAGE_ID") == SUPPRESSED] == ["200"]


def test_taskctl_logs_shows_a_task_or_one_run_through_journalctl(daemon_factory):
    d = daemon_factory({"talk.task": task("/bin/sh -c 'echo said $TASKD_RUN_ID'")}).start()
    runs = [json.loads(d.taskctl("wake", "talk", "--wait", "--json").stdout)[0]["runId"] for _ in range(2)]
    for run_id in runs:
        entries_through_end(run_id)
    everything = d.taskctl("logs", "talk")
    assert everything.returncode == 0
    assert all(f"said {r}" in everything.stdout for r in runs)
    one = d.taskctl("logs", "talk", "--run", runs[0], "--json")
    messages = [json.loads(line)["MESSAGE"] for line in one.stdout.splitlines()]
    assert f"said {runs[0]}" in messages and not any(runs[1] in m for m in messages)
    last = d.taskctl("logs", "talk", "-n", "1", "--json")
    assert len(last.stdout.splitlines()) == 1 and runs[1][:8] in json.loads(last.stdout)["MESSAGE"]
