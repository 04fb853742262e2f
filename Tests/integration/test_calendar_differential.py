"""Differential test: taskd's calendar engine against systemd-analyze calendar on a generated corpus
(hand-picked plus seeded random expressions, valid and not): in UTC and two DST zones before the EU
spring change, and under Irish rules (negative DST, as a zone and as a POSIX TZ) before each change of
2025 and 2026."""
import calendar
import json
import os
import random
import re
import shutil
import subprocess

import pytest

from conftest import TASKCTL

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")]

DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "monday", "FRIDAY", "Sunday", "wed"]
HAND_PICKED = [
    "minutely", "hourly", "daily", "weekly", "monthly", "yearly", "quarterly", "semiannually", "*:0/15", "9..17:0/15",
    "Mon..Fri 9:00", "*-*~01", "*-02~03/1", "*-02-29 12:00", "*-02-30", "2199-12-31 23:59:59", "*-*-* *:*:30.5",
    "*:*:0/7.5", "*-*-* 02:30:00", "*-10-25 02:30", "*-11-01 01:30", "Sun *-*-* 03:00", "@1767225600", "Mon,", "12-25",
    "12:00 CET", "12:00 CEST", "12:00 EST", "12:00 EDT", "12:00 cet", "Mon 9:00 cest", "*-*-* 9:00 Asia/Tokyo",
    # `@` takes whole seconds as strtoul() reads them, then nothing; systemd trims no white space.
    "@1.5", "@5s500ms", "@5s", "@ 5", "@  5", "@\t5", "@+5", "@ +5", "@-0", "@ -0", "@-1", "@", "@ ", "@5 ", "@5  UTC",
    "@ 5 UTC", "@0x10", "@1e3", "@+-5", "@- 5", "@+ 5", "@5,6", "@5.", "@00012", "@1767225600.000000",
    "@18446744073709551615", "@18446744073709551616", "@-18446744073709551615", "@7258118399", "@7258118400",
    "@9223372036854775808", "@1774744200 Europe/Berlin", "Mon @1774744200", "Mon,@5", "@5 Mon", " @5",
    "daily ", " daily", "12:00 ", " 12:00", "Mon  12:00", "Mon ", "anually",
]


def component(rng, low, high, allow_star=True):
    choice = rng.random()
    a = rng.randint(low, high)
    b = rng.randint(low, high)
    if allow_star and choice < 0.3:
        return "*"
    if choice < 0.5:
        return str(a)
    if choice < 0.65:
        return f"{min(a, b)}..{max(a, b)}"
    if choice < 0.8:
        return f"{a}/{rng.randint(1, max(1, high - low))}"
    if choice < 0.9:
        return ",".join(str(rng.randint(low, high)) for _ in range(rng.randint(2, 4)))
    return f"{min(a, b)}..{max(a, b)}/{rng.randint(1, 5)}"


def random_expression(rng):
    parts = []
    if rng.random() < 0.3:
        days = rng.sample(DAYS, rng.randint(1, 3))
        parts.append(rng.choice([",".join(days), f"{days[0]}..{rng.choice(DAYS)}"]))
    if rng.random() < 0.7:
        year = component(rng, 2024, 2032)
        month = component(rng, 1, 12)
        day = component(rng, 1, 28 if rng.random() < 0.3 else 31)
        separator = "~" if rng.random() < 0.15 else "-"
        parts.append(f"{year}-{month}{separator}{day}" if rng.random() < 0.7 else f"{month}{separator}{day}")
    if rng.random() < 0.9 or not parts:
        second = component(rng, 0, 59)
        if rng.random() < 0.1 and second.isdigit():
            second += "." + str(rng.randint(1, 999999))
        time = f"{component(rng, 0, 23)}:{component(rng, 0, 59)}"
        parts.append(time + (f":{second}" if rng.random() < 0.7 else ""))
    if rng.random() < 0.1:
        parts.append("UTC")
    return " ".join(parts)


def fraction(rng):
    """A fractional part of 1 to 8 digits: 7 and 8 digits round by the 7th, as systemd's parser does."""
    digits = rng.choice([1, 3, 6, 7, 7, 8, 8])
    return "." + str(rng.randrange(10 ** digits)).zfill(digits)


def seconds_entry(rng):
    choice = rng.random()
    if choice < 0.35:
        return rng.choice(["0/1", "0/2", "00/1", "0/1.0000004", "1/1", "0", "0..59/1", "30/1", "0/1.5", "0/0.5"])
    if choice < 0.55:
        return str(rng.randint(0, 59))
    if choice < 0.8:
        return str(rng.randint(0, 59)) + fraction(rng)
    if choice < 0.9:
        return f"{rng.randint(0, 30)}/{rng.randint(0, 20)}{fraction(rng)}"
    a, b = sorted(rng.sample(range(60), 2))
    return f"{a}{fraction(rng)}..{b}"


def random_seconds_list(rng):
    """Mixed seconds lists (0/1 and 0/2 among values, fractions, ranges, repetitions): systemd prints
    seconds holding 0/1 as *. A few minute and hour lists with 0/1 or 1/1, which it prints as they are."""
    seconds = ",".join(seconds_entry(rng) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.2:
        return f"{rng.choice(['0/1', '1/1', '0/1,5', '3,1/1'])}:{rng.choice(['0/1', '1/1,30', '*', '5'])}:{seconds}"
    return f"{component(rng, 0, 23)}:{component(rng, 0, 59)}:{seconds}"


def corpus():
    rng = random.Random(20261121)
    generated = [random_expression(rng) for _ in range(300)]
    rng = random.Random(32)
    return HAND_PICKED + generated + [random_seconds_list(rng) for _ in range(80)]


ITERATIONS = 5
SPRING_2026 = 1_774_744_200  # 2026-03-29 00:30 UTC: the EU switch to summer time is 30 minutes away
# Negative DST: winter is the "DST" half. The POSIX rule's October change is an hour before Dublin's.
IRISH = ["Europe/Dublin", "IST-1GMT-0,M10.5.0/1,M3.5.0/1"]
# 23:30 UTC before each March change (01:00 UTC), 23:00 UTC before each October one (00:00 or 01:00 UTC).
IRISH_BASES = [1_743_291_000, 1_761_433_200, 1_774_740_600, 1_792_882_800]
CASES = [(zone, SPRING_2026) for zone in ["UTC", "Europe/Berlin", "America/New_York"]] + \
    [(zone, base) for zone in IRISH for base in IRISH_BASES]


def systemd(expression, zone, base):
    r = subprocess.run(["systemd-analyze", "calendar", f"--iterations={ITERATIONS}", f"--base-time=@{base}", "--",
                        expression],
                       capture_output=True, text=True, env=dict(os.environ, TZ=zone, SYSTEMD_COLORS="0"))
    if r.returncode != 0:
        # systemd parsed it but gave up on its next elapse (its search loops where DST keeps normalizing
        # it back): the normalized form, and no elapses to compare.
        loop = re.search(r"Infinite loop in calendar calculation: (.*)", r.stderr)
        return (loop.group(1), None) if loop else None
    normalized = re.search(r"Normalized form: (.*)", r.stdout).group(1)
    lines = r.stdout.splitlines()
    utc_lines = [l for l in lines if "(in UTC):" in l] if zone != "UTC" else \
        [l for l in lines if "Next elapse:" in l or "Iter. #" in l]
    times = []
    for line in utc_lines:
        if "never" in line:
            continue
        stamp = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", line).group(1)
        times.append(calendar.timegm(tuple(int(x) for x in re.split(r"[- :]", stamp)) + (0, 0, 0)))
    return normalized, times


@pytest.mark.slow
@pytest.mark.parametrize("zone,base", CASES, ids=[f"{z}@{b}" for z, b in CASES])
def test_taskd_agrees_with_systemd_on_a_generated_corpus(zone, base):
    expressions = corpus()
    r = subprocess.run([str(TASKCTL), "calendar", "--json", "--iterations", str(ITERATIONS), "--base-time", f"@{base}",
                        "--", *expressions], capture_output=True, text=True, env=dict(os.environ, TZ=zone))
    ours = json.loads(r.stdout)
    assert len(ours) == len(expressions)
    accepted = 0
    gave_up = []
    for expression, mine in zip(expressions, ours):
        theirs = systemd(expression, zone, base)
        if theirs is None:
            assert "error" in mine, f"systemd rejects {expression!r}, taskd accepts it as {mine}"
            continue
        assert "error" not in mine, f"systemd accepts {expression!r}, taskd rejects it: {mine['error']}"
        accepted += 1
        assert mine["normalized"] == theirs[0], expression
        usec = mine["nextElapseUSec"]
        if theirs[1] is None:
            # Where systemd gives up, taskd must still find elapses, each after the one before.
            gave_up.append(expression)
            assert len(usec) == ITERATIONS and usec == sorted(set(usec)) and usec[0] > base * 1_000_000, expression
        else:
            assert [t // 1_000_000 for t in usec] == theirs[1], expression
    compared = accepted - len(gave_up)
    assert compared >= 150, f"only {compared} expressions were compared; the corpus needs more valid ones"
