"""Fleet=once and Fleet=max:N across real taskd instances, coordinated through a real 3-member etcd
cluster on loopback (Debian's etcd-server; taskd speaks to it through etcdctl, etcd-client).

Every instance has its own state folder, socket and FleetHost=; they share the tasks. The job each
run does appends to one log: `start SLOT TOKEN HOST NS`, then `end …`, or `cancelled …` when
taskd cancels it (SIGTERM). The checks read that log, and the instances' journals.
"""
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from conftest import VARLINK_CALL, journal, wait_for

pytestmark = pytest.mark.integration

ETCD = shutil.which("etcd")
ETCDCTL = shutil.which("etcdctl")
needs_etcd = pytest.mark.skipif(not (ETCD and ETCDCTL), reason="etcd is not installed (scripts/packages etcd-server etcd-client)")

JOB = """#!/bin/sh
# A fleet run's job: its slot, its fence token and its host, when it starts and how it ends.
log="$1"; seconds="$2"
trap 'echo "cancelled $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"; exit 1' TERM
echo "start $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"
# "random": from 0.5 to 2.5 s.
[ "$seconds" = random ] && seconds=$(od -An -N1 -tu1 /dev/urandom | awk '{ print 0.5 + $1 / 128 }')
sleep "$seconds" & wait $!
echo "end $TASKD_SCHEDULED_USEC ${TASKD_FENCE_TOKEN:-0} ${TASKD_FLEET_HOST:--} $(date +%s%N)" >> "$log"
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdCluster:
    """Three etcd members on loopback, each a process the test can kill and start again."""

    def __init__(self, folder: Path, size=3):
        self.names = [f"m{i}" for i in range(size)]
        self.procs = {}
        # A port found free may be taken before etcd binds it (an outgoing connection's): a
        # member that exits at once is started again, on new ports, with its cluster.
        for attempt in range(3):
            self.folder = folder / f"try{attempt}"
            self.folder.mkdir(parents=True)
            self.client = {n: free_port() for n in self.names}
            self.peer = {n: free_port() for n in self.names}
            self.initial = ",".join(f"{n}=http://127.0.0.1:{self.peer[n]}" for n in self.names)
            for n in self.names:
                self.start(n)
            try:
                wait_for(lambda: self.healthy() or any(p.poll() is not None for p in self.procs.values()),
                         timeout=30, what="the etcd cluster to be healthy")
            except AssertionError:
                pass
            if all(p.poll() is None for p in self.procs.values()) and self.healthy():
                return
            self.stop_all()
        logs = {n: (self.folder / f"{n}.log").read_text()[-2000:] for n in self.names}
        raise AssertionError(f"no healthy etcd cluster in 3 tries; the last one's logs: {logs}")

    @property
    def endpoints(self):
        return ",".join(f"127.0.0.1:{self.client[n]}" for n in self.names)

    def start(self, name):
        log = open(self.folder / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(
            [ETCD, "--name", name, "--data-dir", str(self.folder / name),
             "--listen-client-urls", f"http://127.0.0.1:{self.client[name]}",
             "--advertise-client-urls", f"http://127.0.0.1:{self.client[name]}",
             "--listen-peer-urls", f"http://127.0.0.1:{self.peer[name]}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer[name]}",
             "--initial-cluster", self.initial, "--initial-cluster-state", "new", "--logger", "zap",
             "--log-outputs", "stderr"],
            stdout=log, stderr=log)

    def kill(self, name):
        self.procs[name].kill()
        self.procs[name].wait()

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    def ctl(self, *args):
        return subprocess.run([ETCDCTL, "--endpoints", self.endpoints, *args], capture_output=True, text=True,
                              env={**os.environ, "ETCDCTL_API": "3"}, timeout=30)

    def healthy(self):
        return self.ctl("endpoint", "health").returncode == 0


@pytest.fixture
def etcd(tmp_path):
    cluster = EtcdCluster(tmp_path / "etcd")
    yield cluster
    cluster.stop_all()


def conf(etcd, host, lease=4, extra=""):
    return (f"[Daemon]\nFleetEndpoints={etcd.endpoints}\nFleetHost={host}\nFleetLeaseSec={lease}\n"
            f"FleetName=test\n{extra}")


def job(tmp_path, seconds):
    path = tmp_path / "job.sh"
    path.write_text(JOB)
    path.chmod(0o755)
    return f"{path} {tmp_path / 'runs.log'} {seconds}"


def fleet_task(command, fleet="once", extra=""):
    return (f"[Task]\nKind=processing\nFleet={fleet}\nRuntimeBudgetSec=60\nCancelGraceSec=5\n{extra}"
            f"[Timer]\nOnCalendar=*:*:*\n[Exec]\nExecStart={command}\n")


def read_log(tmp_path):
    """The job's lines: (what, slot µs, token, host, ns) each."""
    path = tmp_path / "runs.log"
    lines = path.read_text().split("\n") if path.exists() else []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            out.append((parts[0], int(parts[1]), int(parts[2]) if parts[2] else 0, parts[3],
                        int(parts[4]) if len(parts) > 4 else 0))
    return out


def instances(daemon_factory, etcd, tmp_path, tasks, hosts=4, lease=4, extra=""):
    return [daemon_factory(tasks, daemon_conf=conf(etcd, f"h{i}", lease, extra)).start() for i in range(hosts)]


@needs_etcd
def test_fleet_once_runs_each_slot_on_one_host(daemon_factory, etcd, tmp_path):
    # Four instances, one calendar task every second: each slot starts exactly once, on one host,
    # with a fence token that grows slot by slot, and the end entry names the host and token.
    # TASKD_FLEET_SLOTS=300 makes it the full run (5 min); CI runs 20 slots.
    target = int(os.environ.get("TASKD_FLEET_SLOTS", "20"))
    hosts = instances(daemon_factory, etcd, tmp_path, {"tick.task": fleet_task(job(tmp_path, 0.2))})
    first = time.time()
    wait_for(lambda: len({s for w, s, *_ in read_log(tmp_path) if w == "end"}) >= target, timeout=target * 1.5 + 30,
             what=f"{target} slots to run")
    # Each host's metrics count its claims; its history names who ran each slot.
    claims = Counter()
    for d in hosts:
        for line in d.taskctl("metrics").stdout.splitlines():
            if line.startswith("taskd_fleet_claims_total{"):
                claims[line.split('result="')[1].split('"')[0]] += int(line.split()[-1])
    assert claims["won"] >= 15 and claims["lost"] >= 3 * 15 and claims["fenced"] == 0, claims
    history = hosts[0].taskctl("history", "tick").stdout
    assert "elsewhere, on h" in history and "(fence " in history, history
    # `taskctl fleet`: the hosts, and the claims held now (a slot's run lasts 0.2 s of each second).
    def holding():
        fleet = json.loads(hosts[0].taskctl("--json", "fleet").stdout)
        return fleet if fleet["claims"] else None
    fleet = wait_for(holding, timeout=10, what="a claim held")
    assert fleet["name"] == "test" and fleet["host"] == "h0" and fleet["hosts"] == ["h0", "h1", "h2", "h3"], fleet
    claim = fleet["claims"][0]
    assert claim["task"] == "processing:tick" and claim["mode"] == "once" and claim["host"] in fleet["hosts"]
    assert claim["slotUSec"] % 1_000_000 == 0 and claim["fenceToken"] > 0, claim
    assert hosts[1].taskctl("fleet").stdout.startswith("Fleet test, this host h1; hosts: h0, h1, h2, h3")
    if VARLINK_CALL.exists():  # the reference client reads the reply against the IDL
        called = subprocess.run([str(VARLINK_CALL), hosts[0].socket, "io.taskd.Scheduler.Fleet", "{}"],
                                capture_output=True, text=True, timeout=60)
        assert called.returncode == 0 and json.loads(called.stdout)["name"] == "test", called.stderr
    # The stops give back the slot they cut short, which a host stopped later takes over: the
    # slots from then on are left out.
    stopping = time.time()
    for d in hosts:
        d.stop()
    starts = [(slot, token, host) for what, slot, token, host, _ in read_log(tmp_path)
              if what == "start" and slot / 1e6 < stopping - 1]
    counts = Counter(slot for slot, _, _ in starts)
    assert all(c == 1 for c in counts.values()), f"slots run twice: {[s for s, c in counts.items() if c > 1]}"
    slots = sorted(counts)
    inner = [s for s in slots if slots[0] < s < slots[-1]]
    missing = [s for s in range(slots[0], slots[-1], 1_000_000) if s not in counts]
    assert not missing, f"slots missed: {missing}"
    assert len(inner) >= target * 3 // 4 and slots[0] / 1e6 >= first - 2
    print(f"{len(slots)} slots, each run once, none missed; claims: {claims}")
    tokens = [token for _, token, _ in sorted(starts)]
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens), "fence tokens grow slot by slot"
    assert len({host for _, _, host in starts}) >= 2, "the slots are spread over the hosts"
    ended = journal(TASK="tick", TASK_OUTCOME="completed")
    assert ended and all(e.get("TASK_FLEET_HOST") and e.get("TASK_FENCE_TOKEN") for e in ended)
    elsewhere = journal(TASK="tick", TASK_CANCEL_REASON="elsewhere")
    assert elsewhere and all(e.get("TASK_FLEET_HOST", "").startswith("h") for e in elsewhere)


def running_host(tmp_path):
    """The host whose job runs now (started, not ended), newest first; else the latest start's."""
    open_runs = {}
    latest = None
    for what, slot, token, host, _ in read_log(tmp_path):
        if what == "start":
            open_runs[(slot, token)] = host
            latest = host
        else:
            open_runs.pop((slot, token), None)
    return next(reversed(open_runs.values()), latest) if open_runs else latest


@needs_etcd
@pytest.mark.slow
def test_fleet_once_through_faults(daemon_factory, etcd, tmp_path):
    # Slots every second across four instances while faults come one after another: SIGKILL of the
    # taskd whose run is in progress (restarted a second later), SIGKILL of an etcd member (started
    # again 3 s later), SIGSTOP of the taskd whose run is in progress for longer than the lease.
    # A slot runs twice only under a newer fence token, taken over from the host the fault hit;
    # at most one slot is missed per fault; a takeover comes within the lease plus 2 s.
    each = int(os.environ.get("TASKD_FLEET_FAULTS", "10"))
    lease = 6
    hosts = instances(daemon_factory, etcd, tmp_path, {"tick.task": fleet_task(job(tmp_path, 1))}, lease=lease)
    by_name = {f"h{i}": d for i, d in enumerate(hosts)}
    rng = random.Random(46)
    kinds = ["kill-taskd", "kill-etcd", "stop-taskd"] * each
    rng.shuffle(kinds)
    wait_for(lambda: len(read_log(tmp_path)) >= 6, timeout=30, what="the first runs")
    faults = []  # (kind, when (s), host)
    for kind in kinds:
        time.sleep(3)
        host = running_host(tmp_path)
        when = time.time()
        if kind == "kill-taskd":
            by_name[host].proc.kill()
            by_name[host].proc.wait()
            time.sleep(1)
            by_name[host].start()
        elif kind == "kill-etcd":
            member = rng.choice(etcd.names)
            host = member
            etcd.kill(member)
            time.sleep(3)
            etcd.start(member)
        else:
            by_name[host].proc.send_signal(signal.SIGSTOP)
            time.sleep(lease + 1.5)
            by_name[host].proc.send_signal(signal.SIGCONT)
        faults.append((kind, when, host))
        with open(tmp_path / "faults.log", "a") as log:  # for a failure's post-mortem
            log.write(f"{kind} {when:.3f} {host}\n")
        time.sleep(2)
    # At least 300 slots in all (fewer in a shortened run: TASKD_FLEET_FAULTS below 10).
    target = 300 if each >= 10 else 9 * len(kinds)
    wait_for(lambda: len({s for w, s, *_ in read_log(tmp_path) if w == "start"}) >= target, timeout=120,
             what=f"{target} slots")
    time.sleep(lease + 3)
    # The stops below give back the slots they cut short, which the hosts stopped later take over:
    # those are not faults, and are left out.
    stopping = time.time()
    for d in hosts:
        d.stop()
    runs = read_log(tmp_path)
    starts = defaultdict(list)
    for what, slot, token, host, ns in runs:
        if what == "start" and slot / 1e6 < stopping - 2:
            starts[slot].append((token, host, ns / 1e9))
    slots = sorted(starts)
    assert len(slots) >= target, f"{len(slots)} slots ran"
    missing = [s for s in range(slots[0], slots[-1], 1_000_000) if s not in starts]
    # Each missed slot is put down to the last fault before it: at most one per fault.
    blamed = Counter(max((f for f in faults if f[1] - 1 <= s / 1e6), key=lambda f: f[1], default=None)
                     for s in missing)
    assert None not in blamed and max(blamed.values(), default=0) <= 1, f"slots missed: {missing}, by fault: {blamed}"
    hit = {kind: 0 for kind in ("kill-taskd", "stop-taskd", "fenced")}
    cancelled = {(slot, token) for what, slot, token, _, _ in runs if what == "cancelled"}
    for slot, tries in starts.items():
        if len(tries) == 1:
            continue
        tries.sort()
        for (old_token, old_host, old_at), (token, host, at) in zip(tries, tries[1:]):
            assert token > old_token, f"slot {slot} ran again under an older token: {tries}"
            fault = [f for f in faults if f[2] == old_host and f[0] != "kill-etcd" and old_at - 3 <= f[1] <= at]
            if fault:
                assert at - fault[-1][1] <= lease + 2, f"slot {slot} was taken over {at - fault[-1][1]:.1f} s after {fault[-1]}"
                hit[fault[-1][0]] += 1
            else:
                # The older run's host lost its lease by itself (an etcd member's loss stalled its
                # renewals): it cancelled the run (fence-lost) before another host took the slot.
                assert (slot, old_token) in cancelled, f"slot {slot} ran twice, the first neither hit nor cancelled: {tries}"
                hit["fenced"] += 1
    # A paused holder finds its claims lost as it resumes, and says so.
    fenced = journal(MESSAGE_ID="bf7ac27c33124f79850ed56bd18e2d12")
    assert len(fenced) >= each, f"{len(fenced)} fence-lost entries for {each} pauses"
    takeovers = journal(MESSAGE_ID="24c6b926b28b42fea04c563bfdabd1c1")
    print(f"{len(slots)} slots, {len(missing)} missed, {sum(len(t) > 1 for t in starts.values())} run twice "
          f"(taken over: {hit}), {len(fenced)} fence-lost, {len(takeovers)} takeovers, "
          f"faults: {Counter(k for k, _, _ in faults)}")
    assert takeovers, "slots were taken over"


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


@needs_etcd
def test_fleet_catch_up_runs_a_missed_slot_only_if_no_host_ran_it(daemon_factory, etcd, tmp_path):
    # Persistent=yes across the fleet: a host back from downtime catches up the slot it missed
    # only if no host ran it; a slot every host missed is caught up once, by the first one back.
    task = fleet_task(job(tmp_path, 0.1)).replace("OnCalendar=*:*:*", "OnCalendar=*:*:0/10\nPersistent=yes")
    h0, h1 = instances(daemon_factory, etcd, tmp_path, {"tick.task": task}, hosts=2)
    wait_for(lambda: [e for e in read_log(tmp_path) if e[0] == "end"], timeout=30, what="a first slot run")
    h1.stop()
    down = time.time()
    wait_for(lambda: [e for e in read_log(tmp_path) if e[1] / 1e6 > down], timeout=30, what="a slot run by h0 alone")
    h1.start()
    lost = wait_for(lambda: journal(TASK_TRIGGER="catchup", TASK_OUTCOME="cancelled"), timeout=30,
                    what="h1's catch-up to end")
    assert lost[0]["TASK_CANCEL_REASON"] == "elsewhere" and lost[0]["TASK_FLEET_HOST"] == "h0", lost[0]

    h0.stop()
    h1.stop()
    both_down = time.time()
    # A slot passes with neither host up; h1 comes back first and catches it up, then h0 does not.
    time.sleep(10 - both_down % 10 + 1)
    missed = int(time.time() // 10 * 10)
    h1.start()
    ran = wait_for(lambda: [e for e in read_log(tmp_path) if e[0] == "end" and e[1] == missed * 1_000_000],
                   timeout=30, what="the slot every host missed to be caught up")
    assert ran[0][3] == "h1" and ran[0][2] > 0, ran
    h0.start()
    elsewhere = lambda: [e for e in journal(TASK_TRIGGER="catchup", TASK_CANCEL_REASON="elsewhere")
                         if e.get("TASK_FLEET_HOST") == "h1"]
    wait_for(elsewhere, timeout=30, what="h0's catch-up of that slot to find it ran on h1")
    h0.stop()
    h1.stop()
    # A run a stop cut short gives its slot back, to be taken over under a newer token: the only
    # way a slot starts twice.
    log = read_log(tmp_path)
    assert max(Counter(slot for what, slot, _, _, _ in log if what == "end").values()) == 1, log
    for slot, n in Counter(slot for what, slot, _, _, _ in log if what == "start").items():
        tokens = [token for what, s, token, _, _ in log if s == slot and what == "start"]
        cut = [token for what, s, token, _, _ in log if s == slot and what == "cancelled"]
        assert n == 1 or (len(cut) == n - 1 and max(cut) < max(tokens)), log


@needs_etcd
def test_fleet_a_run_taken_over_after_a_crash_is_cancelled_before_its_claim_lapses(daemon_factory, etcd, tmp_path):
    # RunKeeper=yes keeps a run going while taskd is down; its claim hung on the lease of the taskd
    # that died. The next taskd cannot renew that lease, so it cancels the run (fence-lost) before
    # another host may take the slot over, and the slot then runs once more, under a newer token.
    hosts = instances(daemon_factory, etcd, tmp_path, {"tick.task": fleet_task(job(tmp_path, 8))}, hosts=2,
                      lease=4, extra="RunKeeper=yes\n")
    first = wait_for(lambda: [e for e in read_log(tmp_path) if e[0] == "start"], timeout=30, what="a run")[0]
    holder = hosts[int(first[3][1:])]
    holder.proc.kill()
    holder.proc.wait()
    holder.start()
    cut = wait_for(lambda: [e for e in read_log(tmp_path) if e[:3] == ("cancelled", first[1], first[2])], timeout=30,
                   what="the kept run to be cancelled by the next taskd")
    fenced = wait_for(lambda: [e for e in journal(MESSAGE_ID="bf7ac27c33124f79850ed56bd18e2d12")
                               if "taken over from the previous taskd" in e["MESSAGE"]], timeout=10,
                      what="the fence-lost entry")
    assert fenced[0]["TASKD_FLEET_FENCE_LOST"] == "1"
    again = wait_for(lambda: [e for e in read_log(tmp_path) if e[0] == "start" and e[1] == first[1] and e[2] > first[2]],
                     timeout=40, what="the slot taken over under a newer token")
    for d in hosts:
        d.stop()
    assert again[0][4] > cut[0][4], "taken over only once the kept run was cancelled"


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


@needs_etcd
def test_fleet_a_slot_cut_short_by_a_stop_is_taken_over(daemon_factory, etcd, tmp_path):
    # The holder is stopped (SIGTERM) while it runs a slot: the run is cancelled (shutdown), the
    # slot is given back, not marked done, and a host that lost it runs it, under a newer token.
    hosts = instances(daemon_factory, etcd, tmp_path, {"tick.task": fleet_task(job(tmp_path, 4))}, hosts=2, lease=6)
    wait_for(lambda: running_host(tmp_path), timeout=30, what="a run")
    holder = running_host(tmp_path)
    slot = [s for w, s, _, h, _ in read_log(tmp_path) if w == "start" and h == holder][-1]
    stopped = time.time()
    hosts[int(holder[1:])].stop()
    wait_for(lambda: [h for w, s, _, h, _ in read_log(tmp_path) if w == "start" and s == slot and h != holder],
             timeout=15, what="the slot taken over")
    for d in hosts:
        d.stop()
    runs = [(what, token, host, ns) for what, s, token, host, ns in read_log(tmp_path) if s == slot]
    starts = [r for r in runs if r[0] == "start"]
    assert len(starts) == 2 and starts[1][1] > starts[0][1], runs
    assert ("cancelled", starts[0][1], holder) in [r[:3] for r in runs], "the holder's run was cancelled by the stop"
    assert starts[1][3] / 1e9 - stopped < 3, "taken over at once: the claim was given back, not left to expire"
    assert journal(MESSAGE_ID="24c6b926b28b42fea04c563bfdabd1c1"), "the takeover is journaled"
