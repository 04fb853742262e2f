"""The state folder's format version on the real binary: a folder written before the version file
existed is read (its history and its acknowledged wakes) and stamped; a folder of a newer format is
refused with exit status 78, a message naming the file and both versions, and nothing served or
touched."""
import json

import pytest

from conftest import journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

STATE_ERROR = "4186c9efb27f47bb90a007455a3ad0b4"
REFUSED = 78


def test_a_folder_from_before_the_format_file_is_read_and_stamped(daemon_factory):
    d = daemon_factory({"job.task": task("/bin/sh -c 'echo \"$TASKD_WAKE_ID\" >> \"$STATE_DIRECTORY/ran\"'")})
    (d.state / "tasks").mkdir(parents=True)
    # As taskd wrote them before the format file: a task record with one run, and an acknowledged wake.
    run = {"runId": "0123456789abcdef0123456789abcdef", "task": "job", "kind": "appRefresh", "trigger": "wake",
           "attempt": 1, "state": "completed", "queuedUSec": 1_000_000, "startedUSec": 1_000_000,
           "endedUSec": 2_000_000, "budgetUSec": 30_000_000}
    (d.state / "tasks" / "appRefresh:job.json").write_text(json.dumps({"history": [run], "version": 1}))
    (d.state / "wakes.log").write_text(
        json.dumps({"add": "r1", "kind": "appRefresh", "task": "job", "wakeId": "before", "atUSec": 1}) + "\n")
    d.start()
    wait_for(lambda: (d.state / "ran").exists(), what="the wake acknowledged before the upgrade to run")
    assert (d.state / "ran").read_text() == "before\n"
    assert (d.state / "format").read_text() == "1\n"
    history = json.loads(d.taskctl("--json", "history", "job").stdout)
    assert "0123456789abcdef0123456789abcdef" in [r["runId"] for r in history]


@pytest.mark.parametrize("content, says", [("2\n", "of format 2, written by a newer taskd"),
                                            ("two\n", 'expected a format version number, found "two"')])
def test_a_newer_or_unknown_format_is_refused_with_78_and_nothing_touched(daemon_factory, content, says):
    d = daemon_factory({"job.task": task("/bin/true")})
    (d.state / "tasks").mkdir(parents=True)
    (d.state / "format").write_text(content)
    wakes = json.dumps({"add": "r1", "kind": "appRefresh", "task": "job", "wakeId": "kept", "atUSec": 1}) + "\n"
    (d.state / "wakes.log").write_text(wakes)
    d.start(wait=False)
    assert d.proc.wait(timeout=30) == REFUSED
    stderr = d.stderr_text()
    assert str(d.state / "format") in stderr and says in stderr
    if content == "2\n":
        assert "reads formats up to 1" in stderr
    entry = wait_for(lambda: journal(MESSAGE_ID=STATE_ERROR, _PID=str(d.proc.pid)), what="the journal entry")
    assert entry[0]["PRIORITY"] == "2" and says in entry[0]["MESSAGE"]
    # Nothing served, nothing rewritten.
    assert d.taskctl("list").returncode != 0
    assert (d.state / "format").read_text() == content
    assert (d.state / "wakes.log").read_text() == wakes
    assert sorted(p.name for p in d.state.iterdir()) == ["format", "tasks", "wakes.log"]
