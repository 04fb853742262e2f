"""Submitted tasks on the real daemon (taskctl submit): run once as the user who submitted them,
kept across a restart, removed once spent or cancelled; refused, with the reason, to whoever may
not submit or asks to run as someone else. Clients run as other users with setpriv."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import IS_ROOT, TASKCTL, journal, task, wait_for

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not IS_ROOT or shutil.which("setpriv") is None,
                                 reason="running clients as other users needs root and setpriv")]

SUBMITTED = "93fefabbdd6f400792152eb59608e0df"
NOBODY = 65534


@pytest.fixture
def shared():
    """A folder every user may write in: where the submitted commands leave their marks."""
    folder = tempfile.mkdtemp(prefix="taskd-submit-")
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def open_daemon(open_socket_daemon):
    """A taskd any local user can reach, with one configured task."""
    return lambda daemon_conf=None: open_socket_daemon({"fetch.task": task("/bin/true")}, daemon_conf)


def as_nobody(d, *args):
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                           str(TASKCTL), "--socket", d.socket, *args], capture_output=True, text=True, timeout=30)


def names(d):
    return [t["name"] for t in json.loads(d.taskctl("list", "--json").stdout)]


def test_submit_in_2s_runs_as_its_submitter_after_a_restart_then_is_removed(open_daemon, shared):
    d = open_daemon(f"[Daemon]\nSubmitUsers={NOBODY}\n")
    out = os.path.join(shared, "hello.out")
    submitted = as_nobody(d, "submit", "--in", "2s", "--name", "hello", "--json", "--",
                          "/bin/sh", "-c", f"id -u > {out}; echo \"$1\" >> {out}", "sh", "two words")
    assert submitted.returncode == 0, submitted.stderr
    info = json.loads(submitted.stdout)
    due = info["nextElapseUSec"]
    assert info["kind"] == "submitted" and info["name"] == "hello"
    assert "hello" in names(d)
    kept = d.state / "submitted" / "hello.task"
    assert kept.exists() and f"User={NOBODY}" in kept.read_text()
    # taskd restarts before its time: the task is read back from the state folder.
    assert d.stop() == 0
    assert time.time() * 1e6 < due, "the restart came after the due time: the test proves nothing"
    d.start()
    assert "hello" in names(d)
    wait_for(lambda: os.path.exists(out) and open(out).read().count("\n") == 2, timeout=15, what="the command's output")
    assert open(out).read().split("\n")[:2] == [str(NOBODY), "two words"]
    started = wait_for(lambda: journal(MESSAGE_ID="8605484d98ae4477a29493037f9e10ec", TASK="hello"),
                       what="the run's start")
    assert started[0]["TASK_KIND"] == "submitted" and started[0]["TASK_TRIGGER"] == "timer"
    assert int(started[0]["__REALTIME_TIMESTAMP"]) >= due
    # Spent: removed, with its file and its record, and said so.
    wait_for(lambda: "hello" not in names(d), what="the spent task to go")
    wait_for(lambda: not kept.exists() and not (d.state / "tasks" / "submitted:hello.json").exists(),
             what="its file and its record to go")
    # Said as it goes, from taskd's journal queue: the list and the files can tell it first.
    notes = wait_for(lambda: (lambda n: n if any("spent" in m for m in n) else None)(
        [e["MESSAGE"] for e in journal(MESSAGE_ID=SUBMITTED, TASK="hello")]), what="the note that it is spent")
    assert any("submitted by uid 65534" in n for n in notes), notes


def test_a_submit_with_no_time_runs_now_then_is_removed(open_daemon, shared):
    # "Once, now": its instant passes while its file is written and synced, before taskd adds the
    # task; it runs at once all the same, as a timer elapse, not at the next start of taskd.
    d = open_daemon()
    out = os.path.join(shared, "now.out")
    submitted = d.taskctl("submit", "--name", "now", "--", "/bin/touch", out)
    assert submitted.returncode == 0, submitted.stderr
    wait_for(lambda: os.path.exists(out), timeout=10, what="the command to run")
    started = wait_for(lambda: journal(MESSAGE_ID="8605484d98ae4477a29493037f9e10ec", TASK="now"),
                       what="the run's start")
    assert started[0]["TASK_TRIGGER"] == "timer"
    wait_for(lambda: "now" not in names(d), what="the spent task to go")


def test_a_time_that_passes_while_taskd_is_down_runs_when_it_starts(open_daemon, shared):
    d = open_daemon()
    out = os.path.join(shared, "late.out")
    at = f"@{int(time.time()) + 2}"
    assert d.taskctl("submit", "--at", at, "--name", "late", "--", "/bin/sh", "-c", f"echo ran > {out}").returncode == 0
    d.stop()
    wait_for(lambda: time.time() > int(at[1:]) + 0.5, timeout=5, what="the due time to pass while taskd is down")
    d.start()
    wait_for(lambda: os.path.exists(out), timeout=15, what="the missed run")
    started = wait_for(lambda: journal(MESSAGE_ID="8605484d98ae4477a29493037f9e10ec", TASK="late"), what="its start")
    assert started[0]["TASK_TRIGGER"] == "catchup"
    wait_for(lambda: "late" not in names(d), what="the spent task to go")


def test_who_may_submit_and_as_whom(open_daemon, shared):
    d = open_daemon()
    refused = as_nobody(d, "submit", "--", "/bin/true")
    assert refused.returncode == 5 and "may not submit tasks (SubmitUsers=, SubmitGroups=)" in refused.stderr
    d.stop()
    d = open_daemon(f"[Daemon]\nSubmitUsers={NOBODY}\n")
    for identity in ("User=root", "Group=0"):
        other = as_nobody(d, "submit", "-p", identity, "--", "/bin/true")
        assert other.returncode == 5 and "another user or group" in other.stderr, other.stderr
    # Root's submitted task is root's: nobody may not cancel it; root may, and it is withdrawn.
    assert d.taskctl("submit", "--in", "1h", "--name", "roots", "--", "/bin/true").returncode == 0
    assert as_nobody(d, "cancel", "submitted:roots").returncode == 5
    withdrawn = d.taskctl("cancel", "submitted:roots")
    assert withdrawn.returncode == 0 and "withdrawn" in withdrawn.stdout
    assert "roots" not in names(d) and not (d.state / "submitted" / "roots.task").exists()
    assert names(d) == ["fetch"]


def test_bad_requests_say_what_is_wrong(open_daemon):
    d = open_daemon()
    for args, said in [(["-p", "RuntimeBudgetSec=soon", "--", "/bin/true"], "RuntimeBudgetSec"),
                       (["-p", "OnSuccess=fetch", "--", "/bin/true"], "stands alone"),
                       (["-p", "ExecStart=/bin/false", "--", "/bin/true"], "not for a submitted task"),
                       (["--calendar", "daily", "--in", "5s", "--", "/bin/true"], "give only one of"),
                       (["--budget", "soon", "--", "/bin/true"], "--budget needs a time span"),
                       (["--name", "bad name!", "--", "/bin/true"], "--name: must be 1 to 64 letters"),
                       (["--at", "tomorrowish", "--", "/bin/true"], "--at 'tomorrowish'"),
                       (["--at", "2001-01-01 00:00", "--", "/bin/true"], "ago: give a time to come"),
                       ([], "needs a command")]:
        r = d.taskctl("submit", *args)
        assert r.returncode == 2 and said in r.stderr, (args, r.stderr)
    assert names(d) == ["fetch"]
