"""taskd's benchmark: every scenario of issue 6 beside its floor (bench/floor.c, measured in the same
run) and, where the same job exists, APScheduler 3.x. Run by bench/run, which builds everything.

Prints a table and writes JSON (--json PATH). --smoke runs every scenario with a few samples, to
prove the benchmark works (CI); its figures mean nothing. Times are medians and p99s of samples;
ratios are taskd's median over the floor's median from this very run.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_left
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Bench:
    def __init__(self, args):
        self.smoke = args.smoke
        self.keeper = args.keeper
        self.release = Path(args.build)
        self.floor = str(Path(args.floor).resolve())
        self.peer_python = args.peer_python
        self.tmp = Path(tempfile.mkdtemp(prefix="taskd-bench-"))
        self.processes = []
        self.results = []

    def n(self, full, smoke):
        return smoke if self.smoke else full

    # ---- processes ------------------------------------------------------------------------------

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **kw)
        self.processes.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def cleanup(self):
        for p in self.processes:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def daemon(self, name, tasks, binary="taskd-bench", env=None, conf="[Daemon]\nMaxConcurrentRuns=64\n",
               cgroup=None):
        """A taskd (or taskd-bench) on a fresh config and state folder, started in `cgroup` if given;
        returns (process, socket, ready s)."""
        base = self.tmp / name
        (base / "config" / "tasks.d").mkdir(parents=True)
        (base / "config" / "taskd.conf").write_text(conf + ("RunKeeper=yes\n" if self.keeper else ""))
        for file, text in tasks.items():
            (base / "config" / "tasks.d" / file).write_text(text)
        sock = str(base / "taskd.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(base / "notify"))
        notify.settimeout(60)
        e = dict(os.environ, NOTIFY_SOCKET=str(base / "notify"), **(env or {}))
        e.pop("WATCHDOG_USEC", None)
        log = open(base / "stderr.log", "wb")
        t0 = time.monotonic()
        enter = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup] if cgroup else []
        p = self.spawn(enter + [str(self.release / binary), "--config", str(base / "config"), "--state-dir",
                                str(base / "state"), "--socket", sock], env=e, stdout=log, stderr=log)
        while True:
            msg = notify.recv(4096).decode()
            if "READY=1" in msg:
                break
        ready = time.monotonic() - t0
        notify.close()
        return p, sock, ready

    @staticmethod
    def scratch_cgroup():
        """A cgroup v2 folder below this process's own, where one can be made (root, a writable
        hierarchy); None elsewhere."""
        if os.geteuid() != 0:
            return None
        try:
            own = next(l[3:] for l in Path("/proc/self/cgroup").read_text().splitlines() if l.startswith("0::"))
            mount = next(l.split()[4] for l in Path("/proc/self/mountinfo").read_text().splitlines()
                         if " - cgroup2 " in l)
            path = Path(mount + own.rstrip("/")) / f"taskd-bench-{os.getpid()}"
            path.mkdir()
            return path
        except (StopIteration, OSError):
            return None

    def command_in_cgroup(self, tasks, fifo, rounds, n, req, server_sock):
        """Wake → command's main starts, each run in a cgroup of its own (RunCgroups=yes: mkdir, the
        child's move before exec, the wait for it to empty, rmdir), against the same spawn floor."""
        cgroup = self.scratch_cgroup()
        if cgroup is None:
            return
        p, sock, _ = self.daemon("wake-cgroup", tasks, env={"TASKD_BENCH_STAMPS": str(fifo)}, cgroup=str(cgroup),
                                 conf="[Daemon]\nMaxConcurrentRuns=64\nRunCgroups=yes\n")
        server = self.spawn([self.floor, "spawn-server", server_sock, str(fifo)])
        self.wait_socket(server_sock)
        command, spawn_floor = [], []
        for _ in range(rounds):
            command += self.lines([self.floor, "stamp-client", sock, str(n), req % "stamp", str(fifo)])
            spawn_floor += self.lines([self.floor, "stamp-client", server_sock, str(n), req % "x", str(fifo)])
        self.stop(server)
        self.stop(p)
        for leftover in sorted(cgroup.glob("**/"), key=lambda d: -len(d.parts)):
            try:
                leftover.rmdir()
            except OSError:
                pass
        self.record("wake → command's main starts, in a cgroup of its own", "µs", command, spawn_floor,
                    floor_name="C accept+posix_spawn, no cgroup", goal="p50 ≤ 1.3× floor",
                    check=lambda r: r["ratio"] <= 1.3)

    # ---- measurement helpers --------------------------------------------------------------------

    def lines(self, argv, **kw):
        out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600, **kw).stdout
        return [int(x) for x in out.split()]

    @staticmethod
    def stats(samples):
        s = sorted(samples)
        if not s:
            return None
        return {"median": statistics.median(s), "p99": s[min(len(s) - 1, int(len(s) * 0.99))], "n": len(s)}

    def record(self, scenario, unit, taskd, floor=None, peer=None, floor_name="C floor", goal="", check=None):
        row = {"scenario": scenario, "unit": unit, "taskd": self.stats(taskd) if isinstance(taskd, list) else taskd,
               "floor": self.stats(floor) if isinstance(floor, list) else floor, "floor_name": floor_name,
               "peer": self.stats(peer) if isinstance(peer, list) else peer, "goal": goal}
        t, f = row["taskd"], row["floor"]
        row["ratio"] = t["median"] / f["median"] if t and f and f["median"] else None
        # True, False, "unknown" (a peer the goal compares with was not measured), None (no goal).
        # A goal on a ratio that could not be computed (taskd gave no sample) does not hold.
        try:
            held = check(row) if check else None
        except TypeError:
            held = False
        row["holds"] = "unknown" if check and held is None else held
        self.results.append(row)
        print(self.format_row(row), flush=True)

    @staticmethod
    def against_peer(r, test):
        """test(taskd's median, the peer's median); None when no peer was measured."""
        return None if r["peer"] is None else test(r["taskd"]["median"], r["peer"]["median"])

    @staticmethod
    def all_hold(*parts):
        """False if any part fails; None (not known) if a part could not be measured; else True."""
        return False if False in parts else None if None in parts else True

    @staticmethod
    def fmt(stat, unit):
        if stat is None:
            return "—"
        scale = {"µs": 1e3, "ms": 1e6}.get(unit, 1)
        if stat.get("p99") is None or stat["n"] == 1:
            return f"{stat['median'] / scale:,.1f}"
        # Under 100 samples the p99 is the largest: say so, with the count.
        tail = f" (max of {stat['n']})" if stat["n"] < 100 else ""
        return f"{stat['median'] / scale:,.1f} / {stat['p99'] / scale:,.1f}{tail}"

    def format_row(self, r):
        ratio = f"{r['ratio']:.2f}×" if r.get("ratio") is not None else "—"
        holds = {True: "yes", False: "NO", "unknown": "not known (no peer)", None: ""}[r["holds"]]
        return (f"| {r['scenario']} | {r['unit']} | {self.fmt(r['taskd'], r['unit'])} | "
                f"{self.fmt(r['floor'], r['unit'])} ({r['floor_name']}) | {ratio} | "
                f"{self.fmt(r['peer'], r['unit'])} | {r['goal']} | {holds} |")

    # ---- scenarios ------------------------------------------------------------------------------

    def wake_latency(self):
        """Wake request → in-process Swift handler starts; → a command's main starts; taskctl wake."""
        fifo = self.tmp / "stamps"
        os.mkfifo(fifo)
        tasks = {"stamp.task": f"[Task]\nKind=appRefresh\nOverlap=queue\n[Exec]\nExecStart={self.floor} stamp {fifo}\n",
                 "reap.task": f"[Task]\nKind=processing\nRuntimeBudgetSec=60ms\nCancelGraceSec=40ms\n"
                              f"[Exec]\nExecStart={self.floor} hang\n"}
        p, sock, _ = self.daemon("wake", tasks, env={"TASKD_BENCH_STAMPS": str(fifo)})
        # Each figure and its floor (and peer) are sampled in alternating rounds, so that the
        # machine's drift over the scenario weighs on all of them alike.
        rounds = self.n(4, 1)
        n = self.n(400, 20) // rounds
        req = '{"method":"io.taskd.Scheduler.Wake","parameters":{"target":"%s"}}'
        swift, floor = [], []
        for _ in range(rounds):
            swift += self.lines([self.floor, "stamp-client", sock, str(n), req % "noop", str(fifo)])
            floor += self.lines([self.floor, "rtt", str(n)])
        # Both clients pause 5 ms between samples (floor.c, PACE_US): each request meets an idle server.
        self.record("wake → Swift handler starts", "µs", swift, floor, goal="p50 ≤ 2× floor",
                    floor_name="C connect+request+reply+close, paced as taskd's client",
                    check=lambda r: r["ratio"] <= 2)

        server_sock = str(self.tmp / "spawn.sock")
        server = self.spawn([self.floor, "spawn-server", server_sock, str(fifo)])
        self.wait_socket(server_sock)
        activate = shutil.which("systemd-socket-activate")
        act_sock = str(self.tmp / "activate.sock")
        if activate:
            act = self.spawn([activate, "--accept", "-l", act_sock, self.floor, "stamp", str(fifo)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.wait_socket(act_sock)
        command, spawn_floor, peer = [], [], ([] if activate else None)
        for _ in range(rounds):
            command += self.lines([self.floor, "stamp-client", sock, str(n), req % "stamp", str(fifo)])
            spawn_floor += self.lines([self.floor, "stamp-client", server_sock, str(n), req % "x", str(fifo)])
            if activate:
                peer += self.lines([self.floor, "stamp-client", act_sock, str(n), req % "x", str(fifo)])
        self.stop(server)
        if activate:
            self.stop(act)
        self.record("wake → command's main starts", "µs", command, spawn_floor, peer=peer,
                    floor_name="C accept+posix_spawn; peer: systemd-socket-activate --accept",
                    goal="p50 ≤ 1.3× floor, < socket-activate",
                    check=lambda r: self.all_hold(
                        r["ratio"] <= 1.3, self.against_peer(r, lambda t, p: t < p)))

        self.command_in_cgroup(tasks, fifo, rounds, n, req, server_sock)

        taskctl = str(self.release / "taskctl")
        def timed(argv):
            t0 = time.perf_counter_ns()
            subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
            return time.perf_counter_ns() - t0
        m = self.n(200, 10)
        ctl = [timed([taskctl, "--socket", sock, "wake", "quiet"]) for _ in range(m)]
        true = [timed(["/bin/true"]) for _ in range(m)]
        self.record("`taskctl wake` end to end", "ms", ctl, true, floor_name="/bin/true spawn",
                    goal="p50 ≤ 10 ms", check=lambda r: r["taskd"]["median"] <= 10e6)

        # Budget deadline → onCancel; budget end → the command's group reaped. The goal is a p99:
        # 500 samples make it the 6th-highest, where 100 made it the maximum. This host delays a
        # bare timerfd by over 1 ms in 3 to 16 samples of 1,000, which the maximum of 100 often caught.
        k = self.n(500, 5)
        cancel = []
        with os.fdopen(os.open(fifo, os.O_RDWR), "rb") as reader:
            for _ in range(k):
                subprocess.run([taskctl, "--socket", sock, "wake", "cancel", "--wait"],
                               stdout=subprocess.DEVNULL, check=False)
                ns, deadline_usec = map(int, reader.readline().split())
                cancel.append(ns - (deadline_usec - 50_000) * 1000)
        overshoot = self.lines([self.floor, "timerfd", str(k), "10"])
        self.record("budget deadline → onCancel runs", "µs", cancel, overshoot, floor_name="timerfd overshoot",
                    goal="p99 ≤ 1 ms", check=lambda r: r["taskd"]["p99"] <= 1e6)

        # The floor is the same job in C, timed over the same interval: a timerfd at the budget's
        # end, SIGKILL to the group of the same exec'd command, its pidfd. Until 2026-11-22 it was a
        # bare SIGKILL + waitpid of a forked child the moment it paused (no timer, no exec): a
        # shorter interval that the same job in C itself cannot come within 2× of (2.8–6.6× in this
        # machine's runs; now the peer column, for scale). Sampled in alternating rounds, as the
        # wakes are.
        reaped, same_job, kill = [], [], []
        m = self.n(60, 4) // rounds
        for _ in range(rounds):
            for _ in range(m):
                r = subprocess.run([taskctl, "--socket", sock, "wake", "reap", "--wait", "--json"],
                                   capture_output=True, text=True)
                run = json.loads(r.stdout)[0]
                reaped.append((run["endedUSec"] - run["deadlineUSec"]) * 1000)
            same_job += self.lines([self.floor, "deadline-reap", str(m), "60"])
            kill += self.lines([self.floor, "kill-reap", str(m)])
        self.record("budget end → command group reaped", "µs", reaped, same_job, peer=kill,
                    floor_name="the same job in C: timerfd at the budget's end, SIGKILL to the exec'd "
                               "command's group, pidfd; peer: SIGKILL + waitpid of a forked child at once",
                    goal="p50 ≤ 2× floor", check=lambda r: r["ratio"] <= 2)
        self.stop(p)

    def wait_socket(self, path):
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens at {path}")
            time.sleep(0.01)

    def timer_lateness(self):
        span = self.n(8000, 1000)
        for count in ([1, 100, 10_000] if not self.smoke else [1, 100]):
            per_task = {1: self.n(200, 20), 100: self.n(4, 1), 10_000: 1}[count]
            fifo = self.tmp / f"timer-stamps-{count}"
            os.mkfifo(fifo)
            # Dues start after taskd is ready: 1.5 s, plus start-up time for many files.
            start = time.time() + 1.5 + count / 4000
            dues = {f"t{i}": sorted(start + random.random() * span / 1000 for _ in range(per_task))
                    for i in range(count)}
            tasks = {f"{name}.task": "[Task]\nKind=processing\n[Timer]\n" + "".join(
                f"OnCalendar={datetime.fromtimestamp(d, timezone.utc):%Y-%m-%d %H:%M:%S.%f} UTC\n" for d in ds)
                for name, ds in dues.items()}
            reader_fd = os.open(fifo, os.O_RDWR)
            got = []
            reading = threading.Thread(target=self.read_stamps, args=(reader_fd, got, count * per_task), daemon=True)
            reading.start()
            p, _, ready = self.daemon(f"timers-{count}", tasks, env={"TASKD_BENCH_STAMPS": str(fifo),
                                                                       "TASKD_BENCH_TIMERS": str(count)})
            reading.join(timeout=span / 1000 + 30)
            self.stop(p)
            os.close(reader_fd)
            stamps = {}
            for name, ns in got:
                stamps.setdefault(name, []).append(ns)
            late = []
            for name, ds in dues.items():
                s = sorted(stamps.get(name, []))
                for d in ds:
                    i = bisect_left(s, int(d * 1e9))
                    if i < len(s):
                        late.append(s[i] - int(d * 1e9))
            floor = self.lines([self.floor, "timers", str(count * per_task), str(span)])
            peer = None
            if self.peer_python:
                peer = self.lines([self.peer_python, str(ROOT / "bench" / "peer_apscheduler.py"), "timers",
                                   str(count * per_task), str(span)])
            self.record(f"timer lateness, {count:,} timer(s)", "µs", late, floor, peer=peer,
                        floor_name="timerfd + heap", goal="p50 ≤ 2× floor, < APScheduler",
                        check=lambda r: self.all_hold(
                            r["ratio"] <= 2, self.against_peer(r, lambda t, p: t < p)))

    def submit_lateness(self):
        """`taskctl submit --in SPAN` one-shot commands spread over 8 s: how late each command's main
        starts after the due time its reply names."""
        count, span = self.n(40, 5), self.n(8000, 1000)
        fifo = self.tmp / "submit-stamps"
        os.mkfifo(fifo)
        reader_fd = os.open(fifo, os.O_RDWR)
        p, sock, _ = self.daemon("submit", {})
        taskctl = str(self.release / "taskctl")
        dues = []
        for offset in sorted(1.5 + random.random() * span / 1000 for _ in range(count)):
            reply = subprocess.run([taskctl, "--socket", sock, "--json", "submit", "--in", f"{offset:.6f}s", "--",
                                    self.floor, "stamp", str(fifo)], capture_output=True, text=True, check=True)
            dues.append(json.loads(reply.stdout)["nextElapseUSec"] / 1e6)
        dues.sort()
        got = []
        buffer = b""
        while len(got) < count:
            buffer += os.read(reader_fd, 65536)
            *complete, buffer = buffer.split(b"\n")
            got += [int(line) for line in complete if line]
        self.stop(p)
        os.close(reader_fd)
        late = [stamp - int(due * 1e9) for stamp, due in zip(sorted(got), dues)]
        floor = self.lines([self.floor, "timer-spawn", str(count), str(span), str(fifo)])
        self.record("submitted task (`submit --in`): due → command's main starts", "µs", late, floor,
                    floor_name="timerfd + posix_spawn", goal="p50 ≤ 2× floor (as timer lateness)",
                    check=lambda r: r["ratio"] <= 2)

    @staticmethod
    def read_stamps(fd, got, expected):
        buffer = b""
        while len(got) < expected:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                name, ns = line.split()
                got.append((name.decode(), int(ns)))

    @staticmethod
    def wakeups(pid, seconds):
        """Context switches per second summed over the process's threads. Counted per thread id:
        a thread that exits takes its counters with it, so each thread's own increase is summed."""
        def per_thread():
            counts = {}
            for task in os.listdir(f"/proc/{pid}/task"):
                try:
                    lines = open(f"/proc/{pid}/task/{task}/status").read().splitlines()
                except OSError:
                    continue
                counts[task] = sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)
            return counts
        before = per_thread()
        time.sleep(seconds)
        after = per_thread()
        return sum(n - before.get(tid, 0) for tid, n in after.items()) / seconds

    @staticmethod
    def evict(path):
        """Drops a file's pages from the page cache, so the next start reads it from disk.

        How many of a binary's pages a process maps depends on how they entered the page cache: as
        the linker wrote them, or as readahead read them. The same taskd, idle, had 0.3-0.9 MiB more
        resident just after a build than once read from disk (the state of a service after boot).
        """
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    @staticmethod
    def rss_kb(pid):
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

    def far_tasks(self, count):
        return {f"f{i}.task": f"[Task]\nKind=processing\n[Timer]\nOnCalendar=2099-01-01 00:00:{i % 60:02d}\n"
                              f"[Exec]\nExecStart=/bin/true\n" for i in range(count)}

    @staticmethod
    def mixed_tasks(count):
        """The shapes a fleet's configuration has, none due soon: a third start-up + interval timers, a
        third daily calendar timers at distinct times, a third weekday calendars with a random delay and
        an environment; every command with distinct arguments. peer_apscheduler.py rss-mix does the same."""
        tasks = {}
        for i in range(count):
            timer = [f"OnStartupSec={3600 + i}\nOnUnitActiveSec=15min\n",
                     f"OnCalendar=*-*-* {i % 24:02d}:{i // 24 % 60:02d}:00\nPersistent=yes\n",
                     f"OnCalendar=Mon..Fri 09:{i % 60:02d}\nRandomizedDelaySec=5min\n"][i % 3]
            env = f"Environment=JOB_ID={i} JOB_QUEUE=q{i % 7}\n" if i % 3 == 2 else ""
            tasks[f"m{i}.task"] = (f"[Task]\nKind=processing\nRuntimeBudgetSec={60 + i % 240}s\n[Timer]\n{timer}"
                                   f"[Exec]\nExecStart=/usr/local/bin/job --id {i} --name task-{i}\n{env}")
        return tasks

    def idle_and_memory(self):
        seconds = self.n(5, 1)
        sizes = [0, 1000, 10_000] if not self.smoke else [0, 1000]
        for count in sizes:
            self.evict(self.release / "taskd")
            p, _, _ = self.daemon(f"idle-{count}", self.far_tasks(count), binary="taskd")
            time.sleep(self.n(1, 0.2))  # let start-up work settle before counting
            if count == sizes[-1]:
                idle = self.wakeups(p.pid, seconds)
                accept_sock = str(self.tmp / "idle.sock")
                c = self.spawn([self.floor, "accept-idle", accept_sock])
                self.wait_socket(accept_sock)
                floor_idle = self.wakeups(c.pid, seconds)
                self.stop(c)
                swift = self.spawn([str(Path(self.floor).parent / "idle-swift")])
                time.sleep(self.n(1, 0.2))
                swift_idle = self.wakeups(swift.pid, seconds)
                self.stop(swift)
                self.record(f"idle wake-ups, {count:,} tasks none due", "/s", {"median": idle, "p99": None, "n": 1},
                            {"median": floor_idle, "p99": None, "n": 1}, floor_name="C blocked in accept",
                            peer={"median": swift_idle, "p99": None, "n": 1},
                            goal="0 (peer column: an empty Swift async main)",
                            check=lambda r: r["taskd"]["median"] == 0)
            self.memory_row(f"resident memory, {count:,} tasks", p, "rss", count, 3)
        # The same count in the shapes users have (timers of every kind, distinct commands).
        count = sizes[-1]
        self.evict(self.release / "taskd")
        p, _, _ = self.daemon(f"mix-{count}", self.mixed_tasks(count), binary="taskd")
        time.sleep(self.n(1, 0.2))
        self.memory_row(f"resident memory, {count:,} tasks, mixed timers and commands", p, "rss-mix", count, 2)

    def memory_row(self, scenario, p, peer_mode, count, fraction):
        """Records taskd's resident memory (then stops it) against APScheduler's with the same jobs
        (peer_apscheduler.py PEER_MODE COUNT); at 10,000 tasks the goal is at most 1/FRACTION of it."""
        rss = self.rss_kb(p.pid) / 1024
        self.stop(p)
        peer = None
        if self.peer_python:
            out = subprocess.run([self.peer_python, str(ROOT / "bench" / "peer_apscheduler.py"), peer_mode, str(count)],
                                 capture_output=True, text=True, check=True).stdout
            peer = {"median": int(out.split()[-1]) / 1024, "p99": None, "n": 1}
        goal = {3: "≤ ⅓ of APScheduler", 2: "≤ ½ of APScheduler"}[fraction] if count == 10_000 else ""
        self.record(scenario, "MiB", {"median": rss, "p99": None, "n": 1}, peer=peer, floor_name="—", goal=goal,
                    check=(lambda r: self.against_peer(r, lambda t, q: t <= q / fraction)) if count == 10_000 else None)

    def sustained(self):
        # Taskd's default: a wake is acknowledged once written (SyncIntervalSec=1s); the floor keeps
        # the same promise. Then each acknowledgement waiting for its fdatasync (SyncIntervalSec=0),
        # against a floor that does the same: the disk's own limit.
        self.sustained_row("sustained wakes, 8 clients, no-op Swift handler", "load", None, 1000,
                           "C epoll loop + writer thread, fdatasync every 1 s", rounds=4, required=True)
        self.sustained_row("sustained wakes, SyncIntervalSec=0 (each reply after its fdatasync)", "load-sync",
                           "[Daemon]\nMaxConcurrentRuns=64\nSyncIntervalSec=0\n", 0,
                           "C epoll loop + group-commit fdatasync", rounds=2, required=False)

    def sustained_row(self, scenario, name, conf, sync_ms, floor_name, rounds, required):
        p, sock, _ = self.daemon(name, {}, **({"conf": conf} if conf else {}))
        req = '{"method":"io.taskd.Scheduler.Wake","parameters":{"target":"quiet"}}'
        floor_sock = str(self.tmp / f"{name}.sock")
        server = self.spawn([self.floor, "durable-server", floor_sock, str(self.tmp / f"{name}.log"), str(sync_ms)])
        self.wait_socket(floor_sock)
        warm_s = "1" if not self.smoke else "0.2"
        warm = self.lines([self.floor, "load", sock, "8", warm_s, req])[0]
        self.lines([self.floor, "load", floor_sock, "8", warm_s, req])
        before = self.rss_kb(p.pid) / 1024
        # Alternating rounds, as for the wake latencies: the host's drift weighs on both alike.
        rounds, seconds = self.n(rounds, 1), self.n(2.5, 1)
        count = floor_count = 0
        for _ in range(rounds):
            count += self.lines([self.floor, "load", sock, "8", str(seconds), req])[0]
            floor_count += self.lines([self.floor, "load", floor_sock, "8", str(seconds), req])[0]
        after = self.rss_kb(p.pid) / 1024
        self.stop(p)
        self.stop(server)
        rate, floor = count / (rounds * seconds), floor_count / (rounds * seconds)
        flat = f"memory flat ({before:.1f} → {after:.1f} MiB; warm-up {warm})"
        self.record(scenario, "/s", {"median": rate, "p99": None, "n": 1}, {"median": floor, "p99": None, "n": 1},
                    floor_name=floor_name, goal=f"≥ 20,000/s, {flat}" if required else f"— (the disk's limit; {flat})",
                    check=(lambda r: rate >= 20_000 and after <= before * 1.2 + 2) if required else None)

    def metrics_scrape(self):
        """A Varlink Metrics call (connect, request, the whole OpenMetrics text back) against a taskd
        with 10,000 tasks in the mixed shapes, after some of them ran."""
        count = self.n(10_000, 1000)
        p, sock, _ = self.daemon("metrics", self.mixed_tasks(count), binary="taskd")
        for i in range(0, count, count // 100):
            wake = json.dumps({"method": "io.taskd.Scheduler.Wake", "parameters": {"target": f"m{i}"}})
            self.varlink(sock, wake)
        request = json.dumps({"method": "io.taskd.Scheduler.Metrics", "parameters": {}})
        times, size = [], 0
        for _ in range(self.n(20, 3)):
            t0 = time.perf_counter_ns()
            size = len(self.varlink(sock, request))
            times.append(time.perf_counter_ns() - t0)
        self.stop(p)
        self.record(f"metrics scrape, {count:,} tasks ({size / 1e6:.1f} MB)", "ms", times, goal="≤ 50 ms",
                    check=lambda r: r["taskd"]["median"] <= 50e6)

    def memory_after_replies(self):
        """10,000 command tasks (OnStartupSec= + OnUnitActiveSec=): taskd's resident memory at rest,
        then after `taskctl list`, `taskctl list --json` and metrics scrapes, each twice. Replies of
        megabytes must give their memory back: the goal is at most 2 MiB over the resting figure."""
        count = self.n(10_000, 1000)
        tasks = {f"s{i}.task": f"[Task]\nKind=processing\n[Timer]\nOnStartupSec={3600 + i}\nOnUnitActiveSec=15min\n"
                               f"[Exec]\nExecStart=/bin/true\n" for i in range(count)}
        p, sock, _ = self.daemon("replies", tasks, binary="taskd")
        time.sleep(self.n(1, 0.2))  # let start-up work settle before counting
        rest = self.rss_kb(p.pid) / 1024
        taskctl = str(self.release / "taskctl")
        metrics = json.dumps({"method": "io.taskd.Scheduler.Metrics", "parameters": {}})
        for _ in range(2):
            for argv in (["list"], ["list", "--json"], ["metrics"]):
                subprocess.run([taskctl, "--socket", sock] + argv, stdout=subprocess.DEVNULL, check=True)
            self.varlink(sock, metrics)
        time.sleep(self.n(0.5, 0.1))  # the last connection's close is seen
        after = self.rss_kb(p.pid) / 1024
        self.stop(p)
        self.record(f"resident memory after list, list --json, metrics, {count:,} tasks", "MiB",
                    {"median": after, "p99": None, "n": 1}, {"median": rest, "p99": None, "n": 1},
                    floor_name="the same taskd at rest, before them", goal="≤ rest + 2 MiB",
                    check=lambda r: r["taskd"]["median"] <= rest + 2)

    @staticmethod
    def varlink(path, request):
        """One Varlink call on a fresh connection; the reply's bytes."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall(request.encode() + b"\0")
            reply = b""
            while not reply.endswith(b"\0"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                reply += chunk
            return reply

    def startup(self):
        count = self.n(10_000, 1000)
        tasks = self.far_tasks(count)
        times = []
        for i in range(self.n(5, 1)):
            p, _, ready = self.daemon(f"startup-{i}", tasks, binary="taskd")
            times.append(ready * 1e9)
            self.stop(p)
        self.record(f"start-up to READY=1, {count:,} task files", "ms", times, goal="≤ 1 s",
                    check=lambda r: r["taskd"]["median"] <= 1e9)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--peer-python")
    parser.add_argument("--json", default="bench-results.json")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--keeper", action="store_true", help="every taskd with RunKeeper=yes")
    scenarios = ["wake_latency", "timer_lateness", "submit_lateness", "idle_and_memory", "memory_after_replies", "sustained",
                 "metrics_scrape", "startup"]
    parser.add_argument("--only", choices=scenarios, action="append",
                        help="run just this scenario (repeatable); the default is all of them")
    args = parser.parse_args()
    bench = Bench(args)
    print(f"taskd benchmark, {datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs"
          f"{' (smoke: figures mean nothing)' if args.smoke else ''}; times are median / p99\n")
    print("| scenario | unit | taskd | floor | taskd ÷ floor (p50) | APScheduler / peer | goal | holds |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for name in args.only or scenarios:
            getattr(bench, name)()
    finally:
        bench.cleanup()
    Path(args.json).write_text(json.dumps({"date": datetime.now().isoformat(timespec="seconds"),
                                           "smoke": args.smoke, "cpus": os.cpu_count(),
                                           "results": bench.results}, indent=2) + "\n")
    print(f"\nJSON: {args.json}")


if __name__ == "__main__":
    sys.exit(main())
