"""Conditions (issue 35): a run waits for AC power, starts the moment it comes, gives up after
MaxDeferSec=, and is cancelled when the power goes (ConditionLost=cancel). The power supplies are a
sysfs-shaped folder (TASKD_POWER_SUPPLY_DIR) the test writes, watched by inotify as sysfs is by the
kernel's device events: what is simulated is the kernel's side, not taskd's."""
import json
import subprocess

import pytest
from conftest import BUILD, journal, needs_journal, task, wait_for

pytestmark = [pytest.mark.integration, needs_journal]


def supplies(tmp_path, online):
    folder = tmp_path / "power_supply"
    (folder / "AC").mkdir(parents=True, exist_ok=True)
    (folder / "BAT0").mkdir(exist_ok=True)
    (folder / "AC" / "type").write_text("Mains\n")
    (folder / "AC" / "online").write_text(f"{online}\n")
    (folder / "BAT0" / "type").write_text("Battery\n")
    (folder / "BAT0" / "capacity").write_text("80\n")
    (folder / "BAT0" / "status").write_text("Discharging\n" if not online else "Charging\n")
    return folder


def plug(folder, online):
    (folder / "AC" / "online").write_text(f"{online}\n")


def current(d, name):
    return json.loads(d.taskctl("status", name, "--json").stdout).get("current")


def test_a_run_waits_for_ac_power_and_starts_when_it_comes(daemon_factory, tmp_path):
    folder = supplies(tmp_path, online=0)
    d = daemon_factory({"backup.task": task("/bin/true", extra="RequireACPower=yes")},
                       env={"TASKD_POWER_SUPPLY_DIR": str(folder)}).start()
    r = d.taskctl("wake", "backup")
    assert r.returncode == 0 and "waiting: on AC power" in r.stdout, r.stdout
    run = current(d, "backup")
    assert run["state"] == "queued" and run["waitingFor"] == "on AC power", run
    assert "waiting: on AC power" in d.taskctl("status", "backup").stdout
    assert "waiting" in d.taskctl("list").stdout
    plug(folder, 1)
    ended = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if "TASK_OUTCOME" in e], what="the run")
    assert ended[0]["TASK_OUTCOME"] == "completed" and int(ended[0]["TASK_WAITED_USEC"]) > 0
    assert journal(TASKD_CONDITIONS="ac-power"), "the change is journaled"


def test_max_defer_gives_up_and_condition_lost_cancels(daemon_factory, tmp_path):
    folder = supplies(tmp_path, online=0)
    d = daemon_factory({
        "patient.task": task("/bin/true", extra="RequireACPower=yes\nMaxDeferSec=1s"),
        "long.task": task("/bin/sleep 30", budget="60s", grace="2s", extra="RequireACPower=yes"),
        "stays.task": task("/bin/sleep 1", extra="RequireACPower=yes\nConditionLost=continue"),
    }, env={"TASKD_POWER_SUPPLY_DIR": str(folder)}).start()
    gave_up = json.loads(d.taskctl("wake", "patient", "--wait", "--json").stdout)[0]
    assert gave_up["state"] == "cancelled" and gave_up["cancelReason"] == "condition-timeout", gave_up
    plug(folder, 1)
    wait_for(lambda: journal(TASKD_CONDITIONS="ac-power"), what="AC power seen")
    assert d.taskctl("wake", "long").returncode == 0 and d.taskctl("wake", "stays").returncode == 0
    wait_for(lambda: (current(d, "long") or {}).get("state") == "running", what="long to run")
    wait_for(lambda: (current(d, "stays") or {}).get("state") == "running", what="stays to run")
    plug(folder, 0)
    lost = wait_for(lambda: [e for e in journal(TASK="long") if "TASK_OUTCOME" in e], what="long's end")[0]
    assert lost["TASK_OUTCOME"] == "cancelled" and lost["TASK_CANCEL_REASON"] == "condition-lost", lost
    assert lost["TASK_CONDITIONS_LOST"] == "ac-power", "the entry names the condition lost"
    stays = wait_for(lambda: [e for e in journal(TASK="stays") if "TASK_OUTCOME" in e], what="stays' end")[0]
    assert stays["TASK_OUTCOME"] == "completed", stays


def test_a_command_is_told_when_its_trigger_was_due(daemon_factory):
    d = daemon_factory({"when.task": task("/bin/sh -c 'echo scheduled=$TASKD_SCHEDULED_USEC'")}).start()
    run = json.loads(d.taskctl("wake", "when", "--wait", "--json").stdout)[0]
    assert run["queuedUSec"] - 1_000_000 < run["scheduledUSec"] <= run["queuedUSec"], run
    said = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if e.get("TASK_STREAM") == "stdout"],
                    what="the command's line")[0]
    assert said["MESSAGE"] == f"scheduled={run['scheduledUSec']}", said


# --- The network, through a private D-Bus system bus -------------------------------------------
# A dbus-daemon of the test's own stands in for the system bus (DBUS_SYSTEM_BUS_ADDRESS), and
# taskd-fake-nm (Tests/Fixtures/FakeNetworkManager) serves NetworkManager's State, Connectivity and
# Metered on it. What is simulated is NetworkManager; the bus, its signals and taskd's sd-bus client
# are real. The same path under a real systemd-networkd is in Tests/e2e.

BUS_CONFIG = """<busconfig><type>system</type><listen>unix:path={path}</listen>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow eavesdrop="true"/></policy>
</busconfig>"""
NM = ["org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager"]


@pytest.fixture
def network(tmp_path):
    """A private system bus with a fake NetworkManager on it: yields (address, set_property)."""
    path = tmp_path / "bus"
    (tmp_path / "bus.conf").write_text(BUS_CONFIG.format(path=path))
    bus = subprocess.Popen(["dbus-daemon", "--config-file", str(tmp_path / "bus.conf"), "--nofork", "--nopidfile"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(path.exists, what="the private bus")
    address = f"unix:path={path}"
    nm = subprocess.Popen([str(BUILD / "taskd-fake-nm"), "--bus", address, "--metered", "1"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    assert nm.stdout.readline().strip() == "ready"

    def set_property(name, value):
        subprocess.run(["busctl", f"--address={address}", "set-property", *NM, name, "u", str(value)], check=True)

    yield address, set_property
    nm.terminate()
    bus.terminate()
    nm.wait(10)
    bus.wait(10)


def test_a_run_waits_for_an_unmetered_network_and_losing_the_network_cancels_one(daemon_factory, network):
    address, set_property = network
    d = daemon_factory({
        "sync.task": task("/bin/true", extra="RequireNetwork=unmetered"),
        "upload.task": task("/bin/sleep 30", budget="60s", grace="2s", extra="RequireNetwork=online"),
    }, env={"DBUS_SYSTEM_BUS_ADDRESS": address}).start()
    wait_for(lambda: journal(TASKD_CONDITIONS_UNMET="network-unmetered"), what="the metered network seen")
    r = d.taskctl("wake", "sync")
    assert "waiting: network not metered" in r.stdout, r.stdout
    run = current(d, "sync")
    set_property("Metered", 2)  # NM_METERED_NO
    ended = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if "TASK_OUTCOME" in e], what="the run")
    assert ended[0]["TASK_OUTCOME"] == "completed" and int(ended[0]["TASK_WAITED_USEC"]) > 0
    assert d.taskctl("wake", "upload").returncode == 0
    wait_for(lambda: (current(d, "upload") or {}).get("state") == "running", what="upload to run")
    set_property("Connectivity", 1)  # NM_CONNECTIVITY_NONE
    lost = wait_for(lambda: [e for e in journal(TASK="upload") if "TASK_OUTCOME" in e], what="upload's end")[0]
    assert lost["TASK_OUTCOME"] == "cancelled" and lost["TASK_CANCEL_REASON"] == "condition-lost", lost
    assert lost["TASK_CONDITIONS_LOST"] == "network-online"
    said = journal(TASKD_CONDITIONS_UNMET="network-online")
    assert said and "network offline (NetworkManager)" in said[-1]["MESSAGE"], said


def test_free_space_is_read_and_an_impossible_amount_gives_up(daemon_factory):
    d = daemon_factory({
        "room.task": task("/bin/true", extra="RequireFreeSpace=/ 1K"),
        "huge.task": task("/bin/true", extra="RequireFreeSpace=/ 1000000T\nMaxDeferSec=1s"),
    }).start()
    assert json.loads(d.taskctl("wake", "room", "--wait", "--json").stdout)[0]["state"] == "completed"
    r = d.taskctl("wake", "huge")
    assert "waiting: 1000000T free in /" in r.stdout, r.stdout
    gave_up = json.loads(d.taskctl("wake", "huge", "--wait", "--json").stdout)[0]
    assert gave_up["state"] == "cancelled" and gave_up["cancelReason"] == "condition-timeout", gave_up


@pytest.mark.slow
def test_a_run_waits_while_memory_pressure_is_high(daemon_factory, tmp_path):
    folder = tmp_path / "pressure"
    folder.mkdir()
    # Memory pressure is read from the "full" line, as systemd's ConditionMemoryPressure= reads it.
    line = "some avg10=90.00 avg60=90.00 avg300=90.00 total=1\nfull avg10={0} avg60={0} avg300={0} total=1\n"
    (folder / "memory").write_text(line.format("42.50"))
    d = daemon_factory({"heavy.task": task("/bin/true", extra="RequireMemoryPressure=10%/10sec")},
                       env={"TASKD_PRESSURE_DIR": str(folder)}).start()
    r = d.taskctl("wake", "heavy")
    assert "waiting: memory pressure at most 10% (10sec average)" in r.stdout, r.stdout
    run = current(d, "heavy")
    (folder / "memory").write_text(line.format("3.10"))
    # No event tells of pressure: it is read every 5 s while a run needs it.
    ended = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if "TASK_OUTCOME" in e],
                     timeout=20, what="the run")
    assert ended[0]["TASK_OUTCOME"] == "completed"
