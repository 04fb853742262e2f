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

from conftest import FAULTS, TASKCTL, TASKD, journal, needs_journal, task, wait_for

pytestmark = pytest.mark.integration

SEQ = ("/bin/sh -c 'i=0; while [ $i -lt {n} ]; do i=$((i+1)); echo \"seq $i\"; sleep 0.05; done; "
       "exit {status}'")
# Prints a numbered line every 50 ms until the gate exists, then {n} more, and exits {status}.
GATED = ("/bin/sh -c 'i=0; j=0; while [ $j -lt {n} ]; do i=$((i+1)); echo \"seq $i\"; [ -e {gate} ] && j=$((j+1)); "
         "sleep 0.05; done; exit {status}'")


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


def end_entry(run_id):
    """The run's end entry, once journald has it: the history tells an end before taskd's queue has
    handed the run's last output lines and its end entry on."""
    return wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "TASK_OUTCOME" in e], timeout=30,
                    what=f"the end of run {run_id} in the journal")[0]


@pytest.mark.slow
@needs_journal
def test_upgrade_keeps_every_command_run_its_output_budget_and_watchers(daemon_factory, tmp_path):
    binary = install_copy(tmp_path)
    gate = tmp_path / "gate"
    seqs = {f"seq{i}": (20 + 2 * i, i % 4) for i in range(20)}  # lines after the gate (1-3 s), exit status
    tasks = {f"{name}.task": task(GATED.format(n=n, status=status, gate=gate), kind="processing")
             for name, (n, status) in seqs.items()}
    tasks["expires.task"] = task("/bin/sleep 100", kind="processing", budget="6s", grace="2s")
    tasks["killed.task"] = task("/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.05; done'", kind="processing",
                                budget="6s", grace="2s")
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
    gate.touch()

    def ended(name):
        runs = last_runs(d, name)
        return runs and runs[0]["state"] not in ("running", "cancelling", "killing")
    for name in started:
        wait_for(lambda: ended(name), timeout=30, what=f"{name}'s run to end")
        end_entry(started[name])
    for name, (n, status) in seqs.items():
        runs = last_runs(d, name)
        assert [r["runId"] for r in runs] == [started[name]], f"{name}: one run, never started twice"
        assert runs[0]["exitStatus"] == status
        assert runs[0]["state"] == ("completed" if status == 0 else "failed")
        lines = [e["MESSAGE"] for e in journal(TASK=name, TASK_RUN_ID=started[name]) if e["MESSAGE"].startswith("seq ")]
        assert len(lines) >= n and lines == [f"seq {k}" for k in range(1, len(lines) + 1)], \
            f"{name}: every line once, in order"
    # The budgets kept their deadlines: cancellation at 4 s (budget − grace), the hard stop at 6 s.
    expired = last_runs(d, "expires")[0]
    assert expired["state"] == "expired" and expired["cancelReason"] == "budget"
    assert 4_000_000 <= expired["durationUSec"] < 4_050_000, expired
    killed = last_runs(d, "killed")[0]
    assert killed["state"] == "killed" and killed["signal"] == "SIGKILL"
    assert 6_000_000 <= killed["durationUSec"] < 6_050_000, killed
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


def test_an_upgrade_cancels_swift_runs_and_runs_them_again_and_keeps_the_timers(daemon_factory, tmp_path):
    # An app daemon (Swift handlers): `patient` starts 1 s after start-up (no wake asked for it)
    # and sleeps 30 s. The upgrade cancels it (reason upgrade) and the new image runs it again
    # (trigger resume); its start-up timer, which fired, does not fire again.
    binary = tmp_path / "bin" / "taskd-faults"
    binary.parent.mkdir()
    shutil.copy(FAULTS, binary)
    d = daemon_factory({}, binary=binary, env={"TASKD_FAULTS_PATIENT": "1"}).start()
    wait_for(lambda: (json.loads(d.taskctl("status", "patient", "--json").stdout).get("current") or {}).get("state")
             == "running", what="patient's start-up run")
    first = json.loads(d.taskctl("status", "patient", "--json").stdout)["current"]
    assert first["trigger"] == "startup"
    up = d.taskctl("--json", "upgrade")
    assert up.returncode == 0 and json.loads(up.stdout)["runs"] == 0, up
    wait_for(lambda: len(last_runs(d, "patient")) >= 1, what="the cut run in the history")
    cut = last_runs(d, "patient")[0]
    assert (cut["runId"], cut["state"], cut["cancelReason"]) == (first["runId"], "cancelled", "upgrade")
    again = wait_for(lambda: json.loads(d.taskctl("status", "patient", "--json").stdout).get("current"),
                     what="the run again")
    assert again["trigger"] == "resume" and again["runId"] != first["runId"]
    time.sleep(1.5)  # a start-up timer fired again would have started a run by now
    status = json.loads(d.taskctl("status", "patient", "--json").stdout)
    assert status["current"]["runId"] == again["runId"] and len(last_runs(d, "patient")) == 1
