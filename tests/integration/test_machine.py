"""A faulty machine under the real daemon (issue 7): journald stops and comes back; the state
folder fills up or turns read-only. taskd reports it, keeps scheduling, and corrupts no file.
(kill -9 during a load of wakes: test_crash.py; a wall-clock jump: test_calendar.py.)"""
import json
import subprocess
import time

import conftest
from conftest import journal, needs_journal, task, wait_for

pytestmark = needs_journal


def test_journald_stops_events_go_to_stderr_nothing_blocks_and_journald_is_used_again(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/echo hello-output")}).start()
    assert d.taskctl("wake", "hello", "--wait").returncode == 0
    conftest.stop_journald()
    try:
        t0 = time.monotonic()
        for _ in range(5):
            r = d.taskctl("wake", "hello", "--wait", "--json")
            assert r.returncode == 0, r
        assert time.monotonic() - t0 < 5, "runs blocked while journald was down"
        lost = json.loads(r.stdout)[0]["runId"]
        wait_for(lambda: f"run {lost[:8]} completed" in d.stderr_text(), what="the run's events on standard error")
        assert "hello-output" in d.stderr_text()
    finally:
        conftest.start_journald()
    r = d.taskctl("wake", "hello", "--wait", "--json")
    back = json.loads(r.stdout)[0]["runId"]
    wait_for(lambda: [e for e in journal(TASK_RUN_ID=back) if "TASK_OUTCOME" in e], what="journald used again")


def state_files_are_valid(folder):
    for f in folder.rglob("*.json"):
        json.loads(f.read_text())


def test_a_full_state_folder_is_reported_scheduling_goes_on_and_no_file_is_corrupted(daemon_factory, tmp_path):
    d = daemon_factory({"hello.task": task("/bin/true"), "tick.task": task("/bin/true", extra="[Timer]\nOnStartupSec=1\nOnUnitActiveSec=300ms")})
    d.state.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(d.state)], check=True)
    try:
        d.start()
        assert d.taskctl("wake", "hello", "--wait").returncode == 0
        filler = d.state / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)  # until ENOSPC
        for _ in range(5):  # wakes are still served and run, from memory
            r = d.taskctl("wake", "hello", "--wait", "--json")
            assert json.loads(r.stdout)[0]["state"] == "completed", r
        errors = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if e.get("PRIORITY") == "3"
                                   and "No space left" in e["MESSAGE"]], what="the full disk to be reported")
        assert errors
        ticks = lambda: len([e for e in journal(_PID=str(d.proc.pid), TASK="tick") if "TASK_OUTCOME" in e])
        before = ticks()
        wait_for(lambda: ticks() >= before + 2, what="the timer to keep firing")
        filler.unlink()
        assert d.taskctl("wake", "hello", "--wait").returncode == 0
        state_files_are_valid(d.state)
        assert d.stop() == 0
        # Restarted on the same folder, everything is readable.
        d.start()
        assert json.loads(d.taskctl("status", "hello", "--json").stdout)["last"]["state"] == "completed"
        assert not [e for e in journal(_PID=str(d.proc.pid)) if "TASKD_STATE" in "".join(e.keys()) or
                    "damaged" in e.get("MESSAGE", "")]
    finally:
        d.stop()
        subprocess.run(["umount", str(d.state)])
