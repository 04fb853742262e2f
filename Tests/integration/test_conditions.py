"""Conditions (issue 35): a run waits for AC power, starts the moment it comes, gives up after
MaxDeferSec=, and is cancelled when the power goes (ConditionLost=cancel). The power supplies are a
sysfs-shaped folder (TASKD_POWER_SUPPLY_DIR) the test writes, watched by inotify as sysfs is by the
kernel's device events: what is simulated is the kernel's side, not taskd's."""
import json

from conftest import journal, needs_journal, task, wait_for

pytestmark = needs_journal


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
    assert journal(TASKD_CONDITIONS="ac-power battery-not-low"), "the change is journaled"


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
    wait_for(lambda: journal(TASKD_CONDITIONS="ac-power battery-not-low"), what="AC power seen")
    assert d.taskctl("wake", "long").returncode == 0 and d.taskctl("wake", "stays").returncode == 0
    wait_for(lambda: (current(d, "long") or {}).get("state") == "running", what="long to run")
    wait_for(lambda: (current(d, "stays") or {}).get("state") == "running", what="stays to run")
    plug(folder, 0)
    lost = wait_for(lambda: [e for e in journal(TASK="long") if "TASK_OUTCOME" in e], what="long's end")[0]
    assert lost["TASK_OUTCOME"] == "cancelled" and lost["TASK_CANCEL_REASON"] == "condition-lost", lost
    stays = wait_for(lambda: [e for e in journal(TASK="stays") if "TASK_OUTCOME" in e], what="stays' end")[0]
    assert stays["TASK_OUTCOME"] == "completed", stays


def test_a_command_is_told_when_its_trigger_was_due(daemon_factory):
    d = daemon_factory({"when.task": task("/bin/sh -c 'echo scheduled=$TASKD_SCHEDULED_USEC'")}).start()
    run = json.loads(d.taskctl("wake", "when", "--wait", "--json").stdout)[0]
    assert run["queuedUSec"] - 1_000_000 < run["scheduledUSec"] <= run["queuedUSec"], run
    said = wait_for(lambda: [e for e in journal(TASK_RUN_ID=run["runId"]) if e.get("TASK_STREAM") == "stdout"],
                    what="the command's line")[0]
    assert said["MESSAGE"] == f"scheduled={run['scheduledUSec']}", said
