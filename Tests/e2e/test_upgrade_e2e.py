"""An upgrade in place under a real systemd (nspawn): taskd.service runs 52 command runs (each
printing until a gate the test opens after the upgrade, then 1-10 s more) whose output lines carry
sequence numbers, 5 `wake --wait` watchers follow some, and
`taskctl upgrade` re-executes a different build (another version string) installed over
/usr/local/bin/taskd. Every run reaches its real exit status, no output line is lost or repeated,
no run starts twice, the budgets end at their original deadlines (within 50 ms), the watchers end
with the true outcomes, the main PID stays, and the socket answers within 100 ms at p99 meanwhile."""
import io
import json
import socket
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from systemd_container import (  # noqa: E402,F401
    BUILD, HARNESS, SKIP, TASKCTL, container, histories, inside, install, main_pid, seq_lines, unit_journal,
    wait_runs_ended)

pytestmark = [pytest.mark.nspawn, pytest.mark.slow, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

RUNS = 50
STARTED = "8605484d98ae4477a29493037f9e10ec"
ADOPTED = "00e794f7c5364f18819656b7a9833d85"
GATE = "/run/taskd-e2e-gate"


def seq_task(i):
    """A run that prints a numbered line every 0.1 s until the gate opens, then 1-10 s more."""
    lines, status = 10 * (1 + i % 10), i % 5
    return lines, status, ("[Task]\nKind=processing\n[Exec]\nExecStart=/bin/sh -c 'i=0; j=0; while [ $j -lt "
                           f"{lines} ]; do i=$((i+1)); echo \"seq $i\"; [ -e {GATE} ] && j=$((j+1)); sleep 0.1; "
                           f"done; exit {status}'\n")


def put_files(container, folder, files):
    """Writes `files` (name → text) into `folder` inside the container, as one tar stream."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    subprocess.run([str(HARNESS), "exec", container, "tar", "-x", "-f", "-", "-C", folder], input=buffer.getvalue(),
                   check=True)


def probe(path, stop, latencies):
    """GetInfo on taskd's socket (from the host, through the container's root) every 2 ms until
    `stop`: the time each call waited for its answer."""
    call = json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0"
    while not stop.is_set():
        began = time.monotonic()
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(10)
                s.connect(path)
                s.sendall(call)
                reply = b""
                while not reply.endswith(b"\0"):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
            if reply.endswith(b"\0"):
                latencies.append(time.monotonic() - began)
        except OSError:
            latencies.append(float("inf"))
        time.sleep(0.002)


def test_an_upgrade_in_place_keeps_every_run_its_output_its_budget_and_its_watchers(container):
    install(container)
    expected, files = {}, {}
    for i in range(RUNS):
        lines, status, text = seq_task(i)
        expected[f"seq{i}"] = (lines, status)
        files[f"seq{i}.task"] = text
    budget = "[Task]\nKind=processing\nRuntimeBudgetSec=8s\nCancelGraceSec=3s\n[Exec]\n"
    files["expires.task"] = budget + "ExecStart=/bin/sleep 100\n"
    files["killed.task"] = budget + "ExecStart=/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.05; done'\n"
    put_files(container, "/etc/taskd/tasks.d", files)
    put_files(container, "/etc/taskd", {"taskd.conf": "[Daemon]\nMaxConcurrentRuns=64\n"})
    names = list(expected) + ["expires", "killed"]
    try:
        inside(container, "rm", "-f", GATE)
        inside(container, "systemctl", "restart", "taskd.service")
        pid = main_pid(container)
        woken = inside(container, "sh", "-c", "; ".join(f"{TASKCTL} wake {n} --json" for n in names)).stdout
        started = {run["task"]: run["runId"] for line in woken.splitlines() for run in json.loads(line)}
        assert sorted(started) == sorted(names)
        watched = ["seq0", "seq1", "seq7", "seq11", "seq23"]
        watchers = {n: subprocess.Popen([str(HARNESS), "exec", container, TASKCTL, "--json", "wake", n, "--wait"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in watched}
        leader = subprocess.run([str(HARNESS), "leader", container], capture_output=True, text=True).stdout.strip()
        stop, latencies = threading.Event(), []
        prober = threading.Thread(target=probe, args=(f"/proc/{leader}/root/run/taskd/taskd.sock", stop, latencies))
        prober.start()
        time.sleep(0.5)
        # A build of another version, installed over the binary as a package would (write, rename).
        data = (BUILD / "taskd").read_bytes()
        assert data.count(b"taskd-version:0.1.0") == 1
        new = data.replace(b"taskd-version:0.1.0", b"taskd-version:0.1.9")
        subprocess.run([str(HARNESS), "exec", container, "sh", "-c",
                        "cat > /usr/local/bin/taskd.new && chmod 755 /usr/local/bin/taskd.new && "
                        "mv /usr/local/bin/taskd.new /usr/local/bin/taskd"], input=new, check=True)
        before = len(latencies)
        up = inside(container, TASKCTL, "--json", "upgrade")
        answer = json.loads(up.stdout)
        time.sleep(0.5)
        stop.set()
        prober.join()
        inside(container, "touch", GATE)
        assert answer["version"] == "taskd 0.1.9" and answer["runs"] == len(names) and answer["answered"], answer
        assert main_pid(container) == pid, "the main PID stays"
        props = inside(container, "systemctl", "show", "taskd.service", "-p", "NRestarts,ActiveState,SubState").stdout
        assert "NRestarts=0" in props and "ActiveState=active" in props, props
        around = sorted(latencies[max(0, before - 50):])
        p99 = around[int(len(around) * 0.99) - 1]
        print(f"socket during the upgrade: {len(around)} calls, p99 {p99 * 1000:.1f} ms, max {around[-1] * 1000:.1f} ms")
        assert p99 < 0.1, f"p99 {p99 * 1000:.1f} ms"

        wait_runs_ended(container, started)
        last = histories(container, names)
        log = unit_journal(container)
        lines = seq_lines(log, set(started.values()))
        for name, (n, status) in expected.items():
            runs = last[name]
            assert [r["runId"] for r in runs] == [started[name]], f"{name}: one run, never started twice"
            assert runs[0]["exitStatus"] == status and runs[0]["state"] == ("completed" if status == 0 else "failed")
            told = lines.get(started[name], [])
            assert len(told) >= n and told == list(range(1, len(told) + 1)), f"{name}: every line once"
        ids = set(started.values())
        assert sorted(e["TASK_RUN_ID"] for e in log if e.get("MESSAGE_ID") == STARTED and e["TASK_RUN_ID"] in ids) \
            == sorted(ids), "each run started once"
        assert sorted(e["TASK_RUN_ID"] for e in log if e.get("MESSAGE_ID") == ADOPTED) == sorted(ids)
        expired, killed = last["expires"][0], last["killed"][0]
        assert expired["state"] == "expired" and 5_000_000 <= expired["durationUSec"] < 5_050_000, expired
        assert killed["state"] == "killed" and 8_000_000 <= killed["durationUSec"] < 8_050_000, killed
        for name, w in watchers.items():
            out, err = w.communicate(timeout=60)
            final = json.loads(out)[0]
            truth = last[name][0]
            assert (final["runId"], final["state"], final["exitStatus"]) == \
                (truth["runId"], truth["state"], truth["exitStatus"]), (name, err)
    finally:
        inside(container, "sh", "-c", f"rm -f {GATE} /etc/taskd/tasks.d/seq*.task /etc/taskd/tasks.d/expires.task "
                                      "/etc/taskd/tasks.d/killed.task /etc/taskd/taskd.conf")
        inside(container, "/opt/taskd/src/scripts/install", "--bin-dir", "/opt/taskd/bin")
        inside(container, "systemctl", "restart", "taskd.service")


@pytest.fixture
def long_task(container):
    """taskd (just restarted) with `long`, a command of 5 minutes; removed afterwards."""
    install(container)
    put_files(container, "/etc/taskd/tasks.d", {"long.task": "[Task]\nKind=processing\n[Exec]\nExecStart=/bin/sleep 300\n"})
    inside(container, "systemctl", "restart", "taskd.service")
    yield container
    inside(container, "rm", "-f", "/etc/taskd/tasks.d/long.task")
    inside(container, "systemctl", "restart", "taskd.service")


def test_systemctl_restart_is_told_from_a_stop_and_what_it_cuts_short_runs_again(long_task):
    # The unit's queued job tells taskd a restart from a stop: a restart cancels with reason
    # restart (a stop: shutdown, as test_systemd_e2e checks), and the acknowledged wake runs again.
    container = long_task
    first = json.loads(inside(container, TASKCTL, "wake", "long", "--id", "nightly", "--json").stdout)[0]
    assert first["state"] == "running"
    before = main_pid(container)
    inside(container, "systemctl", "restart", "taskd.service")
    assert main_pid(container) != before
    for _ in range(100):
        current = json.loads(inside(container, TASKCTL, "status", "long", "--json").stdout).get("current")
        if current and current["runId"] != first["runId"]:
            break
        time.sleep(0.1)
    assert current["wakeId"] == "nightly" and current["state"] == "running", current
    inside(container, "journalctl", "--sync")
    log = [json.loads(line) for line in inside(container, "journalctl", "-u", "taskd", "-o", "json",
                                               f"TASK_RUN_ID={first['runId']}").stdout.splitlines()]
    ended = [e for e in log if "TASK_OUTCOME" in e]
    assert ended and ended[-1]["TASK_OUTCOME"] == "cancelled" and ended[-1]["TASK_CANCEL_REASON"] == "restart"
    said = inside(container, "journalctl", "-u", "taskd", "--no-pager", "-g", "systemd restarts it").stdout
    assert "received SIGTERM; systemd restarts it" in said


def test_installing_over_a_running_taskd_upgrades_it_in_place(long_task):
    container = long_task
    run = json.loads(inside(container, TASKCTL, "wake", "long", "--json").stdout)[0]
    pid = main_pid(container)
    again = inside(container, "/opt/taskd/src/scripts/install", "--bin-dir", "/opt/taskd/bin")
    assert "the running taskd now runs the new binary" in again.stdout, again
    assert main_pid(container) == pid
    current = json.loads(inside(container, TASKCTL, "status", "long", "--json").stdout)["current"]
    assert current["runId"] == run["runId"] and current["state"] == "running"
