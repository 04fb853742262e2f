"""`taskctl upgrade` on the real binaries: taskd re-executes a different build (another version
string) in place, keeping its PID; every command run in progress goes on to its real exit status,
its output lines neither lost nor repeated, its budget kept to the original deadline, no run
started twice; `wake --wait` watchers resume and end with the run's true outcome. A new binary
that fails its checks changes nothing."""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import TASKCTL, TASKD, journal, needs_journal, task, wait_for

pytestmark = pytest.mark.integration

SEQ = ("/bin/sh -c 'i=0; while [ $i -lt {n} ]; do i=$((i+1)); echo \"seq $i\"; sleep 0.05; done; "
       "exit {status}'")


def install_copy(tmp_path):
    """taskd copied where the test may replace it, as a package upgrade replaces /usr/sbin/taskd."""
    binary = tmp_path / "bin" / "taskd"
    binary.parent.mkdir()
    shutil.copy(TASKD, binary)
    return binary


def replace_with_version(binary, version):
    """Writes a build of another version string over `binary` (a copy with the version bytes
    rewritten, renamed over the old file as dpkg does), the running image untouched."""
    data = binary.read_bytes()
    marker = b"taskd-version:0.1.0"
    assert data.count(marker) == 1
    new = binary.with_name("taskd.new")
    new.write_bytes(data.replace(marker, b"taskd-version:" + version.encode()))
    new.chmod(0o755)
    os.rename(new, binary)


def last_runs(d, name):
    return json.loads(d.taskctl("history", name, "--json").stdout)


@needs_journal
def test_upgrade_keeps_every_command_run_its_output_budget_and_watchers(daemon_factory, tmp_path):
    binary = install_copy(tmp_path)
    seqs = {f"seq{i}": (20 + 2 * i, i % 4) for i in range(20)}  # lines (1-3 s of output), exit status
    tasks = {f"{name}.task": task(SEQ.format(n=n, status=status), kind="processing")
             for name, (n, status) in seqs.items()}
    tasks["expires.task"] = task("/bin/sleep 100", kind="processing", budget="3s", grace="1s")
    tasks["killed.task"] = task("/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.05; done'", kind="processing",
                                budget="3s", grace="1s")
    d = daemon_factory(tasks, binary=binary, daemon_conf="[Daemon]\nMaxConcurrentRuns=64\n").start()
    started = {}
    for name in list(seqs) + ["expires", "killed"]:
        r = d.taskctl("wake", name, "--json")
        assert r.returncode == 0, r
        started[name] = json.loads(r.stdout)[0]["runId"]
    watched = ["seq0", "seq1", "seq2", "seq3", "seq19"]
    watchers = {name: subprocess.Popen([str(TASKCTL), "--socket", d.socket, "--json", "wake", name, "--wait"],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for name in watched}
    time.sleep(0.5)
    replace_with_version(binary, "0.1.9")
    pid = d.proc.pid
    up = d.taskctl("--json", "upgrade")
    assert up.returncode == 0, up
    answer = json.loads(up.stdout)
    assert answer["previousVersion"] == "taskd 0.1.0" and answer["version"] == "taskd 0.1.9"
    assert answer["runs"] == len(started) and answer["answered"]
    assert d.proc.poll() is None and d.proc.pid == pid, "the PID stays"
    info = d.call("org.varlink.service.GetInfo")[0]["parameters"]
    assert info["version"] == "0.1.9"

    def ended(name):
        runs = last_runs(d, name)
        return runs and runs[0]["state"] not in ("running", "cancelling", "killing")
    for name in started:
        wait_for(lambda: ended(name), timeout=30, what=f"{name}'s run to end")
    for name, (n, status) in seqs.items():
        runs = last_runs(d, name)
        assert [r["runId"] for r in runs] == [started[name]], f"{name}: one run, never started twice"
        assert runs[0]["exitStatus"] == status
        assert runs[0]["state"] == ("completed" if status == 0 else "failed")
        lines = [e["MESSAGE"] for e in journal(TASK=name, TASK_RUN_ID=started[name]) if e["MESSAGE"].startswith("seq ")]
        assert lines == [f"seq {k}" for k in range(1, n + 1)], f"{name}: every line once, in order"
    # The budgets kept their deadlines: cancellation at 2 s (budget − grace), the hard stop at 3 s.
    expired = last_runs(d, "expires")[0]
    assert expired["state"] == "expired" and expired["cancelReason"] == "budget"
    assert 2_000_000 <= expired["durationUSec"] < 2_050_000, expired
    killed = last_runs(d, "killed")[0]
    assert killed["state"] == "killed" and killed["signal"] == "SIGKILL"
    assert 3_000_000 <= killed["durationUSec"] < 3_050_000, killed
    adopted = journal(MESSAGE_ID="00e794f7c5364f18819656b7a9833d85")
    assert sorted(e["TASK_RUN_ID"] for e in adopted) == sorted(started.values())
    assert len(journal(MESSAGE_ID="8605484d98ae4477a29493037f9e10ec")) == len(started), "no run started twice"
    for name, w in watchers.items():
        out, err = w.communicate(timeout=30)
        final = json.loads(out)[0]
        truth = last_runs(d, name)[0]
        assert (final["runId"], final["state"], final["exitStatus"]) == (truth["runId"], truth["state"],
                                                                         truth["exitStatus"]), (name, err)
        assert w.returncode == (0 if truth["state"] == "completed" else 1)


def test_a_new_binary_that_fails_its_checks_changes_nothing(daemon_factory, tmp_path):
    binary = install_copy(tmp_path)
    d = daemon_factory({"slow.task": task(SEQ.format(n=30, status=0), kind="processing")}, binary=binary).start()
    run = json.loads(d.taskctl("wake", "slow", "--json").stdout)[0]["runId"]
    # A binary that dies at once (a crash before it is ready).
    broken = binary.with_name("taskd.new")
    broken.write_text("#!/bin/sh\necho 'segfault' >&2\nexit 139\n")
    broken.chmod(0o755)
    os.rename(broken, binary)
    r = d.taskctl("upgrade")
    assert r.returncode == 1 and "the upgrade did not happen" in r.stderr and "--version" in r.stderr, r
    # A binary that works, and a configuration that does not: --check-config names file and line.
    shutil.copy(TASKD, binary)
    (d.config / "tasks.d" / "bad.task").write_text("[Task]\nKind=processing\nRuntimeBudgetSec=soon\n[Exec]\nExecStart=/bin/true\n")
    r = d.taskctl("upgrade")
    assert r.returncode == 1 and "--check-config" in r.stderr and "bad.task:3" in r.stderr, r
    # taskd went on as it was: the run ends as it would have, and new wakes are served.
    wait_for(lambda: (last_runs(d, "slow") or [{}])[0].get("state") == "completed", timeout=30,
             what="the run to complete")
    assert [x["runId"] for x in last_runs(d, "slow")] == [run]
    assert d.taskctl("wake", "slow").returncode == 0
