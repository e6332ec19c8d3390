"""MEMHOST_TRACE_HOOKS=1 prints every hook call to stderr, with secrets redacted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

OPENAI_KEY = "sk-" + "Trace123Key" * 3
PASSWORD = "Correct-Battery-9-Staple"

SCRIPT = textwrap.dedent(f"""
    from memhost import MemoryManager, hookimpl

    class Tracer:
        @hookimpl
        def prefetch(self, query):
            return "recalled: the user likes tea"

        @hookimpl
        def sync_turn(self, user_content, assistant_content):
            pass

        @hookimpl
        def on_subtask(self, task):
            raise RuntimeError("subtask store is down")

    manager = MemoryManager.from_home()
    manager.register_provider(Tracer(), name="tracer")
    manager.start_session("trace-session")
    manager.begin_turn("my key is {OPENAI_KEY}; what do I drink?")
    # the builtin provider gets its arguments unredacted; the trace must still mask them
    manager.call_tool("memory", {{"action": "add", "target": "memory",
                                 "content": "Router admin password={PASSWORD}"}})
    manager.finish_turn("my key is {OPENAI_KEY}; what do I drink?", "tea")
    manager.subtask_finished("sync the notes", "failed", "child-1")
    manager.flush(5)
    manager.shutdown(timeout=2)
    print("DONE")
""")


def run(home: Path, trace: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMHOST_TRACE_HOOKS"}
    env["MEMHOST_HOME"] = str(home)
    if trace is not None:
        env["MEMHOST_TRACE_HOOKS"] = trace
    result = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "DONE"
    return result


def trace_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("memhost trace:")]


def test_trace_prints_each_hook_call_redacted(home: Path) -> None:
    result = run(home, "1")
    lines = trace_lines(result.stderr)
    calls = [re.match(r"memhost trace: (\S+) ([\d.]+)ms", line) for line in lines]
    assert all(calls), lines
    names = [m.group(1) for m in calls if m]
    for expected in ("builtin.initialize", "tracer.prefetch", "builtin.handle_tool_call",
                     "builtin.tool_schemas",
                     "tracer.sync_turn", "tracer.on_subtask"):
        assert expected in names, (expected, names)
    # arguments are shown...
    prefetch_line = next(line for line in lines if " tracer.prefetch " in line)
    assert "what do I drink?" in prefetch_line and "trace-session" in prefetch_line
    # ...failures are marked...
    assert any(" tracer.on_subtask " in line and "FAILED" in line for line in lines)
    # ...and no secret is ever printed, not even the builtin's unredacted arguments
    assert OPENAI_KEY not in result.stderr and PASSWORD not in result.stderr
    tool_line = next(line for line in lines if " builtin.handle_tool_call " in line)
    assert "Router admin password=[redacted]" in tool_line


@pytest.mark.parametrize("value", [None, "0"])
def test_no_trace_unless_asked(home: Path, value: str | None) -> None:
    assert trace_lines(run(home, value).stderr) == []
