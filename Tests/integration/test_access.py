"""Access control on the real daemon: AllowUsers=/AllowGroups= for the socket, WakeUsers=/WakeGroups=
per task, and reload for root only. Identities come from SO_PEERCRED and SO_PEERGROUPS: the clients
here are real taskctl processes run as other users with setpriv."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import IS_ROOT, TASKCTL, journal, task, wait_for

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not IS_ROOT or shutil.which("setpriv") is None,
                                 reason="running clients as other users needs root and setpriv")]

REJECTED = "d17a36ff297a4f96b037619afdb683b6"
NOBODY = 65534
ALLOWED_GROUP = 4242  # a group number only the "member" client has, as a supplementary group


def as_user(d, *args, groups=()):
    who = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}"]
    who += [f"--groups={','.join(map(str, groups))}"] if groups else ["--clear-groups"]
    return subprocess.run(who + [str(TASKCTL), "--socket", d.socket, *args], capture_output=True, text=True,
                          timeout=30)


def test_allow_groups_admits_a_member_and_refuses_everyone_else(open_socket_daemon):
    d = open_socket_daemon({"open.task": task("/bin/true"),
                            "guarded.task": task("/bin/true", extra="WakeUsers=root\nWakeGroups=4343")},
                           daemon_conf=f"[Daemon]\nAllowGroups={ALLOWED_GROUP}\n")
    refused = as_user(d, "list")
    assert refused.returncode == 5, (refused.stdout, refused.stderr)
    assert "permission denied" in refused.stderr and "AllowUsers=, AllowGroups=" in refused.stderr
    entry = wait_for(lambda: [e for e in journal(MESSAGE_ID=REJECTED, _PID=str(d.proc.pid))], what="the rejection")
    assert entry[0]["PEER_UID"] == str(NOBODY) and int(entry[0]["PEER_PID"]) > 0

    member = as_user(d, "list", groups=[ALLOWED_GROUP])
    assert member.returncode == 0 and "open" in member.stdout
    assert as_user(d, "wake", "open", "--wait", groups=[ALLOWED_GROUP]).returncode == 0
    # WakeUsers=/WakeGroups= narrow who may wake or cancel one task; reading it stays open.
    guarded = as_user(d, "wake", "guarded", groups=[ALLOWED_GROUP])
    assert guarded.returncode == 5 and "may not wake or cancel appRefresh:guarded" in guarded.stderr
    assert as_user(d, "cancel", "guarded", groups=[ALLOWED_GROUP]).returncode == 5
    assert as_user(d, "status", "guarded", groups=[ALLOWED_GROUP]).returncode == 0
    assert as_user(d, "wake", "guarded", groups=[ALLOWED_GROUP, 4343]).returncode == 0
    # A target that names both is refused as a whole: nothing is started.
    before = json.loads(d.taskctl("history", "open", "--json").stdout)
    assert as_user(d, "wake", "appRefresh", groups=[ALLOWED_GROUP]).returncode == 5
    assert json.loads(d.taskctl("history", "open", "--json").stdout) == before
    # Reload is for root (and taskd's own user) only; root passes every rule.
    assert as_user(d, "reload", groups=[ALLOWED_GROUP]).returncode == 5
    assert d.taskctl("reload").returncode == 0 and d.taskctl("wake", "guarded").returncode == 0


def test_without_allow_lists_whoever_can_connect_is_served(open_socket_daemon):
    d = open_socket_daemon({"open.task": task("/bin/true")}, daemon_conf=None)
    assert as_user(d, "wake", "open", "--wait").returncode == 0


def test_unknown_names_are_configuration_errors_with_file_and_line(daemon_factory, tmp_path):
    d = daemon_factory({"t.task": task("/bin/true", extra="WakeUsers=root no-such-user-here")},
                       daemon_conf="[Daemon]\nAllowGroups=no-such-group-here\n")
    r = subprocess.run([str(d.argv[0]), "--config", str(d.config), "--check-config"], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{d.config}/taskd.conf:2: error: AllowGroups=: no such group 'no-such-group-here'" in r.stderr
    assert f"{d.config}/tasks.d/t.task:3: error: WakeUsers=: no such user 'no-such-user-here'" in r.stderr


def test_a_user_the_socket_mode_refuses_gets_exit_5_and_the_reason(open_socket_daemon):
    d = open_socket_daemon({"open.task": task("/bin/true")}, daemon_conf=None)
    os.chmod(d.socket, 0o660)  # root:root 0660, as taskd.socket makes it with its own group
    refused = as_user(d, "wake", "open")
    assert refused.returncode == 5, (refused.stdout, refused.stderr)
    assert "permission denied" in refused.stderr and "group" in refused.stderr
    assert as_user(d, "list", groups=[0]).returncode == 0  # a member of the socket's group is served
