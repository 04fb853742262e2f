"""The Debian package scripts/package builds from the tree (dpkg-deb, dpkg-shlibdeps): files
where Debian's policy puts them, /etc/taskd as conffiles, maintainer scripts, Depends on no Swift,
lintian with no error and no warning, and the same bytes twice under one SOURCE_DATE_EPOCH."""
import hashlib
import os
import re
import subprocess

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def build(out, epoch="1764000000"):
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch}
    r = subprocess.run([str(ROOT / "scripts" / "package"), "--out", str(out)], capture_output=True, text=True,
                       env=env, timeout=3600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return out / r.stdout.strip().split("/")[-1]


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    return build(tmp_path_factory.mktemp("deb"))


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


def test_lintian_reports_no_error_and_no_warning(deb):
    r = subprocess.run(["lintian", "--fail-on", "none", "--no-tag-display-limit", str(deb)], capture_output=True,
                       text=True, timeout=600)
    tags = [line for line in r.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert tags == [], r.stdout


def test_the_same_epoch_gives_the_same_bytes(deb, tmp_path):
    again = build(tmp_path)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(deb.read_bytes()).hexdigest()
