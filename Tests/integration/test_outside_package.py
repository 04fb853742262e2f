"""An app's package outside this repository, built from docs/swift-handlers.md: every Swift code
block of that page is one of its files (the comment near its top names the file). The package
depends on this checkout by path, as the page says, and its tests must pass as a handler author runs
them (`swift test`, debug) with testable imports off: the page's tests use TaskdTesting's public API
only. (Release builds of an app on the Taskd library are test_package.py's: weatherd's package.)"""
import re
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "swift-handlers.md"


def doc_files():
    """(path, text) of every ```swift block of the page."""
    blocks = re.findall(r"```swift\n(.*?)```", DOC.read_text(), re.S)
    files = []
    for block in blocks:
        named = re.search(r"^// ((?:Package\.swift|Sources/|Tests/)\S*)$", block, re.M)
        assert named, f"a Swift block of {DOC.name} names no file: {block[:120]!r}"
        files.append((named.group(1), block))
    return files


def test_every_swift_block_of_the_page_is_a_file_of_the_package():
    paths = [path for path, _ in doc_files()]
    assert len(paths) == len(set(paths)), paths
    assert {"Package.swift"} <= set(paths) and any(p.startswith("Tests/") for p in paths), paths


@pytest.mark.slow
def test_the_package_of_the_page_builds_and_its_tests_pass_on_public_api_only(tmp_path):
    # `.package(path: "../taskd")`: this checkout, under the name the page uses.
    (tmp_path / "taskd").symlink_to(ROOT)
    app = tmp_path / "weather-app"
    for path, text in doc_files():
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        (app / path).write_text(text)
    r = subprocess.run(["swift", "test", "--disable-testable-imports"], cwd=app, capture_output=True, text=True)
    output = r.stdout + r.stderr
    assert r.returncode == 0, output[-4000:]
    assert re.search(r"Test run with 4 tests (in \d+ suites? )?passed", output), output[-2000:]
