"""The Debian package scripts/package builds from the tree (dpkg-deb, dpkg-shlibdeps): files
where Debian's policy puts them, /etc/taskd as conffiles, maintainer scripts, Depends on no Swift,
lintian with no error and no warning, and the same bytes twice under one SOURCE_DATE_EPOCH. The same
for an app daemon's package (scripts/package --product weatherd): its own names, user and pages."""
import hashlib
import os
import re
import subprocess

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]


WEATHERD = ["--product", "weatherd", "--config", "Examples/WeatherDaemon/config"]


def build(out, epoch="1764000000", product=()):
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch}
    r = subprocess.run([str(ROOT / "scripts" / "package"), "--out", str(out), *product], capture_output=True,
                       text=True, env=env, timeout=3600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return out / r.stdout.strip().split("/")[-1]


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    return build(tmp_path_factory.mktemp("deb"))


@pytest.fixture(scope="module")
def app_deb(tmp_path_factory):
    return build(tmp_path_factory.mktemp("app"), product=WEATHERD)


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()


def test_files_are_where_debian_puts_them(deb):
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for path in ["/usr/bin/taskd", "/usr/bin/taskctl", "/usr/libexec/taskd/taskd-keeper",
                 "/usr/lib/systemd/system/taskd.service", "/usr/lib/systemd/system/taskd.socket",
                 "/usr/lib/sysusers.d/taskd.conf", "/usr/lib/tmpfiles.d/taskd.conf",
                 "/usr/lib/systemd/catalog/taskd.catalog", "/usr/share/doc/taskd/copyright",
                 "/usr/share/doc/taskd/changelog.gz", "/usr/share/man/man5/taskd.task.5.gz",
                 "/usr/share/man/man1/taskctl.1.gz", "/usr/share/bash-completion/completions/taskctl",
                 "/usr/share/zsh/vendor-completions/_taskctl", "/usr/share/fish/vendor_completions.d/taskctl.fish",
                 "/etc/taskd/tasks.d/appRefresh.task"]:
        assert path in paths, path
    assert not [p for p in paths if p.startswith("/usr/local")]
    assert all(" root/root " in line for line in listing.splitlines())
    conffiles = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb)], capture_output=True, check=True).stdout
    assert b"./conffiles" in subprocess.run(["tar", "-t"], input=conffiles, capture_output=True).stdout


def test_it_depends_on_no_swift(deb):
    depends = field(deb, "Depends")
    assert re.search(r"\blibc6 \(>= ", depends) and "systemd" in depends, depends
    assert "swift" not in depends.lower()
    assert field(deb, "Package") == "taskd" and field(deb, "Architecture")


@pytest.mark.parametrize("which", ["deb", "app_deb"])
def test_lintian_reports_no_error_and_no_warning(which, request):
    package = request.getfixturevalue(which)
    r = subprocess.run(["lintian", "--fail-on", "none", "--no-tag-display-limit", "--show-overrides", str(package)],
                       capture_output=True, text=True, timeout=600)
    tags = [line for line in r.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert tags == [], r.stdout
    # Each override has its written reason (packaging/lintian-overrides), and is still needed.
    assert [line.split(" [")[0] for line in r.stdout.splitlines() if line.startswith("O:")] == \
        [f"O: {field(package, 'Package')}: maintainer-script-calls-systemctl"], r.stdout


def test_the_same_epoch_gives_the_same_bytes(deb, tmp_path):
    again = build(tmp_path)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(deb.read_bytes()).hexdigest()


def test_an_app_daemon_package_has_its_own_names_user_and_pages(app_deb, tmp_path):
    assert (field(app_deb, "Package"), field(app_deb, "Version")) == ("weatherd", "1.0.0")
    assert "swift" not in field(app_deb, "Depends").lower()
    listing = subprocess.run(["dpkg-deb", "-c", str(app_deb)], capture_output=True, text=True, check=True).stdout
    paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for path in ["/usr/bin/weatherd", "/usr/bin/weatherctl", "/usr/libexec/weatherd/taskctl",
                 "/usr/libexec/weatherd/taskd-keeper", "/usr/lib/systemd/system/weatherd.service",
                 "/usr/lib/systemd/system/weatherd.socket", "/usr/lib/sysusers.d/weatherd.conf",
                 "/usr/lib/tmpfiles.d/weatherd.conf", "/usr/lib/systemd/catalog/weatherd.catalog",
                 "/usr/share/man/man8/weatherd.8.gz", "/usr/share/man/man1/weatherctl.1.gz",
                 "/usr/share/doc/weatherd/copyright", "/etc/weatherd/tasks.d/WEATHER_DATA.task"]:
        assert path in paths, path
    # Nothing that another package (taskd's) could own too.
    assert [p for p in paths if "taskd" in p.split("/")[-1] and not p.startswith("/usr/libexec/weatherd/")] == []
    subprocess.run(["dpkg-deb", "-x", str(app_deb), str(tmp_path)], check=True)
    unit = (tmp_path / "usr/lib/systemd/system/weatherd.service").read_text()
    for line in ["User=weatherd", "ExecStart=/usr/bin/weatherd", "ExecReload=/usr/bin/weatherctl reload",
                 "StateDirectory=weatherd", "Requires=weatherd.socket", "CapabilityBoundingSet=", "Delegate=yes"]:
        assert line in unit.splitlines(), line
    assert "taskd" not in unit.split("\n", 1)[1]
    assert "ListenStream=/run/weatherd/weatherd.sock" in (tmp_path / "usr/lib/systemd/system/weatherd.socket").read_text()
    assert (tmp_path / "usr/lib/sysusers.d/weatherd.conf").read_text().splitlines()[-1].startswith("u weatherd ")
    assert (tmp_path / "usr/lib/systemd/catalog/weatherd.catalog").read_bytes() == \
        (ROOT / "systemd" / "taskd.catalog").read_bytes()
