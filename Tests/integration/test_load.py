"""Load (issue 7): 100 concurrent clients wake a coalescing (20 ms runs) and a queued Swift task. Every
acknowledged wake is accounted for: its run ends, completed, in the journal; the task's history
holds the newest of them. No deadlock, memory bounded. TASKD_LOAD_WAKES sets the wakes per client (CI: 20;
docs/testing.md names TASKD_LOAD_WAKES=1000, 100,000 wakes)."""
import json
import os
import threading

import pytest

from conftest import BUILD, VarlinkSocket, journal, needs_journal, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

CLIENTS = 100
WAKES = int(os.environ.get("TASKD_LOAD_WAKES", "20"))


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def test_100_clients_wake_coalescing_and_queued_tasks_and_every_acknowledged_wake_is_accounted_for(daemon_factory):
    total = CLIENTS * WAKES
    # noop queues (Overlap=queue): every wake is a run of its own. linger coalesces: wakes during its 20 ms runs join them.
    d = daemon_factory({"noop.task": "[Task]\nHistory=200\nQueueLimit=10000\n", "linger.task": "[Task]\nHistory=200\n"},
                       binary=BUILD / "taskd-bench", daemon_conf="[Daemon]\nMaxConcurrentRuns=8\n").start()
    d.call("io.taskd.Scheduler.Wake", {"target": "linger"})
    rss_before = rss_kib(d.proc.pid)
    acknowledged = {"noop": [], "linger": []}
    errors = []
    lock = threading.Lock()

    def client(n):
        try:
            with VarlinkSocket(d.socket) as v:
                for i in range(WAKES):
                    target = "noop" if (n + i) % 2 == 0 else "linger"
                    reply = v.call("io.taskd.Scheduler.Wake", {"target": target})[0]
                    runs = reply["parameters"]["runs"]
                    with lock:
                        acknowledged[target] += [(r["runId"], r["disposition"]) for r in runs]
        except Exception as e:  # noqa: BLE001 - reported below
            with lock:
                errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "clients still waiting: a deadlock"
    assert not errors, errors[:5]
    assert len(acknowledged["noop"]) + len(acknowledged["linger"]) == total

    def ended_runs():
        return {e["TASK_RUN_ID"]: e for e in journal(_PID=str(d.proc.pid)) if "TASK_OUTCOME" in e}

    # Every acknowledged run ends (queued ones included), and completes.
    noop = [run for run, _ in acknowledged["noop"]]
    linger_runs = {run for run, _ in acknowledged["linger"]}
    everything = set(noop) | linger_runs
    # Each journal query reads every entry: poll gently (at 100,000 wakes one takes seconds).
    ended = wait_for(lambda: (lambda e: e if everything <= e.keys() else None)(ended_runs()), timeout=600,
                     interval=max(0.02, total / 50_000), what="every acknowledged run to end")
    assert {ended[r]["TASK_OUTCOME"] for r in everything} == {"completed"}
    # One run per queued wake (unless the queue was full: then it joined the last one); the journal
    # holds every run, the task's history its newest 200, all of them acknowledged ones.
    dispositions = [disposition for _, disposition in acknowledged["noop"]]
    assert set(dispositions) <= {"started", "queued", "overflow"}, set(dispositions)
    assert len(set(noop)) == len(noop) - dispositions.count("overflow")
    history = json.loads(d.taskctl("history", "noop", "-n", "200", "--json").stdout)
    assert len(history) == min(200, len(set(noop))) and {r["runId"] for r in history} <= set(noop)
    # Wakes that came during a run joined it: fewer runs than wakes.
    assert len(linger_runs) < len(acknowledged["linger"])
    rss_after = rss_kib(d.proc.pid)
    assert rss_after < rss_before + 64 * 1024, (rss_before, rss_after)  # KiB: bounded, no per-wake growth
    print(json.dumps({"clients": CLIENTS, "wakes": total, "queuedRuns": len(set(noop)),
                      "overflowed": dispositions.count("overflow"), "coalescingRuns": len(linger_runs),
                      "lost": len(everything - ended.keys()), "rssBeforeKiB": rss_before, "rssAfterKiB": rss_after}))
    assert d.stop() == 0
