"""Differential test: taskctl timespan against systemd-analyze timespan on a generated corpus (hand-picked
plus seeded random spans, valid and not: every unit, fractions of up to 9 digits, white space, infinity,
overflow), and its --json."""
import json
import os
import random
import shutil
import subprocess

import pytest

from conftest import TASKCTL

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")]

UNITS = ["us", "usec", "µs", "μs", "ms", "msec", "s", "sec", "second", "seconds", "m", "min", "minute", "minutes",
         "h", "hr", "hour", "hours", "d", "day", "days", "w", "week", "weeks", "M", "month", "months", "y", "year",
         "years", ""]
BAD_UNITS = ["x", "mins", "sek", "H", "Y", "S", "μ", "secs", "ns"]
HAND_PICKED = [
    "0", "1", "1s", "1.5s", "5min 30s", "5min30s", "1h 30min", "2d", "1w 2d", "1M", "1y", "100µs", "100μs", "2 hours",
    "5 3", "12.34 .56", "12.34s.56", "+5s", " 7s ", "\t7s", ".5s", "00005s", "1min30", "1 msec 2 sec", "3.5 us",
    "1y1M1w1d1h1min1s1ms1us", "1.0000005s", "1.0000009s", "1.9999999s", "0.0000005s", "1.00000005min",
    "1.123456789s", "0.9999999us", "infinity", " infinity ", "infinity 5s", "5 infinity", "infinityx", "", " ",
    "-1s", "-0", "+ 5s", "+.5s", "5.", "1.s", "1.2.3", "0.-0", "3.+1", "1e3", "0x10s", "5x", "s", "1 s s", "µs",
    "9223372036854775807us", "9223372036854775808us", "18446744073709551614us", "18446744073709551615us",
    "99999999999999999999s", "18446744073708s", "18446744073709s", "584541y", "584542y", "584541y 0.99999999y",
    "18446744073708s 0.99999999y", "18446744073708.9999999s", "\v5s", "\v-0", "\v-1", "5s\v", "daily",
    # systemd's table prints the original line by line, each line without trailing blanks.
    "7s\t", "5\rs", "5\r\ns", "5\n\ns", "\n5s", "5 \n s ", "5s\n\n",
]


def number(rng):
    choice = rng.random()
    if choice < 0.45:
        return str(rng.randint(0, 1000))
    if choice < 0.8:
        digits = rng.choice([1, 2, 3, 6, 7, 7, 8, 9])
        whole = str(rng.randint(0, 100)) if rng.random() < 0.9 else ""
        return f"{whole}.{str(rng.randrange(10 ** digits)).zfill(digits)}"
    if choice < 0.9:
        return str(rng.randint(10 ** 12, 10 ** 20))  # around the limits of each unit
    return rng.choice(["+5", "05", "-5", "5.", "+", "."])


def random_span(rng):
    parts = []
    for _ in range(rng.randint(1, 3)):
        unit = rng.choice(UNITS) if rng.random() < 0.93 else rng.choice(BAD_UNITS)
        parts.append(number(rng) + rng.choice(["", "", " ", "  "]) + unit)
    span = rng.choice([" ", "", "  ", "\t"]).join(parts)
    if rng.random() < 0.1:
        span = rng.choice([" ", "\t"]) + span + rng.choice(["", " "])
    return span


def corpus():
    rng = random.Random(20261122)
    return HAND_PICKED + [random_span(rng) for _ in range(400)]


def run(program, *spans, json_output=False):
    args = [program, "timespan"] + (["--json"] if json_output else []) + ["--", *spans]
    env = dict(os.environ, SYSTEMD_COLORS="0")
    env.pop("COLUMNS", None)  # with it, systemd-analyze cuts long lines to fit; taskctl never does
    return subprocess.run(args, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_each_span_prints_and_fails_as_systemd_analyze_timespan():
    valid = 0
    for span in corpus():
        ours, theirs = run(str(TASKCTL), span), run("systemd-analyze", span)
        assert ours.returncode == theirs.returncode, span
        assert ours.stdout == theirs.stdout, span
        # The error line is systemd's; its hints name systemd-analyze commands, ours taskctl's.
        assert ours.stderr.splitlines()[:1] == theirs.stderr.splitlines()[:1], span
        valid += theirs.returncode == 0
    assert 200 <= valid <= len(corpus()) - 50, f"{valid} valid spans: the corpus needs both kinds"


@pytest.mark.slow
def test_several_spans_print_as_one_run_of_systemd_analyze_and_stop_at_the_first_invalid():
    spans = corpus()
    good = [s for s in spans if run("systemd-analyze", s).returncode == 0]
    ours, theirs = run(str(TASKCTL), *good), run("systemd-analyze", *good)
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout
    assert ours.stdout.count("\n\n") == len(good) - 1
    bad = ["1s", "2min", "5x", "3s"]  # the blocks before it, each with its blank line after, then the error
    ours, theirs = run(str(TASKCTL), *bad), run("systemd-analyze", *bad)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout) == (1, theirs.stdout)
    error = "Failed to parse time span '5x': Invalid argument"
    assert ours.stderr.splitlines()[0] == theirs.stderr.splitlines()[0] == error


def test_json_lists_every_span_and_any_invalid_one_exits_1():
    spans = corpus()
    r = run(str(TASKCTL), *spans, json_output=True)
    assert r.returncode == 1
    items = json.loads(r.stdout)
    assert [i["span"] for i in items] == spans
    for span, item in zip(spans, items):
        theirs = run("systemd-analyze", span)
        if theirs.returncode != 0:
            assert set(item) == {"span", "error"} and item["error"], span
            assert f"Failed to parse time span '{span}'" in r.stderr
            continue
        usec, human = theirs.stdout.splitlines()[-2:]  # the original may take several lines
        assert set(item) == {"span", "usec", "human"}, span
        assert item["usec"] == int(usec.split("μs: ")[1]), span
        assert item["human"] == human.split("Human: ", 1)[1], span


def test_json_infinity_is_exact_and_all_valid_exits_0():
    r = run(str(TASKCTL), "infinity", "1.5s", json_output=True)
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout) == [{"span": "infinity", "usec": 18446744073709551615, "human": "infinity"},
                                    {"span": "1.5s", "usec": 1500000, "human": "1.500000s"}]


def test_no_span_is_a_usage_error_and_help_lists_the_command():
    r = subprocess.run([str(TASKCTL), "timespan"], capture_output=True, text=True)
    assert r.returncode == 2 and "timespan needs at least one SPAN" in r.stderr
    h = subprocess.run([str(TASKCTL), "timespan", "--help"], capture_output=True, text=True)
    assert h.returncode == 0 and h.stdout.startswith("Usage: taskctl timespan SPAN... [--json]")
    assert "timespan SPAN..." in subprocess.run([str(TASKCTL), "--help"], capture_output=True, text=True).stdout
