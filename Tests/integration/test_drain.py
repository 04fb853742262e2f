"""`taskctl drain` on the real binaries: it answers when the run in progress ends (exit 0), or at
its timeout with the runs still active (exit 1); no run starts meanwhile; `drain --end` starts the
runs that waited."""
import json
import os
import subprocess

import pytest

from conftest import TASKCTL, task, wait_for

pytestmark = pytest.mark.integration


def test_drain_waits_for_the_run_in_progress_holds_new_ones_and_end_starts_them(daemon_factory, tmp_path):
    # The slow run reads one line from a FIFO the test writes to once it has seen the drain wait.
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    held = os.open(gate, os.O_RDWR)  # never blocks; keeps the line for the run
    try:
        d = daemon_factory({"slow.task": task(f"/bin/sh -c 'read -r line < {gate}'", kind="processing"),
                            "next.task": task("/bin/true")}).start()
        assert d.taskctl("wake", "slow").returncode == 0
        timed_out = d.taskctl("drain", "--timeout", "200ms")
        assert timed_out.returncode == 1, timed_out
        assert "Still active after the timeout" in timed_out.stdout and "slow: run" in timed_out.stdout
        # Drained: a wake is acknowledged and waits, and why says so.
        waiting = json.loads(d.taskctl("wake", "next", "--json").stdout)
        assert [r["state"] for r in waiting] == ["queued"]
        why = json.loads(d.taskctl("why", "next", "--json").stdout)
        assert why["reasons"][0]["code"] == "draining"
        # A drain with no timeout answers once the slow run ends.
        drain = subprocess.Popen([str(TASKCTL), "--socket", d.socket, "--json", "drain"], stdout=subprocess.PIPE,
                                 text=True)
        os.write(held, b"go\n")
        out, _ = drain.communicate(timeout=60)
        assert drain.returncode == 0 and json.loads(out) == {"drained": True, "runs": []}
        assert json.loads(d.taskctl("status", "next", "--json").stdout)["current"]["state"] == "queued"
    finally:
        os.close(held)
    ended = d.taskctl("drain", "--end")
    assert ended.returncode == 0 and "1 run(s) that waited start now" in ended.stdout, ended
    wait_for(lambda: (json.loads(d.taskctl("status", "next", "--json").stdout).get("last") or {}).get("state")
             == "completed", what="the run that waited to complete")


def test_drain_usage_errors(daemon_factory):
    d = daemon_factory({"a.task": task("/bin/true")}).start()
    for args, says in [(["drain", "--timeout", "soon"], "--timeout needs a time span"),
                       (["drain", "--end", "--timeout", "1s"], "--end takes no --timeout"),
                       (["drain", "x"], "drain takes no arguments")]:
        r = d.taskctl(*args)
        assert r.returncode == 2 and says in r.stderr, (args, r)
