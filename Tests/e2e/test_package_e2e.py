"""The Debian packages under a real systemd (nspawn; Debian 12, then Debian 13; no Swift toolchain):
`apt install ./taskd_*.deb` enables the socket by preset, and `taskctl wake appRefresh --wait`
exits 0; man finds the pages and taskd.task(5) names every task key; installing the next build
while a run is going upgrades taskd in place (the same main PID) and the run ends with its real
outcome; `apt purge` leaves no taskd file but the group. The weatherd package (an app's daemon
built on Taskd, scripts/package --product) installs, disabled as the admin's preset says, and runs
its Swift task as its own user."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from systemd_container import HARNESS, ROOT, SKIP, bare_container, inside, main_pid, wait_inside  # noqa: E402,F401
from test_man import reference_keys  # noqa: E402

pytestmark = [pytest.mark.nspawn, pytest.mark.slow, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

GATE = "/run/taskd-package-gate"


def package(bin_dir, out, *product):
    r = subprocess.run([str(ROOT / "scripts" / "package"), *(["--bin-dir", str(bin_dir)] if bin_dir else []),
                        "--out", str(out), *product], capture_output=True, text=True, timeout=3600, cwd=ROOT,
                       env={**os.environ, "SOURCE_DATE_EPOCH": "1764000000"})
    assert r.returncode == 0, r.stderr[-3000:]
    return Path(r.stdout.strip())


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """taskd's package, the next build of it, and weatherd's: built once for both releases."""
    out = tmp_path_factory.mktemp("debs")
    first = package(None, out / "first")
    # The next build: the same binaries with another version string, as the upgrade test makes one.
    release = out / "next-bin"
    release.mkdir()
    built = Path(subprocess.run([str(ROOT / "scripts" / "build-release"), "--show-bin-path"], capture_output=True,
                                text=True, check=True, cwd=ROOT).stdout.strip())
    for name in ("taskd", "taskctl", "taskd-keeper"):
        shutil.copy(built / name, release / name)
    data = (release / "taskd").read_bytes()
    (release / "taskd").write_bytes(data.replace(b"taskd-version:0.1.0", b"taskd-version:0.1.1"))
    second = package(release, out / "second")
    assert first.name.startswith("taskd_0.1.0_") and second.name.startswith("taskd_0.1.1_")
    weatherd = package(None, out / "weatherd", "--product", "weatherd", "--config", "Examples/WeatherDaemon/config")
    assert weatherd.name.startswith("weatherd_1.0.0_")
    return first, second, weatherd


def copy_in(container, deb):
    subprocess.run([str(HARNESS), "exec", container, "sh", "-c", f"cat > /root/{deb.name}"], input=deb.read_bytes(),
                   check=True)
    return f"/root/{deb.name}"


def apt(container, *args):
    return inside(container, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-y", "-q", *args, timeout=300)


def rendered_page(container, page):
    """A manual page as man shows it in the container: wide lines, no hyphenation, no bold."""
    shown = inside(container, "env", "MANWIDTH=250", "man", "--nh", "--nj", page).stdout
    return re.sub(r".\x08", "", shown)


def test_install_wake_upgrade_in_place_and_purge(bare_container, debs):
    container = bare_container
    first, second, _ = debs

    apt(container, "install", copy_in(container, first))
    assert inside(container, "systemctl", "is-enabled", "taskd.socket").stdout.strip() == "enabled"
    assert inside(container, "systemctl", "is-active", "taskd.socket").stdout.strip() == "active"
    wake = inside(container, "taskctl", "wake", "appRefresh", "--wait", check=False)
    assert wake.returncode == 0, (wake.stdout, wake.stderr)
    assert inside(container, "test", "-e", "/opt/swift", check=False).returncode != 0, "no Swift here"
    # bash completion, as installed: commands, and the task names of the running taskd.
    complete = ("source /usr/share/bash-completion/completions/taskctl; COMP_WORDS=(taskctl {}); "
                "COMP_CWORD={}; _taskctl; echo ${{COMPREPLY[@]}}")
    assert "wake" in inside(container, "bash", "-c", complete.format("w", 1)).stdout.split()
    assert sorted(inside(container, "bash", "-c", complete.format("wake ''", 2)).stdout.split()) == \
        ["appRefresh", "cleanup"]
    # man finds the pages, and taskd.task(5) names every key of the task files.
    assert inside(container, "man", "-w", "taskd.task").stdout.strip() == "/usr/share/man/man5/taskd.task.5.gz"
    for page, section in (("taskd", 8), ("taskctl", 1), ("taskd.conf", 5)):
        assert inside(container, "man", "-w", page).stdout.strip() == f"/usr/share/man/man{section}/{page}.{section}.gz"
    shown = rendered_page(container, "taskd.task")
    keys = reference_keys("Task files")
    assert len(keys) >= 55 and sorted(k for k in keys if k not in shown) == []

    # A run that prints until the gate opens, going while the next build is installed.
    inside(container, "sh", "-c", "printf '[Task]\\nKind=processing\\n[Exec]\\nExecStart=/bin/sh -c "
                                  f"\"while [ ! -e {GATE} ]; do sleep 0.1; done; exit 3\"\\n' "
                                  "> /etc/taskd/tasks.d/long.task && taskctl reload")
    run = json.loads(inside(container, "taskctl", "wake", "long", "--json").stdout)[0]["runId"]
    pid = main_pid(container)
    apt(container, "install", copy_in(container, second))
    assert main_pid(container) == pid, "upgraded in place: the same main PID"
    inside(container, "journalctl", "--sync")
    upgraded = inside(container, "journalctl", "-u", "taskd", "-o", "json", "MESSAGE_ID=8875834a913146d8a88831fb933ef752")
    entry = json.loads(upgraded.stdout.splitlines()[-1])
    assert entry["TASKD_PREVIOUS_VERSION"] == "taskd 0.1.0" and entry["MESSAGE"].startswith("taskd 0.1.1"), entry
    inside(container, "touch", GATE)

    def ended():
        runs = json.loads(inside(container, "taskctl", "history", "long", "--json").stdout)
        return runs and runs[0]["state"] not in ("running", "cancelling", "killing") and runs
    wait_inside(container, ended, "the run to end")
    runs = json.loads(inside(container, "taskctl", "history", "long", "--json").stdout)
    assert [r["runId"] for r in runs] == [run] and runs[0]["state"] == "failed" and runs[0]["exitStatus"] == 3, runs

    # Purge: nothing of taskd is left but the group (Debian keeps system groups) and the journal
    # (the test's own task file, not the package's, goes first: dpkg keeps what it did not install).
    inside(container, "rm", "/etc/taskd/tasks.d/long.task")
    apt(container, "purge", "taskd")
    left = inside(container, "sh", "-c", "find /usr /etc /var/lib /run -name '*taskd*' 2>/dev/null; true").stdout.split()
    assert [p for p in left if p != GATE] == [], left
    assert inside(container, "getent", "group", "taskd").stdout.startswith("taskd:")


def test_an_app_daemon_package_runs_its_swift_task_as_its_own_user(bare_container, debs):
    container = bare_container
    weatherd = debs[2]
    # The admin's preset is kept at the first install: the socket stays disabled until enabled.
    inside(container, "sh", "-c", "mkdir -p /etc/systemd/system-preset && "
                                  "echo 'disable weatherd.socket' > /etc/systemd/system-preset/50-local.preset")
    apt(container, "install", copy_in(container, weatherd))
    assert inside(container, "systemctl", "is-enabled", "weatherd.socket", check=False).stdout.strip() == "disabled"
    assert inside(container, "systemctl", "is-active", "weatherd.socket", check=False).stdout.strip() == "inactive"
    inside(container, "systemctl", "enable", "--now", "weatherd.socket")
    wake = inside(container, "weatherctl", "wake", "WEATHER_DATA", "--payload", '{"city": "Oslo", "steps": 2}',
                  "--wait", "--json", check=False)
    assert wake.returncode == 0, (wake.stdout, wake.stderr)
    ended = json.loads(wake.stdout)[0]
    assert ended["state"] == "completed" and ended["result"]["city"] == "Oslo", ended
    # Its own user, folders and socket: nothing of taskd's.
    pid = inside(container, "systemctl", "show", "weatherd.service", "-p", "MainPID", "--value").stdout.strip()
    assert inside(container, "stat", "-c", "%U", f"/proc/{pid}").stdout.strip() == "weatherd"
    # systemd gives the RuntimeDirectory= (/run/weatherd) and what is in it to the service's user.
    assert inside(container, "stat", "-c", "%U %G %a", "/run/weatherd/weatherd.sock").stdout.split() == \
        ["weatherd", "weatherd", "660"]
    assert inside(container, "stat", "-c", "%U", "/var/lib/weatherd").stdout.strip() == "weatherd"
    assert inside(container, "test", "-e", "/etc/taskd", check=False).returncode != 0
    # Its journal, explained by its catalog in its own name; its manual pages.
    inside(container, "journalctl", "--sync")
    explained = inside(container, "journalctl", "-t", "weatherd", "-x", "--no-pager").stdout
    assert "weatherd run of WEATHER_DATA completed" in explained, explained[-3000:]
    assert inside(container, "man", "-w", "weatherd").stdout.strip() == "/usr/share/man/man8/weatherd.8.gz"
    assert "appRefresh:WEATHER_DATA" in rendered_page(container, "weatherd")
    assert "weatherctl wake" in rendered_page(container, "weatherctl")
    inside(container, "systemctl", "reload", "weatherd.service")
    # remove stops it and keeps its state and configuration; purge takes them.
    apt(container, "remove", "weatherd")
    assert inside(container, "systemctl", "is-active", "weatherd.service", check=False).stdout.strip() != "active"
    assert inside(container, "test", "-f", "/var/lib/weatherd/format", check=False).returncode == 0
    assert inside(container, "test", "-f", "/etc/weatherd/tasks.d/WEATHER_DATA.task", check=False).returncode == 0
    apt(container, "purge", "weatherd")
    left = inside(container, "sh", "-c", "find /usr /etc /var/lib /run -name '*weatherd*' 2>/dev/null; true").stdout
    assert left.split() == [], left
    assert inside(container, "getent", "passwd", "weatherd").stdout.startswith("weatherd:")
