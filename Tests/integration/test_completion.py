"""Shell completion on the real binaries: `taskctl completion bash|zsh|fish` is made from taskctl's
own usage texts, and completes commands, options, and the task names it asks a real taskd for
(`taskctl list --names`, with the command line's --socket or $TASKD_SOCKET)."""
import os
import re
import shlex
import subprocess

import pytest

from conftest import TASKCTL, task

pytestmark = pytest.mark.integration


def script(shell, tmp_path):
    text = subprocess.run([str(TASKCTL), "completion", shell], capture_output=True, text=True, check=True).stdout
    path = tmp_path / f"taskctl.{shell}"
    path.write_text(text)
    return path


def shell_env(socket=None):
    """taskctl on PATH, as an installed one is; the daemon's socket as the default, if given."""
    env = {**os.environ, "PATH": f"{TASKCTL.parent}:{os.environ['PATH']}"}
    env.pop("TASKD_SOCKET", None)
    if socket:
        env["TASKD_SOCKET"] = socket
    return env


def bash_complete(path, words, env):
    """What bash's completion function offers for the command line `words` (the last one being
    the word completed), as bash calls it at TAB."""
    command = (f"source {shlex.quote(str(path))}; COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); "
               f"COMP_CWORD={len(words) - 1}; _taskctl; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]


def fish_complete(path, line, env):
    r = subprocess.run(["fish", "--no-config", "-c", f"source {shlex.quote(str(path))}; complete -C {shlex.quote(line)}"],
                       capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return [entry.split("\t")[0] for entry in r.stdout.splitlines()]


@pytest.fixture
def tasks(daemon_factory):
    return daemon_factory({"appRefresh.task": task("/bin/true"),
                           "cleanup.task": task("/bin/true", kind="processing")}).start()


def test_every_command_of_the_help_is_completed():
    help_text = subprocess.run([str(TASKCTL), "--help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z]+)\b", help_text.split("Options:")[0], re.M)
    assert len(commands) >= 15
    for shell in ("bash", "zsh", "fish"):
        text = subprocess.run([str(TASKCTL), "completion", shell], capture_output=True, text=True, check=True).stdout
        missing = [c for c in commands if not re.search(rf"\b{c}\b", text)]
        assert not missing, f"{shell}: {missing}"
    r = subprocess.run([str(TASKCTL), "completion", "tcsh"], capture_output=True, text=True)
    assert r.returncode == 2 and "bash, zsh, fish" in r.stderr


def test_bash_completes_commands_options_and_the_task_names_taskd_has(tasks, tmp_path):
    path = script("bash", tmp_path)
    env = shell_env(tasks.socket)
    assert bash_complete(path, ["taskctl", "w"], env) == ["wake", "why"]
    assert sorted(bash_complete(path, ["taskctl", "wake", ""], env)) == ["appRefresh", "cleanup"]
    assert bash_complete(path, ["taskctl", "status", "c"], env) == ["cleanup"]
    assert "--wait" in bash_complete(path, ["taskctl", "wake", "--w"], env)
    assert bash_complete(path, ["taskctl", "wake", "--id", ""], env) == [], "a value is not a task name"
    assert bash_complete(path, ["taskctl", "completion", ""], env) == ["bash", "zsh", "fish"]
    assert bash_complete(path, ["taskctl", "list", ""], env) == [], "list takes no task"
    # The command line's --socket is the one asked, not the default.
    bare = shell_env()
    assert bash_complete(path, ["taskctl", "--socket", tasks.socket, "wake", "a"], bare) == ["appRefresh"]
    # No taskd: no names, and no error on the terminal.
    assert bash_complete(path, ["taskctl", "--socket", str(tmp_path / "none"), "wake", ""], bare) == []


def test_fish_completes_commands_options_and_task_names(tasks, tmp_path):
    path = script("fish", tmp_path)
    env = shell_env(tasks.socket)
    assert fish_complete(path, "taskctl w", env) == ["wake", "why"]
    assert sorted(fish_complete(path, "taskctl wake ", env)) == ["appRefresh", "cleanup"]
    assert "--wait" in fish_complete(path, "taskctl wake --w", env)
    assert fish_complete(path, f"taskctl --socket {tasks.socket} cancel cl", shell_env()) == ["cleanup"]


def test_zsh_script_is_valid_zsh_and_names_every_command(tmp_path):
    path = script("zsh", tmp_path)
    assert path.read_text().startswith("#compdef taskctl\n")
    r = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
