"""The control surface: Varlink on the socket, socket activation, sd_notify, taskctl, config checks."""
import json
import re
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (FAULTS, IS_ROOT, ROOT, TASKCTL, TASKD, VARLINK_CALL, WEATHERD, Daemon, VarlinkSocket, journal, needs_journal,
                      task, wait_for)

pytestmark = pytest.mark.integration

REJECTED = "d17a36ff297a4f96b037619afdb683b6"


@pytest.fixture
def daemon(daemon_factory):
    return daemon_factory({"hello.task": task("/bin/echo hello"),
                           "slow.task": task("/bin/sleep 0.3", kind="processing")}).start()


def test_malformed_and_oversized_requests_get_errors_while_another_client_is_served(daemon):
    with VarlinkSocket(daemon.socket) as bystander:
        assert bystander.call("io.taskd.Scheduler.List")[0]["parameters"]["tasks"]
        cases = [
            (b"this is not json\0", "io.taskd.Scheduler.InvalidRequest"),
            (b'{"parameters": {}}\0', "io.taskd.Scheduler.InvalidRequest"),
            (b"[1,2,3]\0", "io.taskd.Scheduler.InvalidRequest"),
            (b'{"method": "x.Y", "more": "yes"}\0', "io.taskd.Scheduler.InvalidRequest"),
            (b'"\xff\xfe"\0', "io.taskd.Scheduler.InvalidRequest"),
            (b"[" * 10000 + b"\0", "io.taskd.Scheduler.InvalidRequest"),
            (b'{"method":"io.taskd.Scheduler.Wake","parameters":{"target":"' + b"x" * 70000 + b'"}}\0',
             "io.taskd.Scheduler.InvalidRequest"),
            (b"y" * 70000, "io.taskd.Scheduler.InvalidRequest"),  # never ends: cut at 64 KiB
        ]
        for raw, error in cases:
            with VarlinkSocket(daemon.socket) as bad:
                bad.send_raw(raw)
                reply = bad.read_reply()
                assert reply["error"] == error, (raw[:40], reply)
                assert reply["parameters"]["reason"]
                assert bad.read_reply() is None  # and the connection is closed
            # The well-behaved client is still served, on its open connection.
            assert bystander.call("io.taskd.Scheduler.Wake", {"target": "hello"})[0]["parameters"]["runs"]
    calls = [
        ({"method": "io.taskd.Scheduler.Nope"}, "org.varlink.service.MethodNotFound", {"method": "io.taskd.Scheduler.Nope"}),
        ({"method": "com.example.Other.Call"}, "org.varlink.service.InterfaceNotFound", {"interface": "com.example.Other"}),
        ({"method": "io.taskd.Scheduler.Wake", "parameters": {"target": 5}}, "org.varlink.service.InvalidParameter", {"parameter": "target"}),
        ({"method": "io.taskd.Scheduler.Wake", "parameters": {}}, "org.varlink.service.InvalidParameter", {"parameter": "target"}),
        ({"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "hello", "payload": "text"}},
         "org.varlink.service.InvalidParameter", {"parameter": "payload"}),
        ({"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "hello", "bogus": 1}},
         "org.varlink.service.InvalidParameter", {"parameter": "bogus"}),
        ({"method": "io.taskd.Scheduler.Status", "parameters": {"name": "processing:nope"}}, "io.taskd.Scheduler.NoSuchTask", None),
    ]
    with VarlinkSocket(daemon.socket) as v:  # errors of valid Varlink keep the connection open
        for request, error, parameters in calls:
            v.send_raw(json.dumps(request).encode() + b"\0")
            reply = v.read_reply()
            assert reply["error"] == error, (request, reply)
            if parameters:
                assert reply["parameters"] == parameters
        assert v.call("io.taskd.Scheduler.List")[0]["parameters"]["tasks"]
    assert daemon.proc.poll() is None


@needs_journal
def test_rejected_requests_are_journaled_with_the_peer(daemon):
    with VarlinkSocket(daemon.socket) as bad:
        bad.send_raw(b"garbage\0")
        bad.read_reply()
    entries = wait_for(lambda: journal(MESSAGE_ID=REJECTED, _PID=str(daemon.proc.pid)), what="rejection entry")
    assert entries[-1]["PEER_UID"] == str(os.getuid()) and entries[-1]["PEER_PID"] == str(os.getpid())


@needs_journal
def test_each_request_is_journaled_with_peer_credentials(daemon):
    r = daemon.taskctl("list")
    assert r.returncode == 0
    entries = wait_for(lambda: journal(REQUEST_METHOD="io.taskd.Scheduler.List", _PID=str(daemon.proc.pid)),
                       what="the request's entry")  # the reply does not wait for it
    assert entries and entries[-1]["PEER_UID"] == str(os.getuid()) and int(entries[-1]["PEER_PID"]) > 0


def test_pipelined_calls_are_answered_in_order(daemon):
    with VarlinkSocket(daemon.socket) as v:
        v.send_raw(b"".join(json.dumps(m).encode() + b"\0" for m in [
            {"method": "io.taskd.Scheduler.Status", "parameters": {"name": "hello"}},
            {"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "nope"}},
            {"method": "org.varlink.service.GetInfo"},
        ]))
        replies = [v.read_reply() for _ in range(3)]
    assert replies[0]["parameters"]["task"]["name"] == "hello"
    assert replies[1]["error"] == "io.taskd.Scheduler.NoSuchTask"
    assert replies[1]["parameters"]["known"] == ["appRefresh:hello", "processing:slow"]
    assert replies[2]["parameters"]["interfaces"] == ["org.varlink.service", "io.taskd.Scheduler"]


def test_calls_sent_behind_a_wake_served_at_once_are_answered_after_it(daemon):
    # A lone wake is served at once on taskd's loop, and its reply waits for the disk; calls written
    # right behind it wait for that reply, then a task answers them: every reply in call order.
    wake = {"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "hello"}}
    for _ in range(20):
        with VarlinkSocket(daemon.socket) as v:
            v.send_raw(json.dumps(wake).encode() + b"\0")
            v.send_raw(b"".join(json.dumps(m).encode() + b"\0" for m in [
                {"method": "io.taskd.Scheduler.Status", "parameters": {"name": "hello"}},
                {"method": "io.taskd.Scheduler.Wake", "parameters": {"target": "nope"}},
                wake,
                {"method": "org.varlink.service.GetInfo"},
            ]))
            replies = [v.read_reply() for _ in range(5)]
        assert replies[0]["parameters"]["runs"][0]["task"] == "hello", replies
        assert replies[1]["parameters"]["task"]["name"] == "hello", replies
        assert replies[2]["error"] == "io.taskd.Scheduler.NoSuchTask", replies
        assert replies[3]["parameters"]["runs"][0]["task"] == "hello", replies
        assert replies[4]["parameters"]["interfaces"] == ["org.varlink.service", "io.taskd.Scheduler"], replies


def test_wake_with_more_streams_each_state_until_the_end(daemon):
    replies = daemon.call("io.taskd.Scheduler.Wake", {"target": "slow"}, more=True)
    states = [r["parameters"]["runs"][0]["state"] for r in replies]
    assert states == ["running", "completed"], replies
    assert [bool(r.get("continues")) for r in replies] == [True, False]


def test_a_wake_reply_tells_an_end_only_once_the_history_holding_it_is_on_disk(daemon):
    # /bin/echo ends before its wake's fdatasync is done: the first reply still tells the run as
    # acknowledged, and the end comes next, once the task's history file holds it.
    history = daemon.state / "tasks" / "appRefresh:hello.json"
    for _ in range(20):
        replies = daemon.call("io.taskd.Scheduler.Wake", {"target": "hello"}, more=True)
        first, last = replies[0]["parameters"]["runs"][0], replies[-1]["parameters"]["runs"][0]
        on_disk = [r["runId"] for r in json.loads(history.read_text())["history"]]
        assert first["state"] in ("queued", "waiting", "running"), replies
        assert last["state"] == "completed" and last["runId"] in on_disk, (replies, on_disk)
        plain = daemon.call("io.taskd.Scheduler.Wake", {"target": "hello"})[0]["parameters"]["runs"][0]
        assert plain["state"] in ("queued", "waiting", "running"), plain


@pytest.mark.slow
@pytest.mark.skipif(not VARLINK_CALL.exists(), reason="shared/tools/varlink-call is not beside the repo")
def test_the_reference_varlink_client_parses_the_idl_and_calls_methods(daemon):
    out = subprocess.run([str(VARLINK_CALL), daemon.socket], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "# io.taskd.Scheduler: 30 members parsed" in out.stdout
    assert '"vendor": "taskd"' in out.stdout
    wake = subprocess.run([str(VARLINK_CALL), "--more", daemon.socket, "io.taskd.Scheduler.Wake", '{"target": "hello"}'],
                          capture_output=True, text=True, timeout=60)
    assert wake.returncode == 0, wake.stderr
    ran = json.loads(wake.stdout.splitlines()[-1])["runs"][0]
    assert ran["state"] == "completed"
    # Follow by run id (how a watcher resumes after an upgrade): an ended run as its history has it.
    followed = subprocess.run([str(VARLINK_CALL), "--more", daemon.socket, "io.taskd.Scheduler.Follow",
                               json.dumps({"runIds": [ran["runId"]]})], capture_output=True, text=True, timeout=60)
    assert followed.returncode == 0, followed.stderr
    assert json.loads(followed.stdout.splitlines()[-1])["runs"][0]["runId"] == ran["runId"]
    unknown = subprocess.run([str(VARLINK_CALL), daemon.socket, "io.taskd.Scheduler.Follow", '{"runIds": ["0"]}'],
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1 and json.loads(unknown.stderr)["error"] == "io.taskd.Scheduler.NoSuchRun"
    bad = subprocess.run([str(VARLINK_CALL), daemon.socket, "io.taskd.Scheduler.Wake", '{"target": "nope"}'],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and json.loads(bad.stderr)["error"] == "io.taskd.Scheduler.NoSuchTask"
    # The methods of issue 37, through the reference client: their replies match the IDL's types.
    def call(method, parameters="{}"):
        r = subprocess.run([str(VARLINK_CALL), daemon.socket, method, parameters], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, (method, r.stderr)
        return json.loads(r.stdout)
    assert call("io.taskd.Scheduler.Pause", '{"target": "slow", "note": "x"}')["tasks"] == ["processing:slow"]
    reasons = call("io.taskd.Scheduler.Why", '{"name": "slow"}')["reasons"]
    assert reasons[0]["code"] == "paused" and reasons[0]["messageId"] == "8b8d0675948e42339320e30db5ca9217"
    assert call("io.taskd.Scheduler.Resume", '{"target": "slow"}')["tasks"] == ["processing:slow"]
    assert call("io.taskd.Scheduler.Metrics")["text"].endswith("# EOF\n")
    assert call("io.taskd.Scheduler.Fleet") == {"hosts": [], "claims": []}, "no fleet: no name, no host"
    # Drain with no run active answers at once (the client runs as taskd's own user: an admin).
    assert call("io.taskd.Scheduler.Drain", '{"timeoutUSec": 1000000}') == {"drained": True, "runs": []}
    assert call("io.taskd.Scheduler.Why", '{"name": "slow"}')["reasons"][0]["code"] == "draining"
    assert call("io.taskd.Scheduler.EndDrain") == {"waiting": 0}
    submitted = call("io.taskd.Scheduler.Submit", '{"command": ["/bin/true"], "name": "later", "inUSec": 3600000000}')
    assert submitted["task"]["kind"] == "submitted" and submitted["task"]["nextElapseUSec"] > 0
    assert call("io.taskd.Scheduler.Cancel", '{"target": "submitted:later"}') == {"runs": []}


def test_taskctl_commands_output_and_exit_codes(daemon, tmp_path):
    listing = daemon.taskctl("list")
    assert listing.returncode == 0
    assert listing.stdout.splitlines()[0].split() == ["NAME", "KIND", "HANDLER", "STATE", "NEXT", "LEFT", "LAST", "PASSED", "RESULT"]
    assert [json.loads(daemon.taskctl("list", "--json").stdout)[i]["name"] for i in (0, 1)] == ["hello", "slow"]
    status = daemon.taskctl("status", "hello")
    assert status.returncode == 0 and "hello (appRefresh, command handler)" in status.stdout
    assert json.loads(daemon.taskctl("status", "hello", "--json").stdout)["budgetUSec"] == 30_000_000
    assert daemon.taskctl("wake", "appRefresh", "--wait").returncode == 0  # a kind
    assert daemon.taskctl("wake", "processing:slow", "--wait").returncode == 0  # kind:identifier
    missing = daemon.taskctl("wake", "nope")
    assert missing.returncode == 3 and "known tasks: appRefresh:hello, processing:slow" in missing.stderr
    assert daemon.taskctl("status", "nope").returncode == 3
    assert daemon.taskctl("wake").returncode == 2
    assert daemon.taskctl("frobnicate").returncode == 2
    assert daemon.taskctl("wake", "hello", "--payload", "[1]").returncode == 2
    assert daemon.taskctl("wake", "hello", "--bogus").returncode == 2
    for command in ["wake", "list", "status", "cancel", "logs", "history", "reload"]:
        h = daemon.taskctl(command, "--help")
        assert h.returncode == 0 and h.stdout.startswith(f"Usage: taskctl {command}")
    unreachable = subprocess.run([str(TASKCTL), "--socket", str(tmp_path / "none.sock"), "list"],
                                 capture_output=True, text=True)
    assert unreachable.returncode == 4
    assert unreachable.stderr.count("\n") == 1 and "cannot connect to taskd" in unreachable.stderr
    env_socket = subprocess.run([str(TASKCTL), "list"], capture_output=True, text=True,
                                env=dict(os.environ, TASKD_SOCKET=daemon.socket))
    assert env_socket.returncode == 0 and "hello" in env_socket.stdout


def test_taskctl_links_no_libsystemd():
    libs = subprocess.run(["ldd", str(TASKCTL)], capture_output=True, text=True).stdout
    assert "libsystemd" not in libs and "libFoundation" not in libs
    assert "libsystemd" in subprocess.run(["ldd", str(TASKD)], capture_output=True, text=True).stdout


def notify_listener(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.settimeout(10)
    return s


def receive_notifications(s, until):
    messages = []
    while not any(until in m for m in messages):
        data, ancillary, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(64))
        pid = None
        for level, kind, payload in ancillary:
            if kind == socket.SCM_CREDENTIALS:
                pid = int.from_bytes(payload[:4], "little")
            if kind == socket.SCM_RIGHTS:
                for i in range(0, len(payload) - len(payload) % 4, 4):
                    os.close(int.from_bytes(payload[i:i + 4], "little"))
        messages.append(data.decode())
        assert pid is not None
    return messages


def test_ready_status_and_stopping_reach_a_notify_socket(daemon_factory, tmp_path):
    path = tmp_path / "notify.sock"
    listener = notify_listener(path)
    d = daemon_factory({"hello.task": task("/bin/echo hello", extra="[Timer]\nOnStartupSec=1h")})
    d.env["NOTIFY_SOCKET"] = str(path)
    d.start(wait=False)
    ready = receive_notifications(listener, "READY=1")
    assert any(f"MAINPID={d.proc.pid}" in m for m in ready)
    assert d.accepts()  # READY=1 came once the socket was served
    statuses = ready if any("STATUS=" in m for m in ready) else receive_notifications(listener, "STATUS=")
    assert any("next: hello at" in m for m in statuses), statuses
    d.proc.send_signal(signal.SIGTERM)
    assert any("STOPPING=1" in m for m in receive_notifications(listener, "STOPPING=1"))
    assert d.proc.wait(timeout=10) == 0


def test_a_manager_that_stops_reading_notifications_stalls_nothing(daemon_factory, tmp_path):
    # sd_notify blocks once the manager's socket holds 10 unread datagrams; taskd must keep serving
    # (it once hung in the middle of the sixth wake here) and must still stop on SIGTERM. No
    # watchdog: its pings would take some of the held places, as many as the machine's pace lets in
    # (ServiceNotifierTests shows a waiting ping is kept once, beside the latest status).
    path = tmp_path / "notify.sock"
    listener = notify_listener(path)
    d = daemon_factory({"hello.task": task("/bin/true")})
    d.env["NOTIFY_SOCKET"] = str(path)
    d.env.pop("WATCHDOG_USEC", None)
    d.start(wait=False)
    receive_notifications(listener, "READY=1")
    for _ in range(30):  # never read again: each wake changes STATUS= twice (running, then idle)
        r = d.taskctl("wake", "hello", "--wait", timeout=10)
        assert r.returncode == 0, r.stderr
    # The manager catches up. STOPPING=1 is queued after everything taskd had to say, so reading up
    # to it reads all of it, in order: the datagrams the socket held (the kernel queues one past
    # net.unix.max_dgram_qlen), the one taskd was blocked sending, then its backlog coalesced to the
    # latest status, which tells the truth.
    d.proc.send_signal(signal.SIGTERM)
    caught_up = receive_notifications(listener, "STOPPING=1")
    held = int(Path("/proc/sys/net/unix/max_dgram_qlen").read_text()) + 1
    changes, stopping = caught_up[:-1], caught_up[-1]
    assert stopping.startswith("STOPPING=1"), caught_up
    assert all(m.startswith("STATUS=") and "\n" not in m for m in changes), caught_up
    assert len(changes) == held + 2, (held, caught_up)  # taskd did block, and its backlog is one status
    assert changes[-1] == "STATUS=Idle", caught_up
    assert d.proc.wait(timeout=10) == 0


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate is not installed")
def test_socket_activation_serves_a_taskctl_wake(daemon_factory, tmp_path):
    d = daemon_factory({"hello.task": task("/bin/echo activated")},
                       wrapper=["systemd-socket-activate", "-l", str(tmp_path / "activated.sock")])
    d.socket = str(tmp_path / "activated.sock")
    d.argv = [a if not a.endswith("taskd.sock") else "/nonexistent/unused.sock" for a in d.argv]
    d.start(wait=False)
    wait_for(lambda: os.path.exists(d.socket), what="the activator's socket")
    r = d.taskctl("wake", "hello", "--wait")
    assert r.returncode == 0 and "completed" in r.stdout, (r.stdout, r.stderr, d.stderr_text())
    # The daemon names the socket it was given, not its --socket option.
    assert f"--socket {d.socket} wake hello" in d.stderr_text()
    assert not os.path.exists("/nonexistent/unused.sock")
    if IS_ROOT:
        ready = journal(MESSAGE_ID="ec6ef32d746e48259e4b7695a2f415e5", _PID=str(d.proc.pid))
        assert ready and "(socket-activated)" in ready[0]["MESSAGE"] and d.socket in ready[0]["MESSAGE"]


def test_check_config_reports_every_error_with_file_line_and_exits_1(tmp_path):
    config = tmp_path / "config"
    (config / "tasks.d").mkdir(parents=True)
    (config / "tasks.d" / "good.task").write_text("[Exec]\nExecStart=/bin/true\n")
    (config / "tasks.d" / "bad.task").write_text("[Task]\nRuntimeBudgetSec=soon\n[Exec]\nExecStart=/bin/true\nKillSignal=SIGNOPE\n")
    r = subprocess.run([str(TASKD), "--check-config", "--config", str(config)], capture_output=True, text=True)
    assert r.returncode == 1
    bad = config / "tasks.d" / "bad.task"
    assert f"{bad}:2: error: RuntimeBudgetSec=: invalid time span 'soon'" in r.stderr
    assert f"{bad}:5: error: KillSignal=: unknown signal 'SIGNOPE'" in r.stderr
    ok = subprocess.run([str(TASKD), "--check-config", "--config", str(ROOT / "config")], capture_output=True, text=True)
    assert ok.returncode == 0 and "appRefresh:appRefresh" in ok.stdout, ok.stderr


def test_a_config_folder_that_does_not_exist_is_an_error(tmp_path):
    missing = tmp_path / "nope"
    r = subprocess.run([str(TASKD), "--check-config", "--config", str(missing)], capture_output=True, text=True)
    assert r.returncode == 1 and f"{missing}:0: error: no such directory" in r.stderr, r.stderr
    assert "has errors" in r.stdout and "is valid" not in r.stdout
    run = subprocess.run([str(TASKD), "--config", str(missing), "--socket", str(tmp_path / "s"), "--state-dir",
                          str(tmp_path / "state")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and f"taskd: {missing}:0: error: no such directory" in run.stderr, run.stderr


@needs_journal
def test_an_app_daemon_reports_its_own_name_and_version(daemon_factory):
    v = subprocess.run([str(WEATHERD), "--version"], capture_output=True, text=True)
    assert re.fullmatch(r"weatherd 1\.0\.0 \(taskd \d+\.\d+\.\d+\)\n", v.stdout), v.stdout
    d = daemon_factory({}, binary=WEATHERD).start()
    info = d.call("org.varlink.service.GetInfo")[0]["parameters"]
    assert (info["product"], info["version"]) == ("weatherd", "1.0.0")
    ready = wait_for(lambda: journal(MESSAGE_ID="ec6ef32d746e48259e4b7695a2f415e5", _PID=str(d.proc.pid)),
                     what="the ready entry")
    assert ready[0]["SYSLOG_IDENTIFIER"] == "weatherd" and ready[0]["MESSAGE"].startswith("weatherd ready: ")


def test_a_broken_task_file_does_not_stop_the_daemon(daemon_factory):
    d = daemon_factory({"good.task": task("/bin/true"), "bad.task": "[Task]\nKind=a b\n"}).start()
    assert d.taskctl("wake", "good", "--wait").returncode == 0
    assert "bad.task:2: error: Kind=" in d.stderr_text() or journal(MESSAGE_ID="4f1b5a2c3e6945d9bdb4f3bcc213e7a3")


def test_command_line_help_version_and_errors():
    h = subprocess.run([str(TASKD), "--help"], capture_output=True, text=True)
    assert h.returncode == 0 and "--check-config" in h.stdout and "--state-dir" in h.stdout
    assert subprocess.run([str(TASKD), "--version"], capture_output=True, text=True).stdout.startswith("taskd ")
    bad = subprocess.run([str(TASKD), "--frobnicate"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option '--frobnicate'" in bad.stderr


@pytest.mark.skipif(not IS_ROOT, reason="needs root for a mount namespace without a journal")
def test_without_journald_events_go_to_stderr_as_text(tmp_path):
    config = tmp_path / "config"
    (config / "tasks.d").mkdir(parents=True)
    (config / "tasks.d" / "hello.task").write_text(task("/bin/echo hello-from-handler"))
    sock = tmp_path / "t.sock"
    script = (f"mount -t tmpfs tmpfs /run/systemd/journal && exec {TASKD} --config {config} "
              f"--state-dir {tmp_path}/state --socket {sock}")
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(sock.exists, what="socket")
        r = subprocess.run([str(TASKCTL), "--socket", str(sock), "wake", "hello", "--wait"], capture_output=True, text=True)
        assert r.returncode == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=10)[0]
    assert "taskd: taskd ready: 1 task(s)" in out
    assert "taskd: hello: run " in out and " started (trigger wake, budget 30s)" in out
    assert "]: hello-from-handler" in out
    assert " completed in " in out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_units_pass_systemd_analyze_verify_silently(tmp_path):
    service = (ROOT / "systemd" / "taskd.service").read_text().replace("/usr/local/bin/taskd", str(TASKD))
    service = service.replace("/usr/local/bin/taskctl", str(TASKCTL))
    (tmp_path / "taskd.service").write_text(service)
    shutil.copy(ROOT / "systemd" / "taskd.socket", tmp_path / "taskd.socket")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "taskd.socket"), str(tmp_path / "taskd.service")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr


def test_watchdog_status_reload_and_extend_timeout_reach_a_notify_socket(daemon_factory, tmp_path):
    path = tmp_path / "notify.sock"
    listener = notify_listener(path)
    d = daemon_factory({"slow.task": task("/bin/sh -c 'trap \"sleep 0.3; exit 0\" TERM; sleep 30 & wait'",
                                          grace="2s")})
    d.env["NOTIFY_SOCKET"] = str(path)
    d.env["WATCHDOG_USEC"] = "400000"  # as systemd passes WatchdogSec=400ms
    d.start(wait=False)
    receive_notifications(listener, "READY=1")
    # Petted from the scheduler's loop at half the interval, over and over.
    pets = [m for m in receive_notifications(listener, "WATCHDOG=1") if "WATCHDOG=1" in m]
    pets += [m for m in receive_notifications(listener, "WATCHDOG=1") if "WATCHDOG=1" in m]
    assert len(pets) >= 2
    # STATUS= follows the runs.
    run = json.loads(d.taskctl("wake", "slow", "--json").stdout)[0]
    assert run["state"] == "running"
    assert any("STATUS=1 run(s) active" in m for m in receive_notifications(listener, "run(s) active"))
    # RELOADING=1 (with MONOTONIC_USEC, as Type=notify-reload wants) then READY=1.
    assert d.taskctl("reload").returncode == 0
    around = receive_notifications(listener, "READY=1")
    reloading = [i for i, m in enumerate(around) if "RELOADING=1" in m]
    ready = [i for i, m in enumerate(around) if "READY=1" in m]
    assert reloading and ready and reloading[0] < ready[-1]
    assert any("MONOTONIC_USEC=" in around[i] for i in reloading)
    # Stop while the run traps SIGTERM: STOPPING=1, then more time asked for the drain.
    d.proc.send_signal(signal.SIGTERM)
    stopping = receive_notifications(listener, "EXTEND_TIMEOUT_USEC=")
    assert any("STOPPING=1" in m for m in stopping)
    extend = [m for m in stopping if "EXTEND_TIMEOUT_USEC=" in m][0]
    assert int(extend.split("EXTEND_TIMEOUT_USEC=")[1].split()[0]) >= 2_000_000
    assert d.proc.wait(timeout=10) == 0


def pool_threads(pid):
    """Names of the process's libdispatch worker threads of a non-overcommit root queue (Swift's
    global executor runs on them): "com.apple.root.default-qos" and its kin, cut to 15 characters."""
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            continue
        if name.endswith("-qos"):
            names.append(name)
    return names


def test_a_daemon_of_commands_never_starts_a_swift_pool_thread(daemon_factory, tmp_path):
    # The first such thread arms libdispatch's once-a-second pool monitor, which then wakes an idle
    # taskd forever. taskd's own code runs on its event loop: wakes, waits, cancels, reloads, the
    # watchdog, signals and the journal leave that pool unused while every handler is a command.
    path = tmp_path / "notify.sock"
    listener = notify_listener(path)
    d = daemon_factory({"hello.task": task("/bin/true"),
                        "slow.task": task("/bin/sleep 30", extra="[Timer]\nOnStartupSec=200ms")})
    d.env["NOTIFY_SOCKET"] = str(path)
    d.env["WATCHDOG_USEC"] = "100000"
    d.start(wait=False)
    receive_notifications(listener, "READY=1")
    wait_for(d.accepts, what="the socket")
    assert d.taskctl("wake", "hello", "--wait").returncode == 0
    wait_for(lambda: "running" in d.taskctl("status", "slow").stdout, what="the timer's run")
    assert d.taskctl("cancel", "slow").returncode == 0
    assert d.taskctl("list").returncode == 0 and d.taskctl("history", "hello").returncode == 0
    assert d.taskctl("reload").returncode == 0
    d.proc.send_signal(signal.SIGHUP)
    with VarlinkSocket(d.socket) as v:
        v.send_raw(b"{not json\0")
        assert v.read_reply()["error"]
    assert any("WATCHDOG=1" in m for m in receive_notifications(listener, "WATCHDOG=1"))
    assert pool_threads(d.proc.pid) == []
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=10) == 0


def test_a_swift_handler_that_returns_at_once_runs_on_taskds_thread_not_the_swift_pool(daemon_factory):
    # A handler's first slice runs on the event loop's thread, once the turn that started it is
    # done: a closure that never suspends leaves the pool unused (and taskd idle at 0 wake-ups).
    d = daemon_factory({}, binary=FAULTS).start()
    for _ in range(5):
        assert d.taskctl("wake", "fine", "--wait").returncode == 0
    assert d.taskctl("wake", "thrower", "--wait").returncode == 1
    assert pool_threads(d.proc.pid) == []
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=10) == 0


def test_a_swift_handler_that_suspends_goes_on_in_the_swift_pool_and_the_watchdog_checks_it(daemon_factory, tmp_path):
    # The other side of the tests above, and proof their check can fail: after a suspension
    # (`Task.sleep` here) a closure resumes on Swift's global executor, as any task would, which
    # starts a pool thread. With Swift handlers, each watchdog pet makes a round trip through that
    # pool (a wedged pool stops the pets).
    path = tmp_path / "notify.sock"
    listener = notify_listener(path)
    d = daemon_factory({}, binary=WEATHERD)
    d.env["NOTIFY_SOCKET"] = str(path)
    d.env["WATCHDOG_USEC"] = "100000"
    d.start(wait=False)
    receive_notifications(listener, "READY=1")
    wait_for(d.accepts, what="the socket")
    r = d.taskctl("wake", "WEATHER_DATA", "--payload", '{"city": "Oslo", "steps": 1}', "--wait")
    assert r.returncode == 0, r.stderr
    assert pool_threads(d.proc.pid) != []
    for _ in range(3):
        assert any("WATCHDOG=1" in m for m in receive_notifications(listener, "WATCHDOG=1"))


def test_the_readme_first_command_serves_the_example_config(tmp_path):
    """scripts/run (the README's first command): builds, starts on config/, and the taskctl its hint
    names wakes the example task; SIGINT stops it cleanly."""
    sock, state = tmp_path / "t.sock", tmp_path / "state"
    proc = subprocess.Popen([str(ROOT / "scripts" / "run"), "--socket", str(sock), "--state-dir", str(state)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        seen = []
        for line in proc.stdout:   # swift run may rebuild first: no deadline but the test's own
            seen.append(line)
            if "; try:" in line:
                break
        hint = next(proc.stdout).split()
        assert hint[1:] == ["--socket", str(sock), "wake", "appRefresh", "--wait"], seen[-3:]
        assert Path(hint[0]).name == "taskctl" and os.access(hint[0], os.X_OK), hint
        r = subprocess.run(hint, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "refresh by wake" in (state / "appRefresh.log").read_text()
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0, rest
