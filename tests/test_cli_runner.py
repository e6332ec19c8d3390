"""The suite's way of running ``memhost`` for a client that starts its server itself
(:func:`cli_runner.stdio_command`): the command gets the client's pipes, environment and
working folder, its exit code comes back, and the command server is in step afterwards,
whether or not the client ever started the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cli_runner
from cli_runner import HANDOFF, run_memhost, stdio_command

pytestmark = pytest.mark.skipif(os.environ.get("MEMHOST_TEST_EXEC") == "1",
                                reason="MEMHOST_TEST_EXEC=1: every command is started afresh")


def forked_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MEMHOST_HOME": str(tmp_path / "home")}


def test_the_command_gets_the_clients_pipes_and_gives_back_its_code(tmp_path: Path) -> None:
    env = forked_env(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    with stdio_command(["config", "show"], env=env) as command:
        assert command[:4] == [sys.executable, "-I", "-S", str(HANDOFF)]  # forked, not started
        done = subprocess.run(command, env={**env, "MEMHOST_HOME": str(tmp_path / "given")},
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{tmp_path / 'given' / 'config.toml'} ")  # the client's env
    args = ["--home", "relative", "config", "set", "memory.nudge_interval", "5"]
    with stdio_command(args, env=env) as command:
        done = subprocess.run(command, env=env, cwd=tmp_path / "elsewhere", capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "elsewhere" / "relative" / "config.toml").is_file()  # the client's cwd
    with stdio_command(["no-such-command"], env=env) as command:
        failed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2 and "no-such-command" in failed.stderr


def test_a_command_the_client_never_started_leaves_the_server_in_step(tmp_path: Path) -> None:
    env = forked_env(tmp_path)
    for _ in range(2):
        with stdio_command(["--version"], env=env):
            pass  # the client failed before starting anything
    assert cli_runner._servers and all(server.alive() for server in cli_runner._servers)
    done = run_memhost(["config", "show"], env=env)
    assert done.returncode == 0, done
    assert done.stdout.startswith(f"{tmp_path / 'home' / 'config.toml'} ")
