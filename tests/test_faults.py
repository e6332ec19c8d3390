"""The fault suite: broken providers run through whole sessions, and the host never notices.

Every turn completes, the builtin memory keeps working (memory tool adds land in the file), and
status() names each fault: the provider, the hook and the error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, ShutdownReport, Turn, hookimpl
from providers_for_tests import (
    BadSchemas,
    bounded,
    Exits,
    Hangs,
    RaisesEverywhere,
    WrongSchemaContainer,
    WrongTypes,
)

#: Hooks a session calls (rotate is not: it follows session_end in one write, and when that
#: session_end fails the two are parked together, in order).
LIFECYCLE = ("prompt_fragment", "handle_tool_call", "prefetch", "queue_prefetch",
             "sync_turn", "session_end", "pre_compress", "on_builtin_write",
             "on_subtask", "shutdown")
#: What full_session writes for the provider: 4 syncs, 4 mirrored memory adds, a subtask, the
#: new-conversation rotation and the session end.
WRITES = 11


def full_session(manager: MemoryManager, provider_tool: str | None) -> dict[str, Any]:
    """start, prompt, tools, four turns with tool calls, pre_compress, a subtask, a rotation to a
    new conversation, end, and a short shutdown. Returns what the host saw."""
    seen: dict[str, Any] = {"turns": [], "tool_answers": []}
    manager.start_session("fault-1")
    seen["prompt"] = manager.system_prompt()
    seen["tools"] = [s["name"] for s in manager.tool_schemas()]
    transcript: list[dict[str, Any]] = []
    for n in range(4):
        if n == 3:
            manager.pre_compress(transcript)
            manager.subtask_finished("summarise the notes", "done", "child-1")
            manager.rotate("fault-2", "new", messages=transcript)
            transcript = []
        text = f"please keep fact number {n} in mind"
        turn = manager.begin_turn(text)
        seen["turns"].append(turn)
        answer = json.loads(manager.call_tool("memory", {
            "action": "add", "target": "memory", "content": f"Fault suite fact {n}"}))
        seen["tool_answers"].append(answer)
        if provider_tool is not None:
            seen["tool_answers"].append(json.loads(manager.call_tool(provider_tool, {"q": "x"})))
        reply = f"I noted fact {n}"
        transcript += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        manager.finish_turn(text, reply, messages=transcript)
    manager.end_session(transcript)
    seen["report"] = manager.shutdown(timeout=0.5)
    seen["status"] = manager.status()
    return seen


def run_bounded(manager: MemoryManager, provider_tool: str | None) -> dict[str, Any]:
    """Run the session on a thread so a hang fails the test instead of stalling the suite."""
    return bounded(lambda: full_session(manager, provider_tool))


def check_host_unharmed(home: Path, seen: dict[str, Any]) -> None:
    assert len(seen["turns"]) == 4 and all(isinstance(t, Turn) for t in seen["turns"])
    assert [t.context for t in seen["turns"]] == [""] * 4  # nothing bogus was injected
    memory_answers = [a for a in seen["tool_answers"] if "usage" in a or "entry_count" in a]
    assert len(memory_answers) == 4 and all(a["success"] is True for a in memory_answers)
    text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    for n in range(4):
        assert f"Fault suite fact {n}" in text
    assert "memory" in seen["tools"]
    assert "persistent memory" in seen["prompt"]
    assert isinstance(seen["report"], ShutdownReport)
    json.dumps(seen["status"])


def faults(status: dict[str, Any], name: str) -> dict[str, str]:
    """hook -> last error, for every hook of provider ``name`` that failed."""
    (entry,) = [p for p in status["providers"] if p["name"] == name]
    return {hook: c["last_error"] for hook, c in entry["calls"].items() if c["errors"]}


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    return MemoryManager.from_home(home, prefetch_timeout=0.2)


def test_provider_raising_in_every_hook(manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(RaisesEverywhere(starts=True), name="raiser")
    seen = run_bounded(manager, "raiser_tool")
    check_host_unharmed(home, seen)
    errors = faults(seen["status"], "raiser")
    for hook in LIFECYCLE:
        assert errors.get(hook, "").endswith(f"Boom: boom in {hook}"), (hook, errors)
    (entry,) = [p for p in seen["status"]["providers"] if p["name"] == "raiser"]
    assert entry["errors"] >= len(LIFECYCLE)
    assert "boom" in entry["last_error"]
    tool_error = seen["tool_answers"][1]
    assert tool_error["success"] is False and "boom in handle_tool_call" in tool_error["error"]
    assert [t.recall for t in seen["turns"]] == ["failed"] * 4
    # Every write failed for good: parked in failed/, counted, never silently dropped.
    assert seen["report"].status == "completed_with_loss"
    assert seen["report"].failed_writes == WRITES and seen["status"]["failed_writes"] == WRITES
    assert seen["report"].providers_shut_down == ("raiser", "builtin")
    assert seen["status"]["outbox_pending"] == 0
    folder = home / "outbox" / "raiser" / "failed"
    parked = [[hook for hook, _ in json.loads(p.read_text())["calls"]]
              for p in folder.glob("*.json")]
    assert len(parked) == WRITES and ["session_end", "rotate"] in parked
    assert entry["health"]["state"] == "degraded"


def test_provider_whose_initialize_raises_is_unavailable_for_the_session(
        manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(RaisesEverywhere(), name="raiser")
    seen = run_bounded(manager, "raiser_tool")
    check_host_unharmed(home, seen)
    # Nothing but initialize and shutdown was called: no turn waits on a provider that could
    # not start, and its writes wait in the outbox for a session that can start it.
    assert set(faults(seen["status"], "raiser")) == {"initialize", "shutdown"}
    assert [t.recall for t in seen["turns"]] == ["unavailable"] * 4
    assert "unavailable this session" in seen["tool_answers"][1]["error"]
    (problem,) = [p for p in seen["status"]["problems"] if p["provider"] == "raiser"]
    assert "boom in initialize" in problem["problem"]
    assert seen["report"].kept_in_outbox == WRITES and seen["status"]["outbox_pending"] == WRITES
    assert seen["report"].status == "completed_with_loss"


def test_provider_whose_tool_schemas_raise(manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(RaisesEverywhere(schemas_raise=True, starts=True),
                                     name="raiser")
    seen = run_bounded(manager, None)
    check_host_unharmed(home, seen)
    assert seen["tools"] == ["memory"]
    errors = faults(seen["status"], "raiser")
    assert "boom in tool_schemas" in errors["tool_schemas"]
    assert "boom in sync_turn" in errors["sync_turn"]


def test_provider_calling_sys_exit(manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(Exits(starts=True), name="exiter")
    seen = run_bounded(manager, "exiter_tool")
    check_host_unharmed(home, seen)
    errors = faults(seen["status"], "exiter")
    for hook in LIFECYCLE:
        assert "SystemExit" in errors.get(hook, ""), (hook, errors)
    assert "exit in sync_turn" in errors["sync_turn"]
    assert seen["tool_answers"][1]["success"] is False
    assert seen["report"].failed_writes == WRITES


def test_provider_hanging_in_prefetch_and_sync(manager: MemoryManager, home: Path) -> None:
    hanger = Hangs()
    assert manager.register_provider(hanger, name="hanger")
    try:
        seen = run_bounded(manager, "hanger_tool")
        check_host_unharmed(home, seen)
        assert [t.recall for t in seen["turns"]] == ["timed-out"] + ["skipped-stuck"] * 3
        assert len(hanger.of("prefetch")) == 1  # no new call while the first is stuck
        (entry,) = [p for p in seen["status"]["providers"] if p["name"] == "hanger"]
        prefetch = entry["prefetch"]
        assert prefetch["stuck"] is True and prefetch["timeouts"] == 1
        assert prefetch["skipped_while_stuck"] == 3 and prefetch["timeout_s"] == 0.2
        background = seen["status"]["background"]
        assert background["running"] == "sync_turn" and background["accepting"] is False
        report = seen["report"]
        assert report.status == "timed_out" and report.active_tasks == 1
        assert report.abandoned_writes >= 1 and report.kept_in_outbox >= report.abandoned_writes
        assert seen["status"]["shutdown"]["status"] == "timed_out"
        assert seen["tool_answers"][1]["success"] is True  # its own tool still answers
    finally:
        hanger.release.set()


def test_provider_returning_wrong_types(manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(WrongTypes(), name="wrongtypes")
    seen = run_bounded(manager, "wrongtypes_tool")
    check_host_unharmed(home, seen)
    errors = faults(seen["status"], "wrongtypes")
    assert errors["prompt_fragment"] == "prompt_fragment: returned dict, expected str or None"
    assert errors["prefetch"] == "prefetch: returned list, expected str or None"
    assert errors["handle_tool_call"] == "handle_tool_call: returned dict, expected str"
    assert errors["pre_compress"] == "pre_compress: returned int, expected str or None"
    assert errors["shutdown"] == "shutdown: returned str, expected dict or None"
    assert "{'not': 'text'}" not in seen["prompt"]
    assert seen["tool_answers"][1]["success"] is False
    assert [t.recall for t in seen["turns"]] == ["failed"] * 4


def test_provider_returning_one_schema_instead_of_a_list(manager: MemoryManager,
                                                         home: Path) -> None:
    assert manager.register_provider(WrongSchemaContainer(), name="onedict")
    seen = run_bounded(manager, None)
    check_host_unharmed(home, seen)
    assert seen["tools"] == ["memory"]
    assert faults(seen["status"], "onedict") == {
        "tool_schemas": "tool_schemas: returned dict, expected list or tuple"}


def test_provider_with_bad_tool_schemas(manager: MemoryManager, home: Path) -> None:
    assert manager.register_provider(BadSchemas(), name="schemas")
    seen = run_bounded(manager, "double_wrapped")
    check_host_unharmed(home, seen)
    assert seen["tools"] == ["memory", "double_wrapped", "single_wrapped", "dup_tool"]
    assert seen["tool_answers"][1]["tool"] == "double_wrapped"
    problems = [p for p in seen["status"]["problems"] if p["provider"] == "schemas"]
    for needle in ("'memory'", "'terminal'", "'dup_tool'", "no string 'name'", "'has spaces!'",
                   "'params_not_object'", "'string_params'", "not an object"):
        assert any(needle in p["problem"] for p in problems), needle


def test_keyboard_interrupt_is_not_swallowed(home: Path) -> None:
    class Interrupted:
        @hookimpl
        def prompt_fragment(self) -> str:
            raise KeyboardInterrupt

    manager = MemoryManager.from_home(home)
    manager.register_provider(Interrupted(), name="ctrlc")
    manager.start_session("s")
    with pytest.raises(KeyboardInterrupt):
        manager.system_prompt()
    manager.shutdown(timeout=1)
