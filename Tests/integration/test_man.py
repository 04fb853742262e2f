"""The manual pages scripts/man makes (taskd(8), taskctl(1), taskd.task(5), taskd.conf(5)): groff
reads each without a warning, and, as man renders them, they name every key of the configuration
reference (which ReferenceTableTests ties to the parsers' key tables), every taskctl command and
each option of its usage, and every taskd option. An app daemon's pages (scripts/man --product
weatherd): weatherd(8) with its options, the tasks it registers in code and its own folders, and
weatherctl(1), taskctl's page in its name."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, TASKCTL, TASKD, WEATHERD

pytestmark = pytest.mark.integration

PAGES = ["man1/taskctl.1", "man8/taskd.8", "man5/taskd.task.5", "man5/taskd.conf.5"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("man")
    subprocess.run(["sh", str(ROOT / "scripts" / "man"), "--bin-dir", str(BUILD), str(out)], check=True)
    return out


def rendered(path):
    """The page as man shows it: no hyphenation, wide lines, no bold."""
    env = {**os.environ, "MANWIDTH": "250", "LANG": "C.UTF-8", "MAN_DISABLE_SECCOMP": "1"}
    r = subprocess.run(["man", "--nh", "--nj", "-l", str(path)], capture_output=True, text=True, env=env, check=True)
    return subprocess.run(["col", "-b"], input=r.stdout, capture_output=True, text=True, check=True).stdout


def reference_keys(heading):
    text = (ROOT / "docs" / "configuration.md").read_text().split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]
    return {k for line in text.splitlines() if line.startswith("| ")
            for k in re.findall(r"`([A-Za-z]+=)`", line.split("|")[2])}


@pytest.mark.parametrize("page", PAGES)
def test_groff_reads_each_page_without_a_warning(pages, page):
    text = subprocess.run(["preconv", str(pages / page)], capture_output=True, check=True).stdout
    r = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8"], input=text, capture_output=True)
    assert r.returncode == 0 and not r.stderr, r.stderr.decode()


@pytest.mark.parametrize("heading, page", [("Task files", "man5/taskd.task.5"), ("Daemon settings", "man5/taskd.conf.5")])
def test_the_key_pages_name_every_key_of_the_reference(pages, heading, page):
    keys = reference_keys(heading)
    task_page = page.endswith("taskd.task.5")
    assert len(keys) >= (55 if task_page else 12)
    shown = rendered(pages / page)
    assert sorted(k for k in keys if k not in shown) == []
    for section in (["[Task]", "[Timer]", "[Exec]"] if task_page else ["[Daemon]"]):
        assert f"{section} SECTION" in shown


def test_taskctl_1_has_every_command_and_each_option_of_its_usage(pages):
    shown = rendered(pages / "man1/taskctl.1")
    usage = subprocess.run([str(TASKCTL), "--help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z]+)\b", usage.split("Options:")[0], re.M)
    assert len(commands) >= 16
    for command in commands:
        text = subprocess.run([str(TASKCTL), command, "--help"], capture_output=True, text=True, check=True).stdout
        assert text.splitlines()[0] in shown, command
        options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", text.splitlines()[0]))
        assert sorted(o for o in options if o not in shown) == [], command


def test_taskd_8_has_every_option(pages):
    shown = rendered(pages / "man8/taskd.8")
    usage = subprocess.run([str(TASKD), "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"^  (--?[a-z][a-z-]*)", usage, re.M))
    assert {"--config", "--state-dir", "--socket", "--check-config", "--version"} <= options
    assert sorted(o for o in options if o not in shown) == []
    assert "/etc/taskd/tasks.d" in shown and "taskd.task(5)" in shown


def test_an_app_daemon_gets_its_own_pages(tmp_path):
    subprocess.run(["sh", str(ROOT / "scripts" / "man"), "--bin-dir", str(BUILD), "--product", "weatherd",
                    str(tmp_path)], check=True)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.*")) == ["man1/weatherctl.1",
                                                                                  "man8/weatherd.8"]
    for page in ("man1/weatherctl.1", "man8/weatherd.8"):
        text = subprocess.run(["preconv", str(tmp_path / page)], capture_output=True, check=True).stdout
        r = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8"], input=text, capture_output=True)
        assert r.returncode == 0 and not r.stderr, r.stderr.decode()
    shown = rendered(tmp_path / "man8/weatherd.8")
    usage = subprocess.run([str(WEATHERD), "--help"], capture_output=True, text=True, check=True).stdout
    assert sorted(o for o in set(re.findall(r"^  (--?[a-z][a-z-]*)", usage, re.M)) if o not in shown) == []
    assert "appRefresh:WEATHER_DATA" in shown.split("TASKS", 1)[1].split("FILES", 1)[0]
    assert "/etc/weatherd/tasks.d" in shown and "/run/weatherd/weatherd.sock" in shown and "/etc/taskd" not in shown
    assert "weatherctl(1)" in shown and "taskd.task(5)" not in shown
    ctl = rendered(tmp_path / "man1/weatherctl.1")
    assert ctl.splitlines()[0].startswith("WEATHERCTL(1)") and "weatherctl wake" in ctl and "taskctl" not in ctl
