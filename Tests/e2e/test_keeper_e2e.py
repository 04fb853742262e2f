"""Command runs outlive taskd's unit under a real systemd (nspawn), with `RunKeeper=yes`:
taskd-keeper and the run cgroups live in `taskd-runs.scope`, outside `taskd.service`. In two
variants, `systemctl restart taskd` and `kill -9` of the main process followed by systemd's
`Restart=on-failure`: 50 command runs whose output lines carry sequence numbers (each printing
until a gate the test opens after the new taskd is up, then 1-10 s more), two budget runs and 5
`wake --wait` watchers. Every run reaches its real exit status, no run starts twice, no output line
is lost or repeated (the keeper journals the lines, from entries taskd makes, and only then takes
them out of the pipes), the budgets end at their original deadlines within 50 ms, the watchers end with the true
outcomes."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from systemd_container import (  # noqa: E402,F401
    HARNESS, SKIP, TASKCTL, container, histories, inside, install, main_pid, seq_lines, unit_journal, wait_runs_ended)
from test_upgrade_e2e import GATE, RUNS, STARTED, ADOPTED, put_files, seq_task  # noqa: E402

pytestmark = [pytest.mark.nspawn, pytest.mark.slow, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

KEPT = "714d103c1a824a0680a48a51e9558755"


@pytest.mark.parametrize("how", ["restart", "kill-9"])
def test_command_runs_outlive_a_restart_and_a_kill_of_taskd(container, how):
    install(container)
    # Task names of the variant's own: histories stay in the state folder from one to the next.
    tag = how.split("-")[0]
    expected, files = {}, {}
    for i in range(RUNS):
        lines, status, text = seq_task(i)
        expected[f"{tag}seq{i}"] = (lines, status)
        files[f"{tag}seq{i}.task"] = text
    budget = "[Task]\nKind=processing\nRuntimeBudgetSec=8s\nCancelGraceSec=3s\n[Exec]\n"
    files[f"{tag}expires.task"] = budget + "ExecStart=/bin/sleep 100\n"
    files[f"{tag}killed.task"] = budget + "ExecStart=/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.05; done'\n"
    put_files(container, "/etc/taskd/tasks.d", files)
    put_files(container, "/etc/taskd", {"taskd.conf": "[Daemon]\nMaxConcurrentRuns=64\nRunKeeper=yes\n"})
    names = list(expected) + [f"{tag}expires", f"{tag}killed"]
    try:
        inside(container, "rm", "-f", GATE)
        inside(container, "systemctl", "restart", "taskd.service")
        pid = main_pid(container)
        restarts = inside(container, "systemctl", "show", "taskd.service", "-p", "NRestarts", "--value").stdout.strip()
        woken = inside(container, "sh", "-c", "; ".join(f"{TASKCTL} wake {n} --json" for n in names)).stdout
        started = {run["task"]: run["runId"] for line in woken.splitlines() for run in json.loads(line)}
        assert sorted(started) == sorted(names)
        scope = inside(container, "systemctl", "show", "taskd-runs.scope", "-p", "ControlGroup", "--value").stdout.strip()
        assert scope.endswith("/taskd-runs.scope"), scope
        assert inside(container, "cat", f"/sys/fs/cgroup{scope}/keeper/cgroup.procs").stdout.strip(), "the keeper"
        watched = [f"{tag}seq{i}" for i in (0, 1, 7, 11, 23)]
        watchers = {n: subprocess.Popen([str(HARNESS), "exec", container, TASKCTL, "--json", "wake", n, "--wait"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in watched}
        time.sleep(0.5)
        if how == "restart":
            inside(container, "systemctl", "restart", "taskd.service")
        else:
            inside(container, "systemctl", "kill", "--kill-whom=main", "--signal=KILL", "taskd.service")
            for _ in range(100):
                state = inside(container, "systemctl", "show", "taskd.service", "-p", "ActiveState,NRestarts").stdout
                if "ActiveState=active" in state and f"NRestarts={int(restarts) + 1}" in state:
                    break
                time.sleep(0.1)
            assert f"NRestarts={int(restarts) + 1}" in state, state
        new = main_pid(container)
        assert new != pid
        inside(container, TASKCTL, "list")  # the new taskd answers
        inside(container, "touch", GATE)

        wait_runs_ended(container, started)
        last = histories(container, names)
        log = unit_journal(container)
        lines = seq_lines(log, set(started.values()))
        for name, (n, status) in expected.items():
            runs = last[name]
            assert [r["runId"] for r in runs] == [started[name]], f"{name}: one run, never started twice"
            assert runs[0]["exitStatus"] == status and runs[0]["state"] == ("completed" if status == 0 else "failed")
            seen = lines.get(started[name], [])
            assert seen == sorted(set(seen)) and seen[0] == 1 and len(seen) >= n, f"{name}: no line twice, in order"
            missing = sorted(set(range(1, seen[-1] + 1)) - set(seen))
            assert not missing, f"{name}: lines missing {missing}"
        ids = set(started.values())
        assert sorted(e["TASK_RUN_ID"] for e in log if e.get("MESSAGE_ID") == STARTED and e["TASK_RUN_ID"] in ids) \
            == sorted(ids), "each run started once"
        adopted = [e for e in log if e.get("MESSAGE_ID") == ADOPTED and e.get("_PID") == str(new)]
        assert sorted(e["TASK_RUN_ID"] for e in adopted) == sorted(ids)
        assert [e["TASKD_KEPT_RUNS"] for e in log if e.get("MESSAGE_ID") == KEPT and e.get("_PID") == str(new)] \
            == [str(len(ids))]
        expired, killed = last[f"{tag}expires"][0], last[f"{tag}killed"][0]
        assert expired["state"] == "expired" and 5_000_000 <= expired["durationUSec"] < 5_050_000, expired
        assert killed["state"] == "killed" and 8_000_000 <= killed["durationUSec"] < 8_050_000, killed
        for name, w in watchers.items():
            out, err = w.communicate(timeout=60)
            final = json.loads(out)[0]
            truth = last[name][0]
            assert (final["runId"], final["state"], final["exitStatus"]) == \
                (truth["runId"], truth["state"], truth["exitStatus"]), (name, err)
        # A stop still means stop: the keeper and its scope go with the runs.
        inside(container, "systemctl", "stop", "taskd.service")
        def scope_state():
            return inside(container, "systemctl", "show", "taskd-runs.scope", "-p", "ActiveState", "--value").stdout
        for _ in range(50):
            if scope_state().strip() != "active":
                break
            time.sleep(0.1)
        assert scope_state().strip() != "active", "the keeper exits at a stop, and its scope goes"
    finally:
        inside(container, "sh", "-c", f"rm -f {GATE} /etc/taskd/tasks.d/{tag}*.task /etc/taskd/taskd.conf")
        inside(container, "systemctl", "restart", "taskd.service")
