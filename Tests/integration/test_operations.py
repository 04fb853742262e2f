"""Operating many tasks (issue 37) against the real daemon: pause and resume (kept across a
restart), overdue and failing alerts with their MESSAGE_IDs, OnFailure= waking another task with
the run's id and outcome, `taskctl why`, `list --failed/--overdue`, and the metrics checked with
prometheus_client's OpenMetrics parser (from PyPI; scripts/test installs it)."""
import json
import time

import pytest

from conftest import journal, needs_journal, task, wait_for
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_text_families

pytestmark = [pytest.mark.integration, needs_journal]

OVERDUE = "315230310a2646b7a9aec158e58be1fa"
FAILING = "3904a312d5ea46489f97cf6bf33fc832"
RECOVERED = "d41f2525e8074f6990df56ddb055c140"
PAUSED = "8b8d0675948e42339320e30db5ca9217"
RESUMED = "31452ccdc2a642f89c47d2a096ed9dde"


def test_pause_records_wakes_without_running_them_survives_a_restart_and_resume_runs_again(daemon_factory):
    d = daemon_factory({"sync.task": task("/bin/true")}).start()
    r = d.taskctl("pause", "sync", "--note", "disk swap")
    assert r.returncode == 0 and "sync: paused until taskctl resume" in r.stdout, r.stdout
    wake = d.taskctl("wake", "sync")
    assert "paused: the wake was recorded" in wake.stdout, wake.stdout
    run = json.loads(d.taskctl("wake", "sync", "--json").stdout)[0]
    assert run["disposition"] == "paused" and run["state"] == "cancelled" and run["cancelReason"] == "paused", run
    assert "paused" in d.taskctl("list").stdout
    why = json.loads(d.taskctl("why", "sync", "--json").stdout)
    assert why["reasons"][0]["code"] == "paused" and "disk swap" in why["reasons"][0]["text"]
    assert why["reasons"][0]["messageId"] == PAUSED
    wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=PAUSED, TASK="sync", TASK_PAUSE_NOTE="disk swap"),
             what="the pause's entry")  # the reply does not wait for it

    d.stop()
    d.start()
    status = json.loads(d.taskctl("status", "sync", "--json").stdout)
    assert status["paused"] and status["pauseNote"] == "disk swap", "kept across the restart"
    assert "Paused: since" in d.taskctl("status", "sync").stdout
    assert "sync: resumed" in d.taskctl("resume", "sync").stdout
    assert json.loads(d.taskctl("wake", "sync", "--wait", "--json").stdout)[0]["state"] == "completed"
    assert journal(_PID=str(d.proc.pid), MESSAGE_ID=RESUMED, TASK="sync")


def test_pause_until_ends_by_itself(daemon_factory):
    d = daemon_factory({"sync.task": task("/bin/true")}).start()
    assert d.taskctl("pause", "sync", "--until", "1s").returncode == 0
    wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=RESUMED, TASK="sync"), what="the pause to end")
    assert not json.loads(d.taskctl("status", "sync", "--json").stdout)["paused"]


def test_overdue_failing_recovered_and_on_failure_wakes_a_task_with_the_outcome(daemon_factory, tmp_path):
    flag = tmp_path / "ok"
    d = daemon_factory({
        "nightly.task": task(f"/bin/sh -c 'test -e {flag}'",
                             extra="ExpectSuccessWithinSec=1s\nAlertAfterFailures=2\nOnFailure=notify"),
        "notify.task": task("/bin/cat"),
    }).start()
    overdue = wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=OVERDUE, TASK="nightly"), what="the overdue alert")
    assert "no completed run since taskd learnt of it" in overdue[0]["MESSAGE"]
    assert "nightly" in d.taskctl("list", "--overdue").stdout and "notify" not in d.taskctl("list", "--overdue").stdout
    for _ in range(2):
        d.taskctl("wake", "nightly", "--wait")
    failing = wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=FAILING, TASK="nightly"), what="the failing alert")
    assert failing[0]["TASK_CONSECUTIVE_FAILURES"] == "2"
    said = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid), TASK="notify") if e.get("TASK_STREAM") == "stdout"], what="notify's run")
    payload = json.loads(said[0]["MESSAGE"])
    assert payload["task"] == "nightly" and payload["outcome"] == "failed" and len(payload["runId"]) == 32
    listed = d.taskctl("list", "--failed").stdout
    assert "nightly" in listed and "failed (2 in a row), overdue" in listed, listed
    flag.touch()
    assert json.loads(d.taskctl("wake", "nightly", "--wait", "--json").stdout)[0]["state"] == "completed"
    recovered = wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=RECOVERED, TASK="nightly"), what="recovered")
    assert sorted(e["TASK_RECOVERED_FROM"] for e in recovered) == ["failing", "overdue"]
    assert "nightly" not in d.taskctl("list", "--failed").stdout


def test_a_chain_of_three_commands_passes_a_result_from_the_first_to_the_third(daemon_factory, tmp_path):
    # extract says its result on the notify descriptor (the last RESULT= counts); transform reads
    # it from its payload and says its own, which carries extract's on; load writes what reached it.
    out = tmp_path / "load.json"
    scripts = {
        "extract": "#!/bin/sh\necho 'RESULT=not json' >&3\necho 'RESULT={\"rows\": 21}' >&3\n",
        "transform": "#!/usr/bin/python3\nimport json, os, sys\np = json.load(sys.stdin)\n"
                     "r = {'rows': p['result']['rows'] * 2, 'from': p['result']}\n"
                     "os.write(3, ('RESULT=' + json.dumps(r) + '\\n').encode())\n",
        "load": f"#!/bin/sh\ncat > {out}.tmp && mv {out}.tmp {out}\n",
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    d = daemon_factory({
        "extract.task": task(str(tmp_path / "extract"), extra="OnSuccess=transform"),
        "transform.task": task(str(tmp_path / "transform"), extra="OnSuccess=load"),
        "load.task": task(str(tmp_path / "load")),
    }).start()
    d.taskctl("wake", "extract")
    wait_for(out.exists, what=lambda: f"load to run; journal: {[e.get('MESSAGE') for e in journal()][-12:]}")
    payload = json.loads(out.read_text())
    assert payload["task"] == "transform" and payload["outcome"] == "completed", payload
    assert payload["result"] == {"rows": 42, "from": {"rows": 21}}, payload
    history = json.loads(d.taskctl("history", "extract", "--json").stdout)
    assert history[0]["result"] == {"rows": 21}, history[0]


def test_after_orders_the_runs_of_one_wake_and_why_says_what_a_run_waits_for(daemon_factory, tmp_path):
    # One wake of the kind starts all three; After= makes them go extract → transform → load, each
    # starting only once the one before ended (transform fails: order, not requirement).
    log = tmp_path / "order.log"
    gate = tmp_path / "gate"
    job = "/bin/sh -c 'echo \"start {n} $(date +%s%N)\" >> {log}; {wait}echo \"end {n} $(date +%s%N)\" >> {log}; exit {status}'"
    d = daemon_factory({
        "load.task": task(job.format(n="load", log=log, wait="", status=0), kind="processing", extra="After=transform"),
        "extract.task": task(job.format(n="extract", log=log, wait=f"while [ ! -e {gate} ]; do sleep 0.05; done; ",
                                        status=0), kind="processing"),
        "transform.task": task(job.format(n="transform", log=log, wait="", status=1), kind="processing",
                               extra="After=extract"),
    }).start()
    r = d.taskctl("wake", "processing", "--json")
    assert r.returncode == 0, r
    runs = {run["task"]: run for run in json.loads(r.stdout)}
    assert runs["extract"]["state"] == "running", runs
    assert runs["transform"]["state"] == "queued" and "(After=)" in runs["transform"]["waitingFor"], runs
    why = d.taskctl("why", "transform").stdout
    assert f"waits for run {runs['extract']['runId'][:8]} of extract to end (After=)" in why, why
    gate.touch()
    wait_for(lambda: log.exists() and log.read_text().count("end ") == 3, what="the three runs to end")
    events = [line.split()[:2] for line in log.read_text().splitlines()]
    assert events == [["start", "extract"], ["end", "extract"], ["start", "transform"], ["end", "transform"],
                      ["start", "load"], ["end", "load"]], events
    waited = wait_for(lambda: journal(_PID=str(d.proc.pid), TASK="load", TASK_QUEUE="after"), what="load's queued entry")
    assert waited and waited[0]["TASK_AFTER_RUN_IDS"] == runs["transform"]["runId"], waited


def test_pause_after_failures_pauses_the_task_and_why_says_so(daemon_factory):
    d = daemon_factory({"flaky.task": task("/bin/false", extra="PauseAfterFailures=1")}).start()
    d.taskctl("wake", "flaky", "--wait")
    wait_for(lambda: journal(_PID=str(d.proc.pid), MESSAGE_ID=PAUSED, TASK="flaky"), what="the pause")
    why = d.taskctl("why", "flaky").stdout
    assert "PauseAfterFailures=1: 1 failures in a row" in why and f"MESSAGE_ID={PAUSED}" in why, why


@pytest.mark.slow
def test_metrics_parse_as_openmetrics_and_the_metrics_file_is_kept(daemon_factory, tmp_path):
    metrics_file = tmp_path / "taskd.prom"
    d = daemon_factory({
        "ok.task": task("/bin/true", extra="[Timer]\nOnCalendar=2099-01-01"),
        "bad.task": task("/bin/false"),
    }, daemon_conf=f"[Daemon]\nMetricsFile={metrics_file}\n").start()
    d.taskctl("wake", "ok", "--wait")
    d.taskctl("wake", "bad", "--wait")
    d.taskctl("pause", "bad")
    text = d.taskctl("metrics").stdout
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["taskd_wakes"].type == "counter"
    assert families["taskd_wakes"].samples[0].value == 2
    runs = {(s.labels["task"], s.labels["outcome"]): s.value for s in families["taskd_runs"].samples}
    assert runs == {("ok", "completed"): 1, ("bad", "failed"): 1}
    histogram = [s for s in families["taskd_run_duration_seconds"].samples if s.labels["task"] == "ok"]
    assert {s.name for s in histogram} >= {"taskd_run_duration_seconds_bucket", "taskd_run_duration_seconds_count"}
    assert [s.value for s in histogram if s.labels.get("le") == "+Inf"] == [1]
    next_run = {s.labels["task"]: s.value for s in families["taskd_task_next_run_timestamp_seconds"].samples}
    assert next_run["ok"] == time.mktime((2099, 1, 1, 0, 0, 0, 0, 0, -1)), "2099-01-01 00:00, local time"
    assert {s.labels["task"] for s in families["taskd_task_last_success_timestamp_seconds"].samples} == {"ok"}
    assert [s.labels["task"] for s in families["taskd_task_consecutive_failures"].samples] == ["bad"]
    assert [s.labels["task"] for s in families["taskd_task_paused"].samples] == ["bad"]
    # The file follows within its 10 s interval, atomically replaced, in the Prometheus text format
    # node_exporter's textfile collector parses (its counters typed as such), with the same families.
    wait_for(lambda: metrics_file.exists() and 'taskd_task_paused{task="bad"' in metrics_file.read_text(),
             timeout=15, what="the metrics file")
    in_file = {f.name: f for f in prometheus_text_families(metrics_file.read_text())}
    assert set(in_file) == set(families) and in_file["taskd_runs"].type == "counter"
    assert "# EOF" not in metrics_file.read_text()
