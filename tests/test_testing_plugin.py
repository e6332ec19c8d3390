"""``memhost.testing``: the provider contract suite, run by pytest in a subprocess the way a
provider author runs it, against providers that keep the contract and providers that break it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import importlib_metadata
import pytest

GOOD = '''
    import json
    import threading

    from memhost import hookimpl


    class Good:
        def __init__(self):
            self.lock = threading.Lock()
            self.seen = []

        @hookimpl
        def check_available(self, config):
            return None

        @hookimpl
        def initialize(self, session_id, home, config, context):
            self.home = home

        @hookimpl
        def prompt_fragment(self):
            return "Good memory is here."

        @hookimpl
        def tool_schemas(self):
            return [{"type": "function", "function": {
                "name": "good_lookup", "description": "Look something up.",
                "parameters": {"type": "object",
                               "properties": {"topic": {"type": "string"},
                                              "depth": {"type": "integer"}},
                               "required": ["topic", "depth"]}}}]

        @hookimpl
        def handle_tool_call(self, tool_name, arguments):
            assert isinstance(arguments["topic"], str) and isinstance(arguments["depth"], int)
            return json.dumps({"ok": True})

        @hookimpl
        def prefetch(self, query):
            with self.lock:
                return "\\n".join(self.seen) or None

        @hookimpl
        def queue_prefetch(self, query):
            pass

        @hookimpl
        def sync_turn(self, user_content, assistant_content):
            with self.lock:
                self.seen.append(user_content)

        @hookimpl
        def session_end(self, session_id, messages):
            pass

        @hookimpl
        def rotate(self, old_session_id, new_session_id, reason):
            pass

        @hookimpl
        def pre_compress(self, messages):
            return None

        @hookimpl
        def on_builtin_write(self, action, target, content):
            pass

        @hookimpl
        def on_subtask(self, task, result):
            pass

        @hookimpl
        def shutdown(self):
            return {"abandoned_writes": 0}
'''

BAD = '''
    import socket
    import time

    from memhost import hookimpl


    class Bad:
        @hookimpl
        def check_available(self, config):
            try:
                socket.getaddrinfo("example.invalid", 443)
            except OSError:
                pass
            return None

        @hookimpl
        def tool_schemas(self):
            return [{"name": "memory", "description": "mine now",
                     "parameters": {"type": "object", "properties": {}}}]

        @hookimpl
        def handle_tool_call(self, tool_name, arguments):
            return "plain words, not JSON"

        @hookimpl
        def prefetch(self, query):
            time.sleep(1.0)
            return {"recall": "a dict"}

        @hookimpl
        def sync_turn(self, user_content):
            raise ValueError("cannot sync")

        @hookimpl
        def shutdown(self):
            return {"abandoned": "several"}


    class Misspelt:
        @hookimpl
        def prefech(self, query):
            return None
'''


def run_suite(folder: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run pytest on ``folder``; the outcome of each test by its name."""
    report = folder / "report.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}",
         *args, str(folder)], capture_output=True, text=True, timeout=300, cwd=folder,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    outcomes: dict[str, str] = {}
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
            outcomes[f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"] = \
                kinds[0] if kinds else "passed"
    return result, outcomes


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def test_the_plugin_is_registered_with_pytest_through_an_entry_point() -> None:
    found = {ep.name: ep.value for ep in importlib_metadata.entry_points(group="pytest11")}
    assert found.get("memhost") == "memhost.testing"


@pytest.mark.slow
def test_a_provider_that_keeps_the_contract_passes_every_test(tmp_path: Path) -> None:
    folder = write(tmp_path / "good", {"good_provider.py": GOOD, "test_good.py": '''
        import pytest

        from good_provider import Good
        from memhost.testing import ProviderContract


        class TestGood(ProviderContract):
            @pytest.fixture
            def provider(self):
                return Good()
        '''})
    result, outcomes = run_suite(folder)
    assert result.returncode == 0, result.stdout[-4000:]
    assert outcomes and set(outcomes.values()) == {"passed"}, outcomes
    # Every lifecycle hook was exercised, plus the cross-cutting tests.
    assert len(outcomes) == 17, sorted(outcomes)


@pytest.mark.slow
def test_contract_failures_name_the_broken_rule(tmp_path: Path) -> None:
    folder = write(tmp_path / "bad", {"bad_provider.py": BAD, "test_bad.py": '''
        import pytest

        from bad_provider import Bad, Misspelt
        from memhost.testing import ProviderContract


        class TestBad(ProviderContract):
            prefetch_bound = 0.3

            @pytest.fixture
            def provider(self):
                return Bad()


        class TestMisspelt(ProviderContract):
            @pytest.fixture
            def provider(self):
                return Misspelt()
        '''})
    result, outcomes = run_suite(folder)
    assert result.returncode == 1
    failed = {name for name, outcome in outcomes.items() if outcome in ("failure", "error")}
    assert failed >= {
        "TestBad::test_tool_schemas_normalise_and_avoid_reserved_names",
        "TestBad::test_check_available_answers_without_network",
        "TestBad::test_hook_accepts_documented_arguments[prefetch]",
        "TestBad::test_hook_accepts_documented_arguments[sync_turn]",
        "TestBad::test_hook_accepts_documented_arguments[shutdown]",
        "TestBad::test_prefetch_returns_within_bound",
        "TestBad::test_every_tool_answers_with_json",
        "TestBad::test_full_manager_session_has_no_provider_faults",
        "TestMisspelt::test_registers_against_the_hook_spec",
    }, outcomes
    out = result.stdout
    assert "tool names reserved for core tools: ['memory']" in out
    assert "check_available must not touch the network" in out
    assert "prefetch() did not return within 0.3s" in out
    assert "ValueError: cannot sync" in out
    assert "shutdown() must return counts" in out
    assert "answered with text that is not JSON" in out
    assert "'prefech' (did you mean 'prefetch'?)" in out
    # Hooks the provider does not implement are skipped, not passed off as checked.
    assert outcomes["TestBad::test_hook_accepts_documented_arguments[initialize]"] == "skipped"


@pytest.mark.slow
def test_the_provider_may_come_from_a_memhost_provider_fixture(tmp_path: Path) -> None:
    folder = write(tmp_path / "byfixture", {
        "good_provider.py": GOOD,
        "conftest.py": '''
            import pytest

            from good_provider import Good


            @pytest.fixture
            def memhost_provider():
                return Good()
            ''',
        "test_by_fixture.py": '''
            from memhost.testing import ProviderContract


            class TestByFixture(ProviderContract):
                pass


            def test_the_home_fixture_points_memhost_home_at_it(memhost_home):
                import os

                assert os.environ["MEMHOST_HOME"] == str(memhost_home)
            ''',
    })
    result, outcomes = run_suite(folder)
    assert result.returncode == 0, result.stdout[-4000:]
    assert len(outcomes) == 18 and set(outcomes.values()) == {"passed"}, outcomes

    # Without the plugin its fixtures are gone: they come from the pytest11 entry point.
    result, outcomes = run_suite(folder, "-p", "no:memhost")
    assert result.returncode == 1
    assert "fixture 'memhost_home' not found" in result.stdout
