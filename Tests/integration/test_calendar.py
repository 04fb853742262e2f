"""taskctl calendar prints what systemd-analyze calendar prints, and its --json is data."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import TASKCTL

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")]

EXPRESSIONS = ["*:0/15", "Mon..Fri 9:00", "*-02-30", "*-02~03/1", "daily", "Sat,Sun 10:00 UTC",
               "*-*-* 09:00 America/New_York", "*-*-* 02:30:00", "quarterly", "*-*-* *:*:30.5"]
BASES = ["2026-03-29 00:30:00 UTC", "@1792888200", "2024-02-28 12:00", "2026-11-01 05:30:00 UTC", "2026-11-01 01:30"]


def without_from_now(text):
    return [line for line in text.splitlines() if "From now:" not in line]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("base", BASES)
def test_human_output_is_systemd_analyzes(zone, base):
    env = dict(os.environ, TZ=zone, SYSTEMD_COLORS="0")
    args = ["calendar", *EXPRESSIONS, "--iterations", "4", "--base-time", base]
    ours = subprocess.run([str(TASKCTL), *args], capture_output=True, text=True, env=env)
    theirs = subprocess.run(["systemd-analyze", *args], capture_output=True, text=True, env=env)
    assert ours.returncode == theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert without_from_now(ours.stdout) == without_from_now(theirs.stdout)
    assert len(without_from_now(ours.stdout)) > 40


def test_json_lists_normalized_forms_and_elapses_and_invalid_expressions_exit_1():
    r = subprocess.run([str(TASKCTL), "calendar", "daily", "*-02-30", "25:00", "--json", "--iterations", "2",
                        "--base-time", "@1767225600"], capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))
    assert r.returncode == 1
    assert json.loads(r.stdout) == [
        {"expression": "daily", "normalized": "*-*-* 00:00:00", "nextElapseUSec": [1767312000000000, 1767398400000000]},
        {"expression": "*-02-30", "normalized": "*-02-30 00:00:00", "nextElapseUSec": []},
        {"expression": "25:00", "error": "hour 25 is out of range 0..23"},
    ]
    assert "Failed to parse calendar specification '25:00'" in r.stderr


def test_bad_base_time_and_iterations_are_usage_errors():
    assert subprocess.run([str(TASKCTL), "calendar", "daily", "--base-time", "yesterday-ish"],
                          capture_output=True).returncode == 2
    assert subprocess.run([str(TASKCTL), "calendar", "daily", "--iterations", "0"], capture_output=True).returncode == 2
    assert subprocess.run([str(TASKCTL), "calendar"], capture_output=True).returncode == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a mount namespace with an overlay over /etc")
def test_a_time_zone_change_re_arms_calendar_timers_at_once(tmp_path):
    import signal
    import datetime
    import zoneinfo
    from conftest import TASKD, journal, wait_for

    config = tmp_path / "config"
    (config / "tasks.d").mkdir(parents=True)
    (config / "tasks.d" / "midnight.task").write_text("[Timer]\nOnCalendar=*-*-* 00:00:00\n[Exec]\nExecStart=/bin/true\n")
    for d in ["upper", "work"]:
        (tmp_path / d).mkdir()
    sock = tmp_path / "t.sock"
    # Only this namespace sees the overlay: the host's /etc/localtime is never touched.
    script = (f"mount -t overlay overlay -o lowerdir=/etc,upperdir={tmp_path}/upper,workdir={tmp_path}/work /etc"
              f" && ln -sf /usr/share/zoneinfo/UTC /etc/localtime"
              f" && exec env -u TZ {TASKD} --config {config} --state-dir {tmp_path}/state --socket {sock}")
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(sock.exists, what="socket")

        def next_elapse():
            r = subprocess.run([str(TASKCTL), "--socket", str(sock), "status", "midnight", "--json"],
                               capture_output=True, text=True)
            return json.loads(r.stdout)["nextElapseUSec"] // 1_000_000

        def midnight(zone):
            now = datetime.datetime.now(zoneinfo.ZoneInfo(zone))
            tomorrow = (now + datetime.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
            return int(tomorrow.timestamp())

        assert next_elapse() == midnight("UTC")
        subprocess.run(["nsenter", "-t", str(proc.pid), "-m", "ln", "-sf", "/usr/share/zoneinfo/Asia/Tokyo",
                        "/etc/localtime"], check=True)
        wait_for(lambda: next_elapse() == midnight("Asia/Tokyo"), timeout=5, what="re-armed for Tokyo midnight")
        assert wait_for(lambda: [e for e in journal(_PID=str(proc.pid))
                                 if e.get("MESSAGE", "").startswith("local time zone changed")], what="journal entry")
        assert open("/etc/localtime", "rb").read(4) == b"TZif"  # the host's zone file is intact
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
