"""Every MESSAGE_ID taskd emits has a journal catalog entry, and journalctl accepts the catalog."""
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration


def code_ids():
    text = (ROOT / "Sources" / "TaskdDaemon" / "Journal" / "MessageID.swift").read_text()
    return set(re.findall(r'= "([0-9a-f]{32})"', text))


def catalog_ids():
    return set(re.findall(r"^-- ([0-9a-f]{32})$", (ROOT / "systemd" / "taskd.catalog").read_text(), re.M))


def test_every_message_id_has_a_catalog_entry_and_no_entry_is_stale():
    assert len(code_ids()) >= 11
    assert code_ids() == catalog_ids()


@pytest.mark.skipif(shutil.which("journalctl") is None, reason="journalctl is not installed")
def test_journalctl_builds_and_lists_the_catalog(tmp_path):
    catalog_dir = tmp_path / "usr" / "lib" / "systemd" / "catalog"
    catalog_dir.mkdir(parents=True)
    shutil.copy(ROOT / "systemd" / "taskd.catalog", catalog_dir)
    (tmp_path / "var" / "lib" / "systemd" / "catalog").mkdir(parents=True)
    subprocess.run(["journalctl", f"--root={tmp_path}", "--update-catalog"], check=True, capture_output=True)
    listed = subprocess.run(["journalctl", f"--root={tmp_path}", "--list-catalog"], capture_output=True, text=True,
                            check=True).stdout
    for mid in code_ids():
        assert mid in listed
    assert "@SYSLOG_IDENTIFIER@ run of @TASK@ was killed at the end of its budget" in listed
