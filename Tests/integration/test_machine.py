"""A faulty machine under the real daemon (issue 7): journald stops and comes back; the state
folder fills up or turns read-only. taskd reports it, keeps scheduling, and corrupts no file.
(kill -9 during a load of wakes: test_crash.py; a wall-clock jump: test_calendar.py.)"""
import json
import subprocess
import time

import conftest
import pytest

from conftest import journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]


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
    wait_for(lambda: [e for e in journal(TASK_RUN_ID=back) if "TASK_OUTCOME" in e],
             what=lambda: f"journald used again; the end of taskd's standard error: {d.stderr_text()[-800:]!r}")


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


def read_only(folder):
    """Stacks a read-only bind mount of `folder` over it, made read-only before it is in place: a
    bind made over the folder and then set read-only fails (EBUSY) if taskd opens a file for
    writing through it in between."""
    staging = folder.parent / f"{folder.name}.ro"
    staging.mkdir()
    subprocess.run(["mount", "--bind", str(folder), str(staging)], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(staging)], check=True)
    subprocess.run(["mount", "--move", str(staging), str(folder)], check=True)


def test_a_read_only_state_folder_is_reported_scheduling_goes_on_and_no_file_is_corrupted(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/true"), "tick.task": task("/bin/true", extra="[Timer]\nOnStartupSec=1\nOnUnitActiveSec=300ms")})
    d.start()
    assert d.taskctl("wake", "hello", "--wait").returncode == 0
    # active-runs.json is left out: it is written behind the runs (within 10 ms, off the loop), so
    # the last run's removal of it may land before or after the folder turns read-only.
    settled = lambda: {f: f.read_bytes() for f in d.state.rglob("*.json") if f.name != "active-runs.json"}
    before_ro = settled()
    # A read-only bind mount stacked over the folder: every new open, create and rename fails with
    # EROFS. (Remounting the folder's own mount is refused while taskd holds the wake log open for
    # writing; that open file keeps working, as it would under ReadOnlyPaths= applied to new opens.)
    read_only(d.state)
    try:
        for _ in range(5):  # wakes are still acknowledged and run, from memory
            r = d.taskctl("wake", "hello", "--wait", "--json")
            assert json.loads(r.stdout)[0]["state"] == "completed", r
        errors = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if e.get("PRIORITY") == "3"
                                   and "Read-only file system" in e["MESSAGE"]], what="the read-only folder to be reported")
        assert str(d.state) in errors[0]["MESSAGE"]  # the message names the file it could not write
        assert len(errors) == 1  # once per spell, not once per run
        ticks = lambda: len([e for e in journal(_PID=str(d.proc.pid), TASK="tick") if "TASK_OUTCOME" in e])
        before = ticks()
        wait_for(lambda: ticks() >= before + 2, what="the timer to keep firing")
        # Nothing on disk changed while it was read-only, and every file is still whole.
        assert settled() == before_ro
        status = json.loads(d.taskctl("status", "hello", "--json").stdout)
        assert status["last"]["state"] == "completed"  # memory is ahead of the disk
        subprocess.run(["umount", str(d.state)], check=True)
        assert d.taskctl("wake", "hello", "--wait").returncode == 0  # the next write catches up
        wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if e.get("PRIORITY") == "5"
                          and e["MESSAGE"] == f"{d.state}/tasks: writable again"], what="the recovery notice")
        state_files_are_valid(d.state)
        assert d.stop() == 0
        d.start()
        history = json.loads(d.taskctl("history", "hello", "-n", "100", "--json").stdout)
        assert len(history) == 7  # one before, five while read-only (rewritten from memory), one after
    finally:
        d.stop()
        subprocess.run(["umount", str(d.state)], capture_output=True)  # if a step above failed


def test_taskd_starts_on_a_read_only_state_folder_and_serves_from_memory(daemon_factory):
    d = daemon_factory({"hello.task": task("/bin/true")})
    d.state.mkdir(parents=True)
    read_only(d.state)
    try:
        d.start()
        r = d.taskctl("wake", "hello", "--wait", "--json")
        assert json.loads(r.stdout)[0]["state"] == "completed", r
        wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if e.get("PRIORITY") == "3"
                          and "Read-only file system" in e["MESSAGE"]], what="the read-only folder to be reported")
        assert list(d.state.iterdir()) == []
    finally:
        d.stop()
        subprocess.run(["umount", str(d.state)])
