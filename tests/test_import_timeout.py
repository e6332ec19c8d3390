"""Provider imports are bounded by ``memory.provider_import_timeout``: a provider whose import
hangs is reported ("import timed out after N s") as that provider's problem, and the commands
and the host go on without it."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from memhost import discovery
from memhost.config import update_config
from memhost.errors import ProviderError
from memhost.manager import MemoryManager
from cli_runner import run_memhost

#: A guard against a hang, far above anything the commands need; never a timing assertion.
HANG_GUARD = 120


def slow_provider(home: Path, name: str, seconds: float) -> Path:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        f'name = "{name}"\nversion = "0.1.0"\nentry = "provider:Slow"\n')
    folder.joinpath("provider.py").write_text(textwrap.dedent(f"""\
        import time

        from memhost import hookimpl

        time.sleep({seconds})  # an import that waits on something that never answers


        class Slow:
            @hookimpl
            def prefetch(self, query):
                return None
        """))
    return folder


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    return run_memhost(args, env=env, timeout=HANG_GUARD)


def test_list_check_reports_an_import_that_does_not_finish(home: Path):
    slow_provider(home, "sleepy", 30)
    update_config(home, {("memory", "provider_import_timeout"): 1.0})

    result = run(home, "providers", "list", "--check", "--json")

    assert result.returncode == 0, result.stderr
    row = next(p for p in json.loads(result.stdout)["providers"] if p["name"] == "sleepy")
    assert row["status"] == "failed"
    assert "import timed out after 1 s" in row["reason"]
    assert "provider_import_timeout" in row["reason"]


def test_doctor_finishes_with_a_600_second_import_and_names_it(home: Path):
    slow_provider(home, "glacial", 600)
    update_config(home, {("memory", "provider_import_timeout"): 1.0,
                         ("memory", "provider"): "glacial"})

    result = run(home, "doctor")

    assert result.returncode != 0
    assert "import timed out after 1 s" in result.stdout


def test_the_host_starts_without_a_provider_whose_import_hangs(home: Path):
    slow_provider(home, "sleepy", 30)
    update_config(home, {("memory", "provider_import_timeout"): 0.5,
                         ("memory", "provider"): "sleepy"})

    manager = MemoryManager.from_home(home)

    status = manager.status()
    assert status["external_provider"] is None
    assert any("import timed out after 0.5 s" in p["problem"] for p in status["problems"])
    manager.start_session("s1")
    assert manager.begin_turn("hello there, what is new?").recall == "no-provider"
    manager.shutdown()


def test_a_second_load_while_the_first_import_still_runs_fails_at_once(home: Path):
    slow_provider(home, "stuck", 30)

    with pytest.raises(ProviderError, match="import timed out after 0.3 s"):
        discovery.load_provider("stuck", home, timeout=0.3)
    with pytest.raises(ProviderError, match="still running"):
        discovery.load_provider("stuck", home, timeout=20)
