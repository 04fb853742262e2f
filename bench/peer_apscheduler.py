"""The peer: APScheduler 3.x doing the jobs taskd's benchmark measures (run by bench/bench.py in its venv).

  peer_apscheduler.py timers N SPAN_MS   N date-trigger jobs at random times in SPAN_MS (from 1 s
                                         after start); prints each job's lateness in ns
  peer_apscheduler.py rss N              N jobs due far in the future, scheduler running; prints VmRSS kB
  peer_apscheduler.py rss-mix N          N jobs in bench.py's mixed shapes (interval, daily cron, weekday
                                         cron with jitter; each a command with distinct arguments); VmRSS kB
"""
import random
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

from apscheduler.schedulers.background import BackgroundScheduler


def timers(n, span_ms):
    scheduler = BackgroundScheduler(timezone=timezone.utc)
    lateness = []
    lock = threading.Lock()
    done = threading.Event()

    def job(due_ns):
        late = time.time_ns() - due_ns
        with lock:
            lateness.append(late)
            if len(lateness) == n:
                done.set()

    start = time.time_ns() + 1_000_000_000 + n * 100_000  # adding jobs takes time at large N
    for _ in range(n):
        due_ns = start + int(random.random() * span_ms * 1_000_000)
        run_date = datetime.fromtimestamp(due_ns / 1e9, tz=timezone.utc)
        scheduler.add_job(job, "date", run_date=run_date, args=[due_ns], misfire_grace_time=None)
    scheduler.start()
    done.wait(timeout=span_ms / 1000 + 60)
    scheduler.shutdown(wait=False)
    print("\n".join(str(x) for x in lateness))


def rss(n):
    scheduler = BackgroundScheduler(timezone=timezone.utc)
    far = datetime.now(timezone.utc) + timedelta(days=365)
    for i in range(n):
        scheduler.add_job(print, "date", run_date=far + timedelta(seconds=i), id=f"job{i}")
    scheduler.start()
    time.sleep(0.5)
    status = open("/proc/self/status").read()
    print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
    scheduler.shutdown(wait=False)


def run_command(argv, env=None):
    import subprocess
    subprocess.run(argv, env=env, timeout=600)


def rss_mix(n):
    scheduler = BackgroundScheduler(timezone=timezone.utc)
    now = datetime.now(timezone.utc)
    for i in range(n):
        argv = ["/usr/local/bin/job", "--id", str(i), "--name", f"task-{i}"]
        if i % 3 == 0:
            scheduler.add_job(run_command, "interval", minutes=15, start_date=now + timedelta(seconds=3600 + i),
                              args=[argv], id=f"job{i}")
        elif i % 3 == 1:
            scheduler.add_job(run_command, "cron", hour=i % 24, minute=i // 24 % 60, args=[argv], id=f"job{i}",
                              misfire_grace_time=None, coalesce=True)
        else:
            env = {"JOB_ID": str(i), "JOB_QUEUE": f"q{i % 7}"}
            scheduler.add_job(run_command, "cron", day_of_week="mon-fri", hour=9, minute=i % 60, jitter=300,
                              args=[argv, env], id=f"job{i}")
    scheduler.start()
    time.sleep(0.5)
    status = open("/proc/self/status").read()
    print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
    scheduler.shutdown(wait=False)


if __name__ == "__main__":
    if sys.argv[1] == "timers":
        timers(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "rss":
        rss(int(sys.argv[2]))
    elif sys.argv[1] == "rss-mix":
        rss_mix(int(sys.argv[2]))
