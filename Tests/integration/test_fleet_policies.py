"""The fleet's other policies across real taskd instances and a real etcd cluster (fleet_bench.py):
Fleet=max:N, FleetUnavailable= with etcd stopped, and TLS with client certificates and an etcd role.
"""
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import journal, wait_for
from fleet_bench import (  # noqa: F401 (etcd: a fixture)
    ETCD, ETCDCTL, conf, etcd, fleet_task, free_port, instances, job, needs_etcd, read_log)

# Each test starts a 3-member etcd cluster and waits on its leases (5-25 s): left to the full run;
# the quick lane has the fleet's rules on the manual clock (TaskdDaemonTests, ManualFleet).
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@needs_etcd
def test_fleet_max_2_never_runs_on_more_than_2_hosts_at_once(daemon_factory, etcd, tmp_path):
    # Four instances fire the task every second, runs of random length: at most 2 run at a time
    # across the fleet, the others wait their turn; and 2 do run at once.
    hosts = instances(daemon_factory, etcd, tmp_path, {"roll.task": fleet_task(job(tmp_path, "random"), "max:2")},
                      lease=6)
    wait_for(lambda: sum(w == "end" for w, *_ in read_log(tmp_path)) >= 16, timeout=90, what="16 runs to end")
    for d in hosts:
        d.stop()
    events = []
    opened = {}
    for what, slot, token, host, ns in read_log(tmp_path):
        if what == "start":
            opened[(host, token)] = ns
            events.append((ns, 1))
        elif what in ("end", "cancelled") and (host, token) in opened:
            # A run the final stops cancel gives its place back as it exits, to a host not stopped yet.
            events.append((ns, -1))
    running = most = 0
    for _, change in sorted(events):
        running += change
        most = max(most, running)
    # A host that lost its lease (fence-lost) lets its places go while its run is being cancelled:
    # then, and only then, a third may start.
    fenced = journal(MESSAGE_ID="bf7ac27c33124f79850ed56bd18e2d12")
    assert most == 2 or (most == 3 and fenced), f"at most {most} ran at once; fence-lost: {fenced}"
    assert len(opened) >= 16 and len({host for host, _ in opened}) >= 3, opened


@needs_etcd
@pytest.mark.parametrize("policy", ["skip", "local"])
def test_fleet_unavailable_policies(daemon_factory, etcd, tmp_path, policy):
    # etcd stopped entirely: FleetUnavailable=skip runs nothing (cancelled, fleet-unavailable),
    # FleetUnavailable=local runs every slot here, unclaimed; both say so in the journal.
    d = daemon_factory({"tick.task": fleet_task(job(tmp_path, 0.1), extra=f"FleetUnavailable={policy}\n")},
                       daemon_conf=conf(etcd, "h0")).start()
    wait_for(lambda: len(read_log(tmp_path)) >= 2, timeout=30, what="a claimed run")
    assert all(token > 0 for _, _, token, _, _ in read_log(tmp_path))
    etcd.stop_all()
    down = time.time()
    # A claim tries every member (about 2 s each when none answers), then claims fail at once.
    after = lambda: [(what, slot, token) for what, slot, token, _, _ in read_log(tmp_path) if slot / 1e6 > down + 1]
    if policy == "skip":
        skipped = lambda: journal(TASK="tick", TASK_CANCEL_REASON="fleet-unavailable")
        wait_for(lambda: len(skipped()) >= 5, timeout=40, what="5 runs skipped")
        d.stop()
        assert after() == [], f"runs without a claim: {after()}"
        assert all("FleetUnavailable=skip" in e["MESSAGE"] for e in journal(MESSAGE_ID="2efc36c882774b548f294bb05c45459f",
                                                                            TASK="tick"))
    else:
        wait_for(lambda: sum(what == "end" for what, _, _ in after()) >= 5, timeout=40, what="5 runs here")
        d.stop()
        assert all(token == 0 for _, _, token in after()), after()
    assert journal(MESSAGE_ID="2efc36c882774b548f294bb05c45459f", TASKD_FLEET_REACHABLE="0"), "etcd's loss is journaled"


@needs_etcd
def test_fleet_unavailable_wait_runs_once_etcd_answers(daemon_factory, etcd, tmp_path):
    # etcd stopped entirely: FleetUnavailable=wait keeps the run waiting (why and status say so)
    # and starts it, claimed, once etcd answers again; with MaxDeferSec= it gives up.
    unavailable = "2efc36c882774b548f294bb05c45459f"
    d = daemon_factory({"tick.task": fleet_task(job(tmp_path, 0.1), extra="FleetUnavailable=wait\n"),
                        "capped.task": fleet_task("/bin/true", extra="FleetUnavailable=wait\nMaxDeferSec=3\n")},
                       daemon_conf=conf(etcd, "h0")).start()
    wait_for(lambda: len(read_log(tmp_path)) >= 2, timeout=30, what="a claimed run")
    etcd.stop_all()
    waits = wait_for(lambda: [e for e in journal(MESSAGE_ID=unavailable, TASK="tick") if "it waits for etcd" in e["MESSAGE"]],
                     timeout=30, what="a run of tick to wait for etcd")
    waiting = waits[0]["TASK_RUN_ID"]
    why = d.taskctl("why", "tick").stdout
    assert f"run {waiting[:8]} waits for etcd to claim its slot" in why and "(FleetUnavailable=wait)" in why, why
    assert "waiting: etcd, to claim its slot" in d.taskctl("status", "tick").stdout
    wait_for(lambda: journal(TASK="capped", TASK_CANCEL_REASON="fleet-unavailable"), timeout=30,
             what="the capped run to give up")
    assert any("gave up waiting" in e["MESSAGE"] for e in journal(MESSAGE_ID=unavailable, TASK="capped"))
    # The waiting run had not started: nothing ran unclaimed while etcd was down.
    assert journal(TASK_RUN_ID=waiting, MESSAGE_ID="8605484d98ae4477a29493037f9e10ec") == []
    for name in etcd.names:
        etcd.start(name)
    end = wait_for(lambda: journal(TASK_RUN_ID=waiting, TASK_OUTCOME="completed"), timeout=40,
                   what="the waiting run to run once etcd answered")
    d.stop()
    assert int(end[0]["TASK_FENCE_TOKEN"]) > 0 and end[0]["TASK_FLEET_HOST"] == "h0", end[0]
    assert [e for e in read_log(tmp_path) if e[2] == 0] == [], "a run ran unclaimed"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def certificates(folder: Path):
    """A CA, etcd's server certificate for 127.0.0.1, and client certificates whose CN is the etcd
    user: root (to set up the roles), taskd and intruder."""
    folder.mkdir()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=test-ca", "-days", "2", cwd=folder)
    for name, extensions in [("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"),
                             ("root", "extendedKeyUsage=clientAuth\n"), ("taskd", "extendedKeyUsage=clientAuth\n"),
                             ("intruder", "extendedKeyUsage=clientAuth\n")]:
        (folder / f"{name}.ext").write_text(extensions)
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=folder)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=folder)
    for key in folder.glob("*.key"):
        key.chmod(0o644)  # read by taskd, which runs as this test's user
    return folder


@needs_etcd
def test_fleet_over_tls_with_client_certificates_and_an_etcd_role(daemon_factory, tmp_path):
    # The documented deployment: etcd over TLS with client certificate authentication, and etcd's
    # roles: the certificate's CN is the etcd user, whose role may read and write /taskd/NAME/
    # only. taskd claims through it; a host whose user has no role is refused, and says so.
    pki = certificates(tmp_path / "pki")
    port, peer = free_port(), free_port()
    etcd = subprocess.Popen(
        [ETCD, "--name", "tls", "--data-dir", str(tmp_path / "etcd"),
         "--listen-client-urls", f"https://127.0.0.1:{port}", "--advertise-client-urls", f"https://127.0.0.1:{port}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"tls=http://127.0.0.1:{peer}", "--cert-file", str(pki / "server.pem"),
         "--key-file", str(pki / "server.key"), "--trusted-ca-file", str(pki / "ca.pem"), "--client-cert-auth"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def ctl(user, *args):
            return subprocess.run(
                [ETCDCTL, f"--endpoints=https://127.0.0.1:{port}", f"--cacert={pki / 'ca.pem'}",
                 f"--cert={pki / (user + '.pem')}", f"--key={pki / (user + '.key')}", *args],
                capture_output=True, text=True, env={**os.environ, "ETCDCTL_API": "3"}, timeout=30)
        wait_for(lambda: ctl("root", "endpoint", "health").returncode == 0, timeout=30, what="etcd over TLS")
        for args in (["user", "add", "root", "--no-password"], ["user", "add", "taskd", "--no-password"],
                     ["user", "add", "intruder", "--no-password"], ["role", "add", "taskd-tls"],
                     ["role", "grant-permission", "taskd-tls", "--prefix=true", "readwrite", "/taskd/tls/"],
                     ["user", "grant-role", "taskd", "taskd-tls"], ["auth", "enable"]):
            done = ctl("root", *args)
            assert done.returncode == 0, (args, done.stderr)
        tls = (f"[Daemon]\nFleetEndpoints=https://127.0.0.1:{port}\nFleetName=tls\nFleetLeaseSec=4\n"
               f"FleetCACert={pki / 'ca.pem'}\n")
        tasks = {"tick.task": fleet_task(job(tmp_path, 0.1))}
        a = daemon_factory(tasks, daemon_conf=tls + f"FleetHost=a\nFleetCert={pki / 'taskd.pem'}\n"
                                                   f"FleetKey={pki / 'taskd.key'}\n").start()
        b = daemon_factory(tasks, daemon_conf=tls + f"FleetHost=b\nFleetCert={pki / 'intruder.pem'}\n"
                                                   f"FleetKey={pki / 'intruder.key'}\n").start()
        wait_for(lambda: sum(w == "end" for w, *_ in read_log(tmp_path)) >= 5, timeout=60, what="5 runs over TLS")
        a.stop()
        b.stop()
        runs = [(host, token) for what, _, token, host, _ in read_log(tmp_path) if what == "start"]
        assert {host for host, _ in runs} == {"a"} and all(token > 0 for _, token in runs), runs
        refused = [e["MESSAGE"] for e in journal(MESSAGE_ID="2efc36c882774b548f294bb05c45459f", TASK="tick")]
        assert refused and all("permission denied" in m and "FleetUnavailable=skip" in m for m in refused), refused[:3]
        keys = ctl("root", "get", "--prefix", "--keys-only", "/taskd/tls/done/processing:tick/").stdout.split()
        assert len(keys) >= 5, keys
    finally:
        etcd.kill()
        etcd.wait()
