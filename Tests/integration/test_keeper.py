"""Runs that outlive taskd, on the real binaries: taskd-keeper is the parent of every command run,
so a taskd killed with SIGKILL leaves its runs going; the next taskd takes each over (its output
complete and in order, no line lost or written twice, its budget kept to the original deadline, its real exit status, no run
started twice), including a run that ended while no taskd was there. A clean stop ends the keeper."""
import json
import shutil
import socket
import subprocess
import time

import pytest

from conftest import TASKD, journal, needs_journal, task, wait_for
from test_upgrade import install_copy, replace_with_version

pytestmark = [pytest.mark.integration, needs_journal]

STARTED = "8605484d98ae4477a29493037f9e10ec"
ADOPTED = "00e794f7c5364f18819656b7a9833d85"
KEPT = "714d103c1a824a0680a48a51e9558755"
LOST = "3e6355480e2a4a719f4b15eefbac31fe"
# Prints a numbered line every 50 ms until the gate exists, then {n} more, and exits {status}.
GATED = ("/bin/sh -c 'i=0; j=0; while [ $j -lt {n} ]; do i=$((i+1)); echo \"seq $i\"; [ -e {gate} ] && j=$((j+1)); "
         "sleep 0.05; done; exit {status}'")


def crash(d):
    d.proc.kill()
    d.proc.wait()


def history(d, name):
    r = d.taskctl("history", name, "--json")
    assert r.returncode == 0, (r, d.stderr_text()[-2000:])
    return json.loads(r.stdout)


def ended(d, name):
    runs = history(d, name)
    return runs and runs[0]["state"] not in ("running", "cancelling", "killing")


def end_entry(run_id):
    """The run's end entry, once journald has it: the history tells an end before taskd's queue has
    handed its entries on (the adoption, the end)."""
    return wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "TASK_OUTCOME" in e], timeout=30,
                    what=f"the end of run {run_id} in the journal")[0]


def lines_of(name, run_id):
    return [e["MESSAGE"] for e in journal(TASK=name, TASK_RUN_ID=run_id) if e["MESSAGE"].startswith("seq ")]


def on_disk(d, run_id):
    """Whether taskd's list of runs in progress names the run (the file comes and goes with runs)."""
    try:
        return run_id in (d.state / "active-runs.json").read_text()
    except FileNotFoundError:
        return False


def keeper_listens(d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(str(d.state / "keeper.sock"))
        return True
    except OSError:
        return False
    finally:
        s.close()


@pytest.mark.slow
def test_command_runs_outlive_kill_9_and_the_next_taskd_takes_each_over(daemon_factory, tmp_path):
    gate = tmp_path / "gate"
    seqs = {f"seq{i}": (10 + 2 * i, i % 4) for i in range(10)}  # lines after the gate, exit status
    tasks = {f"{name}.task": task(GATED.format(n=n, status=status, gate=gate), kind="processing")
             for name, (n, status) in seqs.items()}
    tasks["expires.task"] = task("/bin/sleep 100", kind="processing", budget="6s", grace="2s")
    tasks["killed.task"] = task("/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.05; done'", kind="processing",
                                budget="6s", grace="2s")
    d = daemon_factory(tasks, daemon_conf="[Daemon]\nMaxConcurrentRuns=64\nRunKeeper=yes\n").start()
    started = {}
    for name in list(seqs) + ["expires", "killed"]:
        r = d.taskctl("wake", name, "--json")
        assert r.returncode == 0, r
        started[name] = json.loads(r.stdout)[0]["runId"]
    wait_for(lambda: all(lines_of(name, started[name]) for name in seqs), what="every run's first line")
    wait_for(lambda: all(on_disk(d, run_id) for run_id in started.values()), what="every run on disk")
    first = d.proc.pid
    crash(d)
    time.sleep(0.3)  # the runs go on printing with no taskd: their lines wait in the pipes
    d.start()
    gate.touch()
    for name in started:
        wait_for(lambda: ended(d, name), timeout=30, what=f"{name}'s run to end")
        end_entry(started[name])
    for name, (n, status) in seqs.items():
        runs = history(d, name)
        assert [r["runId"] for r in runs] == [started[name]], f"{name}: one run, never started twice"
        assert runs[0]["exitStatus"] == status and runs[0]["state"] == ("completed" if status == 0 else "failed")
        seen = [int(line.split()[1]) for line in lines_of(name, started[name])]
        assert seen == sorted(set(seen)), f"{name}: no line twice, all in order"
        assert seen[0] == 1 and len(seen) >= n
        # Every line reaches the journal, those the killed taskd had read included: the keeper
        # writes them and only then takes them out of the pipe.
        assert seen == list(range(1, seen[-1] + 1)), f"{name}: lines missing {sorted(set(range(1, seen[-1] + 1)) - set(seen))}"
        assert all(k in seen for k in range(seen[-1] - n + 1, seen[-1] + 1)), f"{name}: every line after the gate"
        writers = {e["_COMM"] for e in journal(TASK=name, TASK_RUN_ID=started[name]) if e["MESSAGE"].startswith("seq ")}
        assert writers == {"taskd-keeper"}, f"{name}: the keeper writes the output ({writers})"
    # The budgets kept their deadlines: cancellation at 4 s (budget − grace), the hard stop at 6 s.
    expired = history(d, "expires")[0]
    assert expired["state"] == "expired" and expired["cancelReason"] == "budget"
    assert 4_000_000 <= expired["durationUSec"] < 4_050_000, expired
    killed = history(d, "killed")[0]
    assert killed["state"] == "killed" and killed["signal"] == "SIGKILL"
    assert 6_000_000 <= killed["durationUSec"] < 6_050_000, killed
    adopted = journal(MESSAGE_ID=ADOPTED, _PID=str(d.proc.pid))
    assert sorted(e["TASK_RUN_ID"] for e in adopted) == sorted(started.values())
    assert "after the previous taskd stopped" in adopted[0]["MESSAGE"]
    assert journal(MESSAGE_ID=KEPT, _PID=str(d.proc.pid))[0]["TASKD_KEPT_RUNS"] == str(len(started))
    assert len(journal(MESSAGE_ID=STARTED)) == len(started), "no run started twice"
    assert not journal(MESSAGE_ID=LOST), "no run recorded lost"
    assert journal(MESSAGE_ID=STARTED)[0]["_PID"] == str(first)
    # A clean stop ends the keeper with the runs.
    assert keeper_listens(d)
    d.stop()
    wait_for(lambda: not keeper_listens(d), what="the keeper to exit at a clean stop")


def test_a_run_that_ends_while_no_taskd_runs_keeps_its_real_exit_status_and_output(daemon_factory, tmp_path):
    gate = tmp_path / "gate"
    d = daemon_factory({"quick.task": task(GATED.format(n=5, status=2, gate=gate), kind="processing")},
                       daemon_conf="[Daemon]\nRunKeeper=yes\n").start()
    run = json.loads(d.taskctl("wake", "quick", "--json").stdout)[0]["runId"]
    wait_for(lambda: lines_of("quick", run) and on_disk(d, run), what="the run's first line")
    crash(d)
    gate.touch()
    wait_for(lambda: subprocess.run(["pgrep", "-f", str(gate)], capture_output=True).returncode == 1,
             what="the run to end with no taskd")
    d.start()
    wait_for(lambda: ended(d, "quick"), what="the run's end to be recorded")
    end_entry(run)
    recorded = history(d, "quick")
    assert [r["runId"] for r in recorded] == [run]
    assert recorded[0]["state"] == "failed" and recorded[0]["exitStatus"] == 2, recorded[0]
    lines = lines_of("quick", run)
    assert len(lines) >= 5 and lines == [f"seq {k}" for k in range(1, len(lines) + 1)]
    assert not journal(MESSAGE_ID=LOST)
    d.stop()


def test_a_run_not_yet_in_the_list_of_runs_in_progress_is_taken_over_from_the_keepers_copy(daemon_factory, tmp_path):
    # A crash in the 10 ms before taskd writes a new run to active-runs.json: made certain here by a
    # folder in the place of the file's temporary, so it is never written. The keeper kept the run's
    # state from its spawn, and the next taskd takes the run over from that: one start, every line,
    # its real status.
    gate = tmp_path / "gate"
    d = daemon_factory({"fresh.task": task(GATED.format(n=5, status=3, gate=gate), kind="processing")},
                       daemon_conf="[Daemon]\nRunKeeper=yes\n")
    (d.state / "active-runs.json.tmp").mkdir(parents=True)
    d.start()
    run = json.loads(d.taskctl("wake", "fresh", "--json").stdout)[0]["runId"]
    wait_for(lambda: lines_of("fresh", run), what="the run's first line")
    crash(d)
    d.start()
    gate.touch()
    wait_for(lambda: ended(d, "fresh"), timeout=30, what="the run's end to be recorded")
    end_entry(run)
    recorded = history(d, "fresh")
    assert [r["runId"] for r in recorded] == [run], "taken over, not started again"
    assert recorded[0]["state"] == "failed" and recorded[0]["exitStatus"] == 3, recorded[0]
    seen = [int(line.split()[1]) for line in lines_of("fresh", run)]
    assert seen == list(range(1, len(seen) + 1)) and len(seen) >= 5, seen
    assert [e["TASK_RUN_ID"] for e in journal(MESSAGE_ID=ADOPTED, _PID=str(d.proc.pid))] == [run]
    assert len(journal(MESSAGE_ID=STARTED, TASK="fresh")) == 1, "started once"
    assert not journal(MESSAGE_ID=LOST)
    d.stop()


@pytest.mark.parametrize("how", ["default", "no-binary"])
def test_without_a_keeper_runs_end_with_taskd_and_are_recorded_lost(daemon_factory, how):
    # RunKeeper= unset (no); or RunKeeper=yes with TASKD_KEEPER= (empty), as for an app daemon
    # built without taskd-keeper beside it.
    d = daemon_factory({"long.task": task("/bin/sleep 27.4321", kind="processing")},
                       daemon_conf="[Daemon]\nRunKeeper=yes\n" if how == "no-binary" else None,
                       env={"TASKD_KEEPER": ""} if how == "no-binary" else None).start()
    try:
        run = json.loads(d.taskctl("wake", "long", "--json").stdout)[0]["runId"]
        wait_for(lambda: on_disk(d, run), what="the run on disk")
        assert not (d.state / "keeper.sock").exists()
        crash(d)
        d.start()
        recorded = wait_for(lambda: [r for r in history(d, "long") if r["runId"] == run], what="the lost run")[0]
        assert recorded["state"] == "failed" and recorded["failureReason"] == "lost", recorded
    finally:
        subprocess.run(["pkill", "-f", "sleep 27.4321"])
        d.stop()


def test_an_upgrade_in_place_hands_the_keeper_over_with_its_runs(daemon_factory, tmp_path):
    # The new image inherits the connection to the keeper, and the runs' exits come over it.
    binary = install_copy(tmp_path)
    shutil.copy(TASKD.parent / "taskd-keeper", binary.parent / "taskd-keeper")
    gate = tmp_path / "gate"
    d = daemon_factory({f"u{i}.task": task(GATED.format(n=5, status=i, gate=gate), kind="processing")
                        for i in range(3)}, binary=binary, daemon_conf="[Daemon]\nRunKeeper=yes\nMaxConcurrentRuns=8\n").start()
    started = {f"u{i}": json.loads(d.taskctl("wake", f"u{i}", "--json").stdout)[0]["runId"] for i in range(3)}
    wait_for(lambda: all(lines_of(name, run) for name, run in started.items()), what="every run's first line")
    replace_with_version(binary, "0.1.9")
    up = d.taskctl("--json", "upgrade")
    assert up.returncode == 0 and json.loads(up.stdout)["runs"] == 3, up
    # A run ends while the new image runs: its exit comes over the connection the old image handed over.
    gate.touch()
    for name in started:
        wait_for(lambda: ended(d, name), timeout=30, what=f"{name}'s run to end")
        end_entry(started[name])
    for i, (name, run) in enumerate(started.items()):
        recorded = history(d, name)
        assert [r["runId"] for r in recorded] == [run] and recorded[0]["exitStatus"] == i, recorded
        seen = [int(line.split()[1]) for line in lines_of(name, run)]
        assert seen == list(range(1, len(seen) + 1)), f"{name}: every line once, in order"
    # The same keeper serves the new image: a new run goes through it, and a clean stop ends it.
    again = d.taskctl("wake", "u0", "--wait")
    assert again.returncode == 0, again
    assert keeper_listens(d)
    d.stop()
    wait_for(lambda: not keeper_listens(d), what="the keeper to exit at a clean stop")
