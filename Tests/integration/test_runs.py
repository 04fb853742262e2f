"""Runs end to end: wake → handler → outcome, budgets and cancellation, all read back from journald."""
import json
import os
import pwd
import signal
import subprocess
import time

import pytest

from conftest import WEATHERD, Daemon, VarlinkSocket, group_members, journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

STARTED = "8605484d98ae4477a29493037f9e10ec"
COMPLETED = "e1494e7e0a484939823f308918b213dd"
CANCELLED = "f4792cb9d75342c1b0878721e5f0dc9c"
EXPIRED = "21a4b506cfcb43f3bd290307adcbf376"
KILLED = "4939f917eaf743b9b7ca11b4ef35fb69"
COALESCED = "0a2a55cb4cda494482f6903f8d647905"


def ended(run_id):
    entries = [e for e in journal(TASK_RUN_ID=run_id) if "TASK_OUTCOME" in e]
    assert len(entries) == 1, entries
    return entries[0]


def test_wake_runs_the_command_and_the_journal_tells_the_whole_story(daemon_factory):
    d = daemon_factory({"hello.task": task(
        "/bin/sh -c 'echo \"hello from $TASKD_TASK\"; echo \"<3>on stderr\" >&2; cat'")}).start()
    r = d.taskctl("wake", "hello", "--payload", '{"city": "Paris"}', "--wait")
    assert r.returncode == 0, r.stderr
    assert "completed" in r.stdout
    run_id = r.stdout.split("run ")[1].split()[0]
    entries = journal(TASK="hello", TASK_RUN_ID=run_id)
    by_id = {e.get("MESSAGE_ID"): e for e in entries}
    assert by_id[STARTED]["TASK_TRIGGER"] == "wake"
    assert by_id[STARTED]["SYSLOG_IDENTIFIER"] == "taskd"
    assert by_id[STARTED]["TASK_KIND"] == "appRefresh"
    assert by_id[STARTED]["TASK_BUDGET_USEC"] == "30000000"
    done = by_id[COMPLETED]
    assert done["TASK_OUTCOME"] == "completed" and done["TASK_EXIT_STATUS"] == "0"
    assert 0 < int(done["TASK_DURATION_USEC"]) < 5_000_000
    assert done["TASK_ATTEMPT"] == "1"
    output = [e for e in entries if "TASK_STREAM" in e]
    assert [(e["TASK_STREAM"], e["PRIORITY"], e["MESSAGE"]) for e in output if e["TASK_STREAM"] == "stdout"] == [
        ("stdout", "6", "hello from hello"), ("stdout", "6", '{"city":"Paris"}')]
    assert [(e["PRIORITY"], e["MESSAGE"]) for e in output if e["TASK_STREAM"] == "stderr"] == [("3", "on stderr")]
    # The order a reader sees: started, the output, completed.
    messages = [e.get("MESSAGE_ID", "output") for e in entries]
    assert messages.index(STARTED) < messages.index("output") < messages.index(COMPLETED)


def test_wake_wait_answers_once_every_journal_entry_of_the_run_is_handed_on(daemon_factory):
    """The contract (docs/journal.md): when `wake --wait` reports a run's end, its output lines and end
    entry are in journald already. A short run's end comes within the journal writer's pace of its
    start entry, so without the barrier the end is reported while its entry still waits in taskd."""
    d = daemon_factory({"quick.task": task("/usr/bin/seq 1 3"),
                        "chatty.task": task("/usr/bin/seq 1 5000") + "LogRateLimitBurst=0\n"})
    # The state folder on tmpfs: the history's fsync, which the end's notice waits for too, takes no
    # time, as on a fast disk. On a slow one it would hide a missing barrier.
    d.state.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(d.state)], check=True)
    d.start()
    for name, count in [("quick", 3)] * 10 + [("chatty", 5000)] * 2:
        r = d.taskctl("wake", name, "--json", "--wait")
        assert r.returncode == 0, r.stderr
        run = json.loads(r.stdout)[0]
        entries = journal(TASK_RUN_ID=run["runId"])  # journalctl --sync, then read: no sleep
        lines = [e["MESSAGE"] for e in entries if e.get("TASK_STREAM") == "stdout"]
        assert lines == [str(i) for i in range(1, count + 1)], f"{name}: {len(lines)} of {count} lines"
        assert [e for e in entries if e.get("MESSAGE_ID") == COMPLETED], f"{name}: no end entry"


def test_the_handler_environment_is_built_from_scratch(daemon_factory):
    d = daemon_factory({"envtask.task": task("/usr/bin/env", budget="7s", extra="")},
                       env={"LEAKY_SECRET": "should-not-pass"}).start()
    r = d.taskctl("wake", "envtask", "--id", "v42", "--json", "--wait")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)[0]
    env = dict(e["MESSAGE"].split("=", 1) for e in journal(TASK_RUN_ID=run["runId"], TASK_STREAM="stdout"))
    assert env["TASKD_TASK"] == "envtask" and env["TASKD_KIND"] == "appRefresh"
    assert env["TASKD_RUN_ID"] == run["runId"] and env["TASKD_TRIGGER"] == "wake"
    assert env["TASKD_ATTEMPT"] == "1" and env["TASKD_WAKE_ID"] == "v42"
    assert env["TASKD_BUDGET_USEC"] == "7000000"
    assert int(env["TASKD_DEADLINE_USEC"]) == run["startedUSec"] + 7_000_000
    assert env["STATE_DIRECTORY"] == str(d.state)
    assert "LEAKY_SECRET" not in env and "NOTIFY_SOCKET" not in env
    me = pwd.getpwuid(os.geteuid())  # without User=, taskd's own account
    assert (env["USER"], env["LOGNAME"], env["HOME"], env["SHELL"]) == (me.pw_name, me.pw_name, me.pw_dir, me.pw_shell)


def test_a_command_that_traps_sigterm_is_killed_at_the_budget_end_with_its_whole_group(daemon_factory, tmp_path):
    pidfile = tmp_path / "pgid"
    script = f"trap \"\" TERM; echo $$ > {pidfile}; sleep 60 & sleep 60 & wait; wait"
    d = daemon_factory({"stubborn.task": task(f"/bin/sh -c '{script}'", budget="2s", grace="1s")}).start()
    r = d.taskctl("wake", "stubborn", "--wait", "--json")
    assert r.returncode == 1, (r.stdout, r.stderr)
    run = json.loads(r.stdout)[0]
    assert run["state"] == "killed" and run["signal"] == "SIGKILL"
    pgid = int(pidfile.read_text())
    # Killed within 250 ms of the budget's end.
    assert 2_000_000 <= run["durationUSec"] <= 2_250_000, run
    done = ended(run["runId"])
    assert done["MESSAGE_ID"] == KILLED and done["TASK_CANCEL_REASON"] == "budget" and done["TASK_SIGNAL"] == "SIGKILL"
    # The cancellation came at budget − grace, and nothing of the group survives.
    cancel = [e for e in journal(TASK_RUN_ID=run["runId"]) if e.get("MESSAGE_ID") == "65366c20621d4d33a30c8aae2d16d2b7"]
    assert len(cancel) == 1
    wait_for(lambda: not group_members(pgid), timeout=2, what=f"process group {pgid} to be gone")


@pytest.mark.slow
def test_a_watcher_hears_each_signal_sent_to_a_command_in_order_and_before_its_end(daemon_factory, tmp_path):
    # taskd holds a watcher's notice of a signal until the group ends or 2 ms pass (HeldNotices):
    # the ignored SIGTERM at 1 s is told while the group still lives, SIGKILL at 3 s before the end.
    pidfile = tmp_path / "pgid"
    script = f"trap \"\" TERM; echo $$ > {pidfile}; sleep 60 & wait; wait"
    d = daemon_factory({"stubborn.task": task(f"/bin/sh -c '{script}'", budget="3s", grace="2s")}).start()
    alive_when_told = None
    with VarlinkSocket(d.socket) as v:
        request = {"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "stubborn"}, "more": True}
        v.send_raw(json.dumps(request).encode() + b"\0")
        replies = [v.read_reply()]
        while replies[-1].get("continues"):
            replies.append(v.read_reply())
            if replies[-1]["parameters"]["runs"][0]["state"] == "cancelling":
                alive_when_told = group_members(int(pidfile.read_text()))
    states = [r["parameters"]["runs"][0]["state"] for r in replies]
    assert states == ["running", "cancelling", "killing", "killed"], replies
    assert alive_when_told, "the notice of SIGTERM waited for the group's end"


def test_a_command_that_stops_on_sigterm_has_expired(daemon_factory):
    d = daemon_factory({"polite.task": task("/bin/sh -c 'trap \"exit 0\" TERM; sleep 60 & wait'",
                                            budget="2s", grace="1500ms")}).start()
    r = d.taskctl("wake", "polite", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "expired", run
    assert 500_000 <= run["durationUSec"] < 1_000_000
    assert ended(run["runId"])["MESSAGE_ID"] == EXPIRED


@pytest.mark.parametrize("script,field,value", [
    ("exit 3", "TASK_EXIT_STATUS", "3"),
    ("kill -SEGV $$", "TASK_SIGNAL", "SIGSEGV"),
])
def test_failures_carry_the_exit_status_or_signal(daemon_factory, script, field, value):
    d = daemon_factory({"broken.task": task(f"/bin/sh -c '{script}'")}).start()
    r = d.taskctl("wake", "broken", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "failed"
    e = ended(run["runId"])
    assert e["TASK_OUTCOME"] == "failed" and e[field] == value and e["PRIORITY"] == "3"


def test_a_missing_program_fails_the_run_with_the_reason(daemon_factory):
    d = daemon_factory({"ghost.task": task("/nonexistent/refresh")}).start()
    r = d.taskctl("wake", "ghost", "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "failed" and "No such file" in run["error"]


def test_a_second_wake_coalesces_into_the_running_run(daemon_factory):
    d = daemon_factory({"slow.task": task("/bin/sleep 1")}).start()
    first = json.loads(d.taskctl("wake", "slow", "--json").stdout)[0]
    second = json.loads(d.taskctl("wake", "slow", "--json").stdout)[0]
    assert second["runId"] == first["runId"] and second["coalesced"] is True and first["coalesced"] is False
    waited = d.taskctl("wake", "slow", "--wait")
    assert waited.returncode == 0 and "joined it" in waited.stdout and "completed" in waited.stdout
    assert len([e for e in journal(TASK_RUN_ID=first["runId"]) if e.get("MESSAGE_ID") == COALESCED]) == 2
    assert len([e for e in journal(TASK="slow", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED]) == 1


def test_cancel_stops_a_run_with_reason_requested(daemon_factory):
    d = daemon_factory({"long.task": task("/bin/sleep 60", kind="processing")}).start()
    run = json.loads(d.taskctl("wake", "long", "--json").stdout)[0]
    r = d.taskctl("cancel", "long")
    assert r.returncode == 0 and run["runId"] in r.stdout
    wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if e.get("MESSAGE_ID") == CANCELLED])
    e = ended(run["runId"])
    assert e["TASK_CANCEL_REASON"] == "requested" and e["TASK_SIGNAL"] == "SIGTERM"
    assert d.taskctl("cancel", "long").stdout.strip() == "long: nothing to cancel"


def test_swift_handler_oncancel_runs_at_budget_minus_grace(daemon_factory, tmp_path):
    marker = tmp_path / "cancelled"
    conf = "[Task]\nKind=appRefresh\nRuntimeBudgetSec=2s\nCancelGraceSec=1s\n"
    d = daemon_factory({"WEATHER_DATA.task": conf}, binary=WEATHERD,
                       env={"WEATHERD_CANCEL_MARKER": str(marker)}).start()
    r = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"steps": 1000}', "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 1 and run["state"] == "expired", run
    on_cancel_usec = int(marker.read_text())
    late = on_cancel_usec - (run["startedUSec"] + 1_000_000)
    assert 0 <= late <= 50_000, f"onCancel ran {late} µs after budget − grace"
    assert "threw CancellationError" in ended(run["runId"])["MESSAGE"]


def test_a_swift_handler_completes_and_reports_like_a_command(daemon_factory):
    d = daemon_factory({}, binary=WEATHERD).start()
    r = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"steps": 2}', "--wait", "--json")
    run = json.loads(r.stdout)[0]
    assert r.returncode == 0 and run["state"] == "completed"
    assert ended(run["runId"])["MESSAGE_ID"] == COMPLETED


def test_shutdown_cancels_runs_waits_the_grace_and_exits_0(daemon_factory, tmp_path):
    pidfile = tmp_path / "pgid"
    d = daemon_factory({"stubborn.task": task(
        f"/bin/sh -c 'trap \"\" TERM; echo $$ > {pidfile}; sleep 60 & wait; wait'", budget="1min", grace="1s")}).start()
    run = json.loads(d.taskctl("wake", "stubborn", "--json").stdout)[0]
    wait_for(pidfile.exists)
    t0 = time.monotonic()
    assert d.stop() == 0
    took = time.monotonic() - t0
    assert 1.0 <= took < 3.0, took
    e = ended(run["runId"])
    assert e["TASK_OUTCOME"] == "cancelled" and e["TASK_CANCEL_REASON"] == "shutdown"
    wait_for(lambda: not group_members(int(pidfile.read_text())), timeout=2, what="the group to be gone")


def test_on_startup_sec_fires_once_after_start(daemon_factory):
    d = daemon_factory({"boot.task": task("/bin/true", extra="[Timer]\nOnStartupSec=0")}).start()
    wait_for(lambda: [e for e in journal(TASK="boot", _PID=str(d.proc.pid)) if e.get("TASK_OUTCOME") == "completed"], what="startup run")
    started = [e for e in journal(TASK="boot", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED]
    assert [e["TASK_TRIGGER"] for e in started] == ["startup"]


def test_on_unit_active_sec_repeats_from_each_start(daemon_factory):
    d = daemon_factory({"tick.task": task(
        "/bin/true", extra="History=100\n[Timer]\nOnStartupSec=0\nOnUnitActiveSec=300ms")}).start()
    runs = wait_for(lambda: (lambda h: h if len(h) >= 3 else None)(
        json.loads(d.taskctl("history", "tick", "--json").stdout)[::-1]), timeout=30, what="three runs")[:3]
    assert [r["trigger"] for r in runs] == ["startup", "timer", "timer"], runs
    # By taskd's own record of each run (journald's receive times also carry how long each entry
    # waited in taskd's journal queue): each run was due 300 ms after the previous one started (up
    # to the realtime clock's slew against the monotonic one over 300 ms, and the two clock reads
    # of a reading), and started when due or later, never before; late by less than 5 s however
    # busy the machine.
    for previous, run in zip(runs, runs[1:]):
        assert abs(run["scheduledUSec"] - (previous["startedUSec"] + 300_000)) <= 5_000, (previous, run)
        assert 0 <= run["startedUSec"] - run["scheduledUSec"] < 5_000_000, run


@pytest.mark.slow
def test_on_calendar_fires_on_the_wall_clock(daemon_factory):
    d = daemon_factory({"cal.task": task("/bin/true", extra="[Timer]\nOnCalendar=*:*:0/2")}).start()
    runs = wait_for(lambda: (lambda s: s if len(s) >= 2 else None)(
        [e for e in journal(TASK="cal", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED]), what="two runs")
    assert [e["TASK_TRIGGER"] for e in runs[:2]] == ["timer", "timer"]
    starts = [int(e["__REALTIME_TIMESTAMP"]) for e in runs[:2]]
    # Each run starts just after an even second of the wall clock, two seconds apart.
    assert all((t // 1_000_000) % 2 == 0 and t % 1_000_000 < 100_000 for t in starts), starts
    assert 1_900_000 <= starts[1] - starts[0] <= 2_100_000
    status = json.loads(d.taskctl("status", "cal", "--json").stdout)
    assert status["nextElapseUSec"] % 2_000_000 == 0


def test_persistent_catches_up_a_missed_elapse_once_and_keeps_the_trigger(daemon_factory):
    d = daemon_factory({"nightly.task": task("/bin/true", kind="processing",
                                             extra="[Timer]\nOnCalendar=*-*-* 03:00:00 UTC\nPersistent=yes")})
    stamp = d.state / "tasks" / "processing:nightly.json"
    stamp.parent.mkdir(parents=True)
    two_days_ago = int(time.time() * 1_000_000) - 2 * 86_400_000_000
    stamp.write_text(json.dumps({"version": 1, "task": "nightly", "kind": "processing",
                                 "lastTriggerUSec": two_days_ago, "history": []}))
    d.start()
    runs = wait_for(lambda: [e for e in journal(TASK="nightly", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED],
                    what="the catch-up run")
    assert [e["TASK_TRIGGER"] for e in runs] == ["catchup"]
    stored = wait_for(lambda: (lambda t: t if t != two_days_ago else None)(
        json.loads(stamp.read_text())["lastTriggerUSec"]), what="the new trigger on disk")
    assert abs(stored - int(runs[0]["__REALTIME_TIMESTAMP"])) < 1_000_000
    time.sleep(0.5)
    assert len([e for e in journal(TASK="nightly", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED]) == 1


def test_catch_up_all_within_a_window_and_a_persistent_interval_across_downtime(daemon_factory):
    """CatchUp=all with CatchUpWindowSec=: one run per missed hour in the window, each told its own
    scheduled time; Persistent= OnUnitActiveSec=: an interval that elapsed while taskd was down runs
    at start, one that has not keeps its remaining time."""
    d = daemon_factory({
        "hourly.task": task("/bin/sh -c 'echo at=$TASKD_SCHEDULED_USEC'", kind="processing",
                            extra="Overlap=queue\n[Timer]\nOnCalendar=*-*-* *:00:00 UTC\nPersistent=yes\n"
                                  "CatchUp=all\nCatchUpWindowSec=3h"),
        "every.task": task("/bin/true", kind="processing", extra="[Timer]\nOnUnitActiveSec=1h\nPersistent=yes"),
        "later.task": task("/bin/true", kind="processing", extra="[Timer]\nOnUnitActiveSec=1h\nPersistent=yes"),
    })
    folder = d.state / "tasks"
    folder.mkdir(parents=True)
    now = int(time.time() * 1_000_000)
    hour = 3_600_000_000

    def record(name, last):
        (folder / f"processing:{name}.json").write_text(json.dumps(
            {"version": 1, "task": name, "kind": "processing", "lastTriggerUSec": last, "history": []}))

    record("hourly", now - 10 * hour)
    record("every", now - 3 * hour - hour // 2)
    record("later", now - hour // 4)
    d.start()
    lines = wait_for(lambda: (lambda s: s if len(s) >= 3 else None)(
        [e for e in journal(TASK="hourly", _PID=str(d.proc.pid)) if e.get("TASK_STREAM") == "stdout"]),
        what="three catch-up runs")
    scheduled = sorted(int(e["MESSAGE"].removeprefix("at=")) for e in lines)
    assert [t % hour for t in scheduled] == [0, 0, 0], scheduled
    assert scheduled[-1] <= now + 60_000_000 and scheduled[0] >= now - 3 * hour - hour, scheduled
    assert [scheduled[1] - scheduled[0], scheduled[2] - scheduled[1]] == [hour, hour]
    started = wait_for(lambda: [e for e in journal(TASK="every", _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == STARTED],
                       what="the interval's catch-up")
    assert started[0]["TASK_TRIGGER"] == "catchup"
    later = json.loads(d.taskctl("status", "later", "--json").stdout)
    # 15 minutes ago: the next run 45 minutes from now, not an hour after this start.
    assert abs(later["nextElapseUSec"] - (now + 3 * hour // 4)) < 60_000_000, later


def test_a_damaged_task_record_is_reported_moved_aside_and_ignored(daemon_factory):
    d = daemon_factory({"nightly.task": task("/bin/true", kind="processing",
                                             extra="[Timer]\nOnCalendar=*-*-* 03:00:00 UTC\nPersistent=yes")})
    stamp = d.state / "tasks" / "processing:nightly.json"
    stamp.parent.mkdir(parents=True)
    stamp.write_text("garbage\n")
    d.start()
    assert d.taskctl("status", "nightly").returncode == 0
    problems = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if "not a task record" in e.get("MESSAGE", "")],
                        what="the report")
    assert str(stamp) in problems[0]["MESSAGE"]
    aside = list(stamp.parent.glob("processing:nightly.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text() == "garbage\n"
