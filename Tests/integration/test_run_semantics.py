"""Run semantics on the real daemon: Overlap=, task(id:) supersession with fencing, retries,
MaxConcurrentRuns=, typed Swift handlers, history and reload — read back from journald and taskctl."""
import json
import os
import signal
import time

import pytest

from conftest import WEATHERD, journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

STARTED = "8605484d98ae4477a29493037f9e10ec"
CANCELLED = "f4792cb9d75342c1b0878721e5f0dc9c"
RETRY = "d1892297389f4e5ea2d10904b6e788ae"
QUEUED = "fbb2aa91188149af85fbddb1dc010ba4"
OVERFLOW = "f1c8f05fa12d464b96786ec5bd78db51"
RELOADED = "bf363b6378874defbffcaf696822ca41"
SKIPPED = "d8325cf6120e404883850532f14efc60"


def events(d, name, message_id):
    return [e for e in journal(TASK=name, _PID=str(d.proc.pid)) if e.get("MESSAGE_ID") == message_id]


def ends(d, name):
    return [e for e in journal(TASK=name, _PID=str(d.proc.pid)) if "TASK_OUTCOME" in e and e["MESSAGE_ID"] != RETRY]


def wake_json(d, *args):
    r = d.taskctl("wake", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_overlap_queue_runs_triggers_one_after_another_and_bounds_the_queue(daemon_factory, tmp_path):
    # Each run reads one line from a FIFO the test writes to only once the four wakes were answered:
    # the first run is still running when the other three arrive, however slow the machine.
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    held = os.open(gate, os.O_RDWR)  # never blocks; keeps the lines written for the runs to come
    try:
        d = daemon_factory({"q.task": task(f"/bin/sh -c 'read -r line < {gate}'",
                                           extra="Overlap=queue\nQueueLimit=2")}).start()
        runs = [wake_json(d, "q")[0] for _ in range(4)]
        assert [r["disposition"] for r in runs] == ["started", "queued", "queued", "overflow"]
        assert runs[3]["runId"] == runs[2]["runId"]
        released = time.time_ns() // 1000
        os.write(held, b"go\n" * 3)
        # The reply carries the disposition; its journal entry follows within the writer's pace.
        wait_for(lambda: events(d, "q", OVERFLOW), what="the overflow entry")
        done = wait_for(lambda: (lambda e: e if len(e) == 3 else None)(ends(d, "q")), what="three runs")
    finally:
        os.close(held)
    assert [e["TASK_OUTCOME"] for e in done] == ["completed"] * 3
    order = [r["runId"] for r in runs[:3]]
    assert [e["TASK_RUN_ID"] for e in done] == order
    history = {r["runId"]: r for r in json.loads(d.taskctl("history", "q", "--json").stdout)}
    # Never two at once, by taskd's own clock: each queued run starts after the one before it ended.
    for before, after in zip(order, order[1:]):
        assert history[after]["startedUSec"] >= history[before]["endedUSec"], (history[before], history[after])
    # The last waited from its wake until both runs before it had ended, after the gate opened.
    last = next(e for e in done if e["TASK_RUN_ID"] == order[2])
    assert int(last["TASK_WAITED_USEC"]) >= released - runs[2]["queuedUSec"], (last, released)


def test_a_new_wake_id_supersedes_the_run_and_its_late_result_is_stale(daemon_factory, tmp_path):
    # The handler ignores SIGTERM for a while and then exits 0: a slow run that finishes late.
    slow = "/bin/sh -c 'trap \"sleep 0.5; exit 0\" TERM; sleep 30 & wait'"
    d = daemon_factory({"city.task": task(slow, budget="30s", grace="5s", extra="MaxAttempts=3")}).start()
    first = wake_json(d, "city", "--id", "paris")[0]
    same = wake_json(d, "city", "--id", "paris")[0]
    assert same["disposition"] == "coalesced" and same["runId"] == first["runId"]
    second = wake_json(d, "city", "--id", "london")[0]
    assert second["disposition"] == "started" and second["runId"] != first["runId"]
    late = wait_for(lambda: [e for e in ends(d, "city") if e["TASK_RUN_ID"] == first["runId"]], what="the late end")[0]
    assert late["TASK_OUTCOME"] == "cancelled" and late["TASK_CANCEL_REASON"] == "superseded"
    assert late["TASK_STALE"] == "1" and late["TASK_EXIT_STATUS"] == "0" and "stale" in late["MESSAGE"]
    assert not events(d, "city", RETRY)
    status = json.loads(d.taskctl("status", "city", "--json").stdout)
    assert status["current"]["runId"] == second["runId"] and status["current"]["wakeId"] == "london"
    assert "last" not in status  # the stale run never became the task's last result
    d.taskctl("cancel", second["runId"])
    history = json.loads(d.taskctl("history", "city", "--json").stdout)
    stale = next(r for r in history if r["runId"] == first["runId"])
    assert stale["stale"] is True and stale["cancelReason"] == "superseded"


def test_a_failing_command_is_retried_with_backoff_as_trigger_retry(daemon_factory):
    # Fails on attempts 1 and 2, succeeds on 3; records what it saw.
    script = ("/bin/sh -c 'echo \"$TASKD_ATTEMPT $TASKD_TRIGGER $TASKD_WAKE_ID\" >> \"$STATE_DIRECTORY/seen\"; "
              "[ \"$TASKD_ATTEMPT\" -ge 3 ]'")
    d = daemon_factory({"flaky.task": task(script, extra="MaxAttempts=4\nRetryBackoffSec=200ms\nRetryJitter=0")}).start()
    r = d.taskctl("wake", "flaky", "--id", "w1")
    assert r.returncode == 0
    done = wait_for(lambda: (lambda e: e if len(e) == 3 else None)(ends(d, "flaky")), what="three attempts")
    assert [e["TASK_OUTCOME"] for e in done] == ["failed", "failed", "completed"]
    assert (d.state / "seen").read_text().splitlines() == ["1 wake w1", "2 retry w1", "3 retry w1"]
    retries = events(d, "flaky", RETRY)
    assert [e["TASK_RETRY_ATTEMPT"] for e in retries] == ["2", "3"]
    assert [e["TASK_RETRY_DELAY_USEC"] for e in retries] == ["200000", "400000"]
    # The backoff, from each attempt's end to the next one's start, by taskd's own clock (journald's
    # receive times also carry how long each entry waited in taskd's journal queue).
    runs = sorted(json.loads(d.taskctl("history", "flaky", "--json").stdout), key=lambda r: r["attempt"])
    gaps = [runs[i + 1]["startedUSec"] - runs[i]["endedUSec"] for i in range(2)]
    assert 200_000 <= gaps[0] < 1_000_000 and 400_000 <= gaps[1] < 1_200_000, gaps
    time.sleep(0.6)
    assert len(ends(d, "flaky")) == 3  # no fourth attempt after success


def test_exit_status_100_asks_for_no_retry(daemon_factory):
    d = daemon_factory({"bad.task": task("/bin/sh -c 'exit $TASKD_NO_RETRY_EXIT_STATUS'", extra="MaxAttempts=5")})
    d.start()
    r = d.taskctl("wake", "bad", "--wait")
    assert r.returncode == 1 and "exit status 100" in r.stdout
    # --wait follows a failed run into its retries and answers once the end's entry is in journald
    # (docs/journal.md): a retry would have been followed, and its entry journaled with the end.
    assert len(ends(d, "bad")) == 1 and not events(d, "bad", RETRY)


def test_max_concurrent_runs_queues_runs_and_records_the_wait(daemon_factory, tmp_path):
    # a runs until the test opens its gate, so b and r are woken while it holds the one slot
    # however slow the machine.
    gate = tmp_path / "gate"
    d = daemon_factory({"a.task": task(f"/bin/sh -c 'while [ ! -e {gate} ]; do sleep 0.02; done'", kind="processing"),
                        "b.task": task("/bin/sleep 0.1", kind="processing"),
                        "r.task": task("/bin/sleep 0.1", kind="appRefresh")},
                       daemon_conf="[Daemon]\nMaxConcurrentRuns=1\n").start()
    a = wake_json(d, "a")[0]
    b = wake_json(d, "b")[0]
    r = wake_json(d, "r")[0]
    assert a["state"] == "running" and b["state"] == "queued" and r["state"] == "queued"
    assert wait_for(lambda: events(d, "b", QUEUED), what="b's queued entry")[0]["TASK_QUEUE"] == "slot"
    released = time.time_ns() // 1000
    gate.touch()
    wait_for(lambda: len(ends(d, "b")) == 1, what="b to end")
    start_r = int(events(d, "r", STARTED)[0]["__REALTIME_TIMESTAMP"])
    start_b = int(events(d, "b", STARTED)[0]["__REALTIME_TIMESTAMP"])
    assert start_r < start_b  # appRefresh went ahead of the processing run woken before it
    waited = json.loads(d.taskctl("history", "b", "--json").stdout)[0]
    # waitedUSec is measured on the monotonic clock, the two times on the wall clock: equal within a read.
    assert waited["waitedUSec"] >= released - waited["queuedUSec"], (waited, released)  # until a ended
    assert abs(waited["startedUSec"] - waited["queuedUSec"] - waited["waitedUSec"]) < 1_000
    # The budget counts from the start: the deadline is start + budget.
    assert waited["deadlineUSec"] - waited["startedUSec"] == waited["budgetUSec"]  # both from one reading


def test_overlap_skip_drops_a_trigger_while_a_run_is_in_progress_and_says_so(daemon_factory, tmp_path):
    # The run lasts until the test opens its gate: the second wake comes while it is in progress.
    gate = tmp_path / "gate"
    d = daemon_factory({"s.task": task(f"/bin/sh -c 'while [ ! -e {gate} ]; do sleep 0.02; done'",
                                       kind="processing", extra="Overlap=skip")}).start()
    first = wake_json(d, "s")[0]
    r = d.taskctl("wake", "s")
    assert r.returncode == 1 and f"s: skipped: run {first['runId']} is in progress" in r.stdout, r.stdout
    # The reply does not wait for the skip's entry: taskd hands entries to journald from its own queue.
    skipped = wait_for(lambda: events(d, "s", SKIPPED), what="the skip's entry")
    assert len(skipped) == 1 and skipped[0]["TASK_SKIPPED_TRIGGER"] == "wake" and skipped[0]["TASK_RUN_ID"] == first["runId"]
    gate.touch()
    wait_for(lambda: len(ends(d, "s")) == 1, what="the run to end")
    assert wake_json(d, "s")[0]["disposition"] == "started"
    wait_for(lambda: len(ends(d, "s")) == 2, what="the next run to end")
    assert len(events(d, "s", STARTED)) == 2, "the skipped wake never ran"


def test_overlap_allow_runs_wakes_side_by_side_up_to_max_instances(daemon_factory, tmp_path):
    # Three wakes of one task with Overlap=allow and MaxInstances=2: two run at once, the third
    # waits and starts when one of them ends; each ends as its own run.
    log, gate = tmp_path / "allow.log", tmp_path / "gate"
    job = task(f"/bin/sh -c 'echo start $TASKD_RUN_ID >> {log}; while [ ! -e {gate} ]; do sleep 0.02; done; "
               f"echo end $TASKD_RUN_ID >> {log}'", kind="processing", extra="Overlap=allow\nMaxInstances=2")
    d = daemon_factory({"p.task": job}).start()
    runs = [wake_json(d, "p")[0] for _ in range(3)]
    assert [r["disposition"] for r in runs] == ["started", "started", "queued"], runs
    wait_for(lambda: log.exists() and log.read_text().count("start") == 2, what="two runs side by side")
    status = json.loads(d.taskctl("status", "p", "--json").stdout)
    assert status["current"]["runId"] == runs[0]["runId"]
    assert [r["runId"] for r in status["instances"]] == [runs[1]["runId"]]
    assert [r["runId"] for r in status["queue"]] == [runs[2]["runId"]]
    assert "2 run(s) in progress (Overlap=allow, MaxInstances=2): a trigger now waits for one to end" in \
        d.taskctl("why", "p").stdout
    gate.touch()
    wait_for(lambda: len(ends(d, "p")) == 3, what="the three runs to end")
    lines = log.read_text().split("\n")
    assert lines.index(f"start {runs[2]['runId']}") > min(lines.index(f"end {runs[0]['runId']}"),
                                                         lines.index(f"end {runs[1]['runId']}"))
    assert all(e["TASK_OUTCOME"] == "completed" for e in ends(d, "p")), ends(d, "p")


def test_a_concurrency_group_runs_its_tasks_one_at_a_time_in_order(daemon_factory, tmp_path):
    # Three tasks in ConcurrencyGroup=db: their runs never overlap, start in the order they were
    # woken, and the ones waiting hold no slot: a task outside the group runs meanwhile.
    log = tmp_path / "db.log"
    job = lambda name: task(f"/bin/sh -c 'echo start {name} >> {log}; sleep 0.4; echo end {name} >> {log}'",
                            kind="processing", extra="ConcurrencyGroup=db")
    d = daemon_factory({"a.task": job("a"), "b.task": job("b"), "c.task": job("c"),
                        "free.task": task(f"/bin/sh -c 'echo free >> {log}'", kind="processing")},
                       daemon_conf="[Daemon]\nMaxConcurrentRuns=2\n").start()
    runs = [wake_json(d, name)[0] for name in ("a", "b", "c")]
    assert [r["state"] for r in runs] == ["running", "queued", "queued"]
    assert runs[1]["waitingFor"] == "its turn in ConcurrencyGroup=db"
    why = d.taskctl("why", "c").stdout
    assert f"run {runs[2]['runId'][:8]} waits its turn in ConcurrencyGroup=db: 1 of 1 place(s) taken " \
           f"(run {runs[0]['runId'][:8]} of a), 1 run(s) ahead of it" in why, why
    assert wake_json(d, "free")[0]["state"] == "running", "a slot is free: the waiting runs hold none"
    wait_for(lambda: len(ends(d, "c")) == 1, timeout=20, what="c to end")
    lines = log.read_text().split()
    group = [w for w in log.read_text().splitlines() if w != "free"]
    assert group == ["start a", "end a", "start b", "end b", "start c", "end c"], lines
    queued = events(d, "b", QUEUED)
    assert queued[0]["TASK_QUEUE"] == "group" and queued[0]["TASK_CONCURRENCY_GROUP"] == "db"


def test_typed_swift_handler_decodes_its_payload_and_returns_a_result(daemon_factory):
    d = daemon_factory({}, binary=WEATHERD).start()
    r = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"city": "Oslo", "steps": 1}', "--wait", "--json")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)[0]
    assert run["state"] == "completed" and run["result"] == {"attempt": 1, "city": "Oslo", "steps": 1}
    status = json.loads(d.taskctl("status", "WEATHER_DATA", "--json").stdout)
    assert status["last"]["result"]["city"] == "Oslo"
    text = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"city": "Rome", "steps": 1}', "--wait")
    assert text.returncode == 0 and '"city":"Rome"' in text.stdout
    bad = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"steps": "many"}', "--wait", "--json")
    failed = json.loads(bad.stdout)[0]
    assert bad.returncode == 1 and failed["state"] == "failed"
    assert "does not decode as RefreshRequest" in failed["error"]
    empty = json.loads(d.taskctl("wake", "WEATHER_DATA", "--payload", '{"city": ""}', "--wait", "--json").stdout)[0]
    assert empty["state"] == "failed" and empty["error"] == "no city given"


def test_history_keeps_the_last_runs_newest_first_on_disk(daemon_factory):
    d = daemon_factory({"h.task": task("/bin/sh -c 'exit $((TASKD_ATTEMPT - 1))'", extra="History=3")}).start()
    ids = [json.loads(d.taskctl("wake", "h", "--wait", "--json").stdout)[0]["runId"] for _ in range(5)]
    history = json.loads(d.taskctl("history", "h", "--json").stdout)
    assert [r["runId"] for r in history] == ids[:1:-1]
    assert [r["runId"] for r in json.loads(d.taskctl("history", "h", "-n", "2", "--json").stdout)] == ids[:2:-1]
    record = json.loads((d.state / "tasks" / "appRefresh:h.json").read_text())
    assert [r["runId"] for r in record["history"]] == ids[2:]
    text = d.taskctl("history", "h").stdout
    assert text.splitlines()[0].split() == ["STARTED", "RUN", "TRIGGER", "ATTEMPT", "OUTCOME", "DURATION", "WAITED",
                                            "DETAILS"]
    assert "3 run(s), the last to end first." in text
    # It survives a restart.
    d.stop()
    d.start()
    assert [r["runId"] for r in json.loads(d.taskctl("history", "h", "--json").stdout)] == ids[:1:-1]


@pytest.mark.slow
def test_reload_adds_removes_and_restarts_changed_tasks_and_leaves_the_rest(daemon_factory):
    long = "/bin/sleep 30"
    d = daemon_factory({"keep.task": task(long), "drop.task": task(long), "change.task": task(long, budget="30s")})
    d.start()
    keep = wake_json(d, "keep")[0]
    drop = wake_json(d, "drop")[0]
    change = wake_json(d, "change", "--id", "v1")[0]
    tasks = d.config / "tasks.d"
    (tasks / "drop.task").unlink()
    (tasks / "change.task").write_text(task(long, budget="40s"))
    (tasks / "new.task").write_text(task("/bin/true"))
    r = d.taskctl("reload")
    assert r.returncode == 0, r.stderr
    assert "added: appRefresh:new" in r.stdout and "removed: appRefresh:drop" in r.stdout
    assert "changed: appRefresh:change" in r.stdout
    assert [e for e in ends(d, "drop") if e["TASK_CANCEL_REASON"] == "removed"] or wait_for(
        lambda: [e for e in ends(d, "drop") if e["TASK_CANCEL_REASON"] == "removed"], what="drop's run cancelled")
    old = wait_for(lambda: [e for e in ends(d, "change") if e["TASK_RUN_ID"] == change["runId"]], what="old run")[0]
    assert old["TASK_CANCEL_REASON"] == "reconfigured"
    status = json.loads(d.taskctl("status", "change", "--json").stdout)
    assert status["budgetUSec"] == 40_000_000
    assert status["current"]["runId"] != change["runId"] and status["current"]["wakeId"] == "v1"
    assert json.loads(d.taskctl("status", "keep", "--json").stdout)["current"]["runId"] == keep["runId"]
    assert d.taskctl("status", "drop").returncode == 3
    assert d.taskctl("wake", "new", "--wait").returncode == 0
    assert json.loads(d.taskctl("reload", "--json").stdout) == {"added": [], "removed": [], "changed": [],
                                                                "unchanged": 3}
    d.taskctl("cancel", "appRefresh")


def test_an_invalid_reload_changes_nothing_and_says_where(daemon_factory):
    d = daemon_factory({"a.task": task("/bin/true")}).start()
    (d.config / "tasks.d" / "b.task").write_text("[Task]\nOverlap=sometimes\n[Exec]\nExecStart=/bin/true\n")
    r = d.taskctl("reload")
    assert r.returncode == 1
    assert f"{d.config}/tasks.d/b.task:2: error: Overlap=: 'sometimes' is not coalesce, queue, replace, skip or allow" in r.stderr
    assert d.taskctl("status", "b").returncode == 3 and d.taskctl("status", "a").returncode == 0
    refused = wait_for(lambda: [e for e in journal(MESSAGE_ID=RELOADED, _PID=str(d.proc.pid))], what="the entry")
    assert "reload refused" in refused[0]["MESSAGE"]
    # SIGHUP reloads too, once the file is fixed.
    (d.config / "tasks.d" / "b.task").write_text("[Task]\nOverlap=queue\n[Exec]\nExecStart=/bin/true\n")
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: d.taskctl("status", "b").returncode == 0, what="b after SIGHUP")
    assert json.loads(d.taskctl("status", "b", "--json").stdout)["overlap"] == "queue"
