"""End to end in a QEMU virtual machine booted with its own kernel and systemd: a container shares its
host's cgroup controllers, and a host that keeps memory, cpu, io and pids on cgroup v1 (the CI VMs do)
leaves none to delegate. In the VM they are all on cgroup v2, so systemd delegates them to taskd (in
`taskd-runs.scope`, as the installed `RunKeeper=yes` has it), and `MemoryMax=` and the other
resource keys act for real. One boot serves the module:
the guest script below does everything, then prints its findings to a second serial port."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import BUILD, ROOT, e2e_skip_reason  # noqa: E402

HARNESS = ROOT / "Tests" / "e2e" / "vm"
CACHE = os.environ.get("TASKD_E2E_CACHE", "/var/cache/taskd-e2e")


SKIP = e2e_skip_reason("building the VM's disk and booting it",
                       ["qemu-system-x86_64", "debootstrap", "mke2fs", "cpio", "busybox", "apt-get"])
pytestmark = [pytest.mark.vm, pytest.mark.slow,
              pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

# Each finding is a section: a line "@@ NAME", then what the command printed.
GUEST = r"""#!/bin/sh
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
section() { echo "@@ $1"; }
section install
/opt/taskd/src/scripts/install --bin-dir /opt/taskd/bin 2>&1 | tail -3

cat > /usr/local/bin/show-limits.sh <<'EOF'
#!/bin/sh
cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)
for f in memory.max memory.high cpu.max cpu.weight io.weight pids.max; do echo "limit $f=$(cat $cg/$f)"; done
i=0; while [ $i -lt 8 ]; do sleep 2 & i=$((i+1)); done; wait
EOF
printf '#!/bin/sh\ntimeout 2 sh -c "while :; do :; done"\nexit 0\n' > /usr/local/bin/burn.sh
chmod +x /usr/local/bin/show-limits.sh /usr/local/bin/burn.sh
cd /etc/taskd/tasks.d
printf '[Task]\nKind=processing\n[Exec]\nExecStart=/bin/dd if=/dev/zero of=/dev/null bs=256M count=1\nMemoryMax=32M\n' > oom.task
printf '[Task]\nKind=processing\n[Exec]\nExecStart=/bin/dd if=/dev/zero of=/dev/null bs=64M count=1\n' > peak.task
printf '[Task]\nKind=processing\n[Exec]\nExecStart=/usr/local/bin/show-limits.sh\nMemoryMax=200M\nMemoryHigh=100M\nCPUQuota=50%%\nCPUWeight=50\nIOWeight=20\nTasksMax=4\n' > limits.task
printf '[Task]\nKind=processing\n[Exec]\nExecStart=/usr/local/bin/burn.sh\nCPUQuota=20%%\n' > quota.task
systemctl restart taskd.service

section controllers; cat /sys/fs/cgroup/system.slice/taskd-runs.scope/cgroup.controllers
section subtree; cat /sys/fs/cgroup/system.slice/taskd-runs.scope/cgroup.subtree_control
section oom; timeout 120 taskctl wake oom --wait --json
section oom-status; taskctl status oom
section peak; timeout 120 taskctl wake peak --wait --json
section limits; timeout 120 taskctl wake limits --wait --json
section quota; timeout 120 taskctl wake quota --wait --json
# The example's appRefresh runs 10 s after the start, maybe now: the cgroups are listed once no run is active.
timeout 120 taskctl drain --timeout 100s >/dev/null
section leftovers; ls /sys/fs/cgroup/system.slice/taskd-runs.scope /sys/fs/cgroup/system.slice/taskd.service
journalctl --sync
section journal; journalctl -u taskd -o json --no-pager
section kernel; journalctl -k --no-pager -g 'oom|Memory cgroup' | tail -5
"""


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vm")
    script, out = folder / "guest.sh", folder / "out.txt"
    script.write_text(GUEST)
    name = f"taskd-vm-{os.getpid()}"
    env = dict(os.environ, BUILD=str(BUILD.resolve()), VM_TIMEOUT="480")
    boot = subprocess.run([str(HARNESS), "run", CACHE, name, str(script), str(out)],
                          capture_output=True, text=True, timeout=600, env=env)
    console = Path(f"/run/taskd-e2e/{name}.console")
    tail = console.read_text(errors="replace")[-3000:] if console.exists() else "(no console log)"
    assert boot.returncode == 0, f"the VM did not run: {boot.stderr[-2000:]}\n{tail}"
    sections, current = {}, None
    for line in out.read_text(errors="replace").replace("\r", "").splitlines():
        if line.startswith("@@ "):
            current = line[3:]
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    assert "journal" in sections, f"the guest script did not finish: {sections}\n{tail}"
    console.unlink(missing_ok=True)
    return {k: "\n".join(v) for k, v in sections.items()}


def run_of(guest, section):
    return json.loads(guest[section])[0]


def journal(guest):
    return [json.loads(line) for line in guest["journal"].splitlines() if line.startswith("{")]


def test_the_vms_cgroup_v2_has_every_controller_and_systemd_delegates_them_to_taskd(guest):
    # The installed configuration has RunKeeper=yes: the runs live in taskd-runs.scope, which
    # taskd asked systemd for, delegated, outside taskd.service.
    for controller in ["memory", "cpu", "io", "pids"]:
        assert controller in guest["controllers"].split(), guest["controllers"]
        # taskd enabled them for its runs, below the cgroup systemd delegated.
        assert controller in guest["subtree"].split(), guest["subtree"]
    # Nothing was said not to apply: every limit had its controller.
    assert not [e for e in journal(guest) if "resource limits not applied" in e.get("MESSAGE", "")]


def test_memory_max_kills_an_allocating_command_and_the_run_fails_with_reason_oom(guest):
    run = run_of(guest, "oom")
    assert run["state"] == "failed" and run.get("failureReason") == "oom", run
    end = [e for e in journal(guest) if e.get("TASK_RUN_ID") == run["runId"] and "TASK_OUTCOME" in e][-1]
    assert end["TASK_OUTCOME"] == "failed" and end["TASK_FAILURE_REASON"] == "oom", end
    assert "killed at MemoryMax= (out of memory)" in guest["oom-status"], guest["oom-status"]
    # The kernel's own word for it: the OOM killer acted inside the run's memory cgroup, on dd.
    assert f"oom_memcg=/system.slice/taskd-runs.scope/run-{run['runId']}," in guest["kernel"], guest["kernel"]
    assert "Memory cgroup out of memory: Killed process" in guest["kernel"] and "(dd)" in guest["kernel"]
    # The run's peak is its limit's neighbourhood, not dd's 256 MiB buffer.
    assert run["memoryPeakBytes"] <= 33 * 1024 * 1024, run


def test_peak_memory_and_cpu_time_of_a_run_come_from_its_cgroup(guest):
    run = run_of(guest, "peak")
    assert run["state"] == "completed", run
    # dd's 64 MiB buffer, filled from /dev/zero, all of it touched.
    assert 64 * 1024 * 1024 <= run["memoryPeakBytes"] < 512 * 1024 * 1024, run
    assert run["cpuUSec"] > 0, run
    end = [e for e in journal(guest) if e.get("TASK_RUN_ID") == run["runId"] and "TASK_OUTCOME" in e][-1]
    assert end["TASK_USAGE_SOURCE"] == "cgroup" and int(end["TASK_MEMORY_PEAK_BYTES"]) == run["memoryPeakBytes"], end


def test_each_resource_key_is_written_to_the_runs_cgroup_and_tasks_max_stops_a_fork(guest):
    run = run_of(guest, "limits")
    lines = [e for e in journal(guest) if e.get("TASK_RUN_ID") == run["runId"] and "TASK_STREAM" in e]
    said = {}
    for e in lines:
        if e["MESSAGE"].startswith("limit "):
            key, value = e["MESSAGE"][6:].split("=", 1)
            said[key] = value
    assert said == {"memory.max": str(200 << 20), "memory.high": str(100 << 20), "cpu.max": "50000 100000",
                    "cpu.weight": "50", "io.weight": "default 20", "pids.max": "4"}, (said, lines)
    # The fifth process of the run could not be forked: the shell said so on its standard error.
    assert any(e["TASK_STREAM"] == "stderr" and "fork" in e["MESSAGE"].lower() for e in lines), lines
    # Every run's cgroup is gone once it ended.
    assert "run-" not in guest["leftovers"], guest["leftovers"]


def test_cpu_quota_holds_a_busy_loop_to_its_share(guest):
    run = run_of(guest, "quota")
    assert run["state"] == "completed", run
    # Two seconds of a busy loop at CPUQuota=20%: about 0.4 s of CPU, where it would have had up to
    # the whole two. Load on the host only lowers the share, so the bound holds under load too.
    assert 0 < run["cpuUSec"] < 0.3 * run["durationUSec"], run
