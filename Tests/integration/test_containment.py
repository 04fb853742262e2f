"""Containment and accounting (issue 36) against the real daemon on this host. Each run's use (CPU,
IO) is in its end entry, its history and `taskctl status`. With run cgroups (RunCgroups=yes, taskd
started in a cgroup v2 folder of the test's own: needs root), a command that leaves its process
group with setsid() and ignores SIGTERM is killed with its run; without them taskd says once why
runs are contained by process group only. The same under a real systemd with Delegate=yes, and
MemoryMax=, is in Tests/e2e."""
import json
import os
from pathlib import Path

import pytest
from conftest import journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]

ESCAPE = """#!/bin/sh
# Leaves its process group and ignores SIGTERM: only a cgroup holds it.
setsid sh -c 'trap "" TERM; echo $$ > "$0"; exec sleep 300' "$1" &
trap '' TERM
sleep 300
"""


def scratch_cgroup():
    """A cgroup v2 folder below this process's own, or None (not root, no writable hierarchy)."""
    if os.geteuid() != 0:
        return None
    try:
        own = next(l[3:] for l in Path("/proc/self/cgroup").read_text().splitlines() if l.startswith("0::"))
        mount = next(l.split()[4] for l in Path("/proc/self/mountinfo").read_text().splitlines() if " - cgroup2 " in l)
        path = Path(mount + own.rstrip("/")) / f"taskd-it-{os.getpid()}-{os.urandom(4).hex()}"
        path.mkdir()
        return path
    except (StopIteration, OSError):
        return None


def ended(run_id):
    return wait_for(lambda: [e for e in journal(TASK_RUN_ID=run_id) if "TASK_OUTCOME" in e], what="the run's end")[0]


def test_a_runs_cpu_and_io_are_accounted_in_its_end_entry_history_and_status(daemon_factory, tmp_path):
    target = tmp_path / "written"
    d = daemon_factory({"work.task": task(
        f"/bin/sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; "
        f"dd if=/dev/zero of={target} bs=64k count=64 oflag=direct status=none'")}).start()
    # Said at start, from taskd's journal queue: the socket may accept before journald has it.
    said = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if "contained by process group" in e.get("MESSAGE", "")],
                    what="why there are no run cgroups")
    assert said and "setsid() escapes" in said[0]["MESSAGE"], "said once at start why there are no run cgroups"
    run = json.loads(d.taskctl("wake", "work", "--wait", "--json").stdout)[0]
    assert run["state"] == "completed", run
    assert 10_000 < run["cpuUSec"] < 60_000_000, run
    assert run["ioWriteBytes"] >= 4 * 1024 * 1024, "dd wrote 4 MiB past the page cache"
    entry = ended(run["runId"])
    assert entry["TASK_USAGE_SOURCE"] == "rusage" and int(entry["TASK_CPU_USEC"]) == run["cpuUSec"]
    assert "Used: CPU " in d.taskctl("status", "work").stdout
    history = json.loads(d.taskctl("history", "work", "--json").stdout)
    assert history[0]["ioWriteBytes"] == run["ioWriteBytes"]


def test_in_run_cgroups_a_setsid_escapee_dies_at_the_budget_and_nothing_is_left(daemon_factory, tmp_path):
    cgroup = scratch_cgroup()
    if cgroup is None:
        pytest.skip("needs root and a writable cgroup v2 hierarchy")
    script = tmp_path / "escape.sh"
    script.write_text(ESCAPE)
    script.chmod(0o755)
    pid_file = tmp_path / "escapee.pid"
    d = daemon_factory(
        {"escape.task": task(f"{script} {pid_file}", kind="processing", budget="2s", grace="1s",
                             extra="[Exec]\nMemoryMax=64M")},
        daemon_conf="[Daemon]\nRunCgroups=yes\n",
        wrapper=["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cgroup)])
    try:
        d.start()
        said = wait_for(lambda: [e for e in journal(_PID=str(d.proc.pid)) if e.get("TASKD_CGROUP")],
                        what="the run cgroups said")
        assert said[0]["TASKD_CGROUP"] == str(cgroup)
        assert (cgroup / "taskd" / "cgroup.procs").read_text().split() == [str(d.proc.pid)]
        r = d.taskctl("wake", "escape", "--wait", "--json")
        run = json.loads(r.stdout)[0]
        escapee = int(pid_file.read_text())
        assert run["state"] == "killed" and run["signal"] == "SIGKILL", run
        assert not Path(f"/proc/{escapee}").exists() or "Z" in Path(f"/proc/{escapee}/stat").read_text().split()[2]
        assert not list(cgroup.glob("run-*")), "the run's cgroup is removed once empty"
        entry = ended(run["runId"])
        assert entry["TASK_USAGE_SOURCE"] == "cgroup" and int(entry["TASK_CPU_USEC"]) > 0, entry
        # No memory controller was given to this cgroup: the limit is said not to apply, once.
        warned = [e["MESSAGE"] for e in journal(_PID=str(d.proc.pid)) if "resource limits not applied" in e.get("MESSAGE", "")]
        if "memory" not in (cgroup / "cgroup.controllers").read_text():
            assert len(warned) == 1 and "memory.max=67108864" in warned[0], warned
    finally:
        d.stop()
        for leftover in sorted(cgroup.glob("**/"), key=lambda p: -len(p.parts)):
            leftover.rmdir()
