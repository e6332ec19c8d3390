"""MemoryManager: tools, routing, mirrored builtin writes, turns and the review nudge, status."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from memhost import ConfigError, MemoryManager, hookimpl
from memhost.turns import is_trivial
from providers_for_tests import BAD_SCHEMAS, BadSchemas, Recorder, tool


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    m = MemoryManager.from_home(home)
    yield m
    m.shutdown(timeout=2)


def memory_file(home: Path, name: str = "MEMORY.md") -> str:
    path = home / "memories" / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def add(manager: MemoryManager, content: str, target: str = "memory") -> dict[str, Any]:
    return json.loads(manager.call_tool("memory", {"action": "add", "target": target,
                                                   "content": content}))


# -- tools ---------------------------------------------------------------------------------------


def test_builtin_comes_first_and_status_is_json(manager: MemoryManager, home: Path) -> None:
    manager.register_provider(Recorder(), name="rec")
    status = manager.status()
    json.dumps(status)
    assert [p["name"] for p in status["providers"]] == ["builtin", "rec"]
    assert [p["role"] for p in status["providers"]] == ["builtin", "external"]
    assert status["home"] == str(home)
    assert status["builtin_only"] is False


def test_tool_schemas_builtin_then_provider_in_bare_shape(manager: MemoryManager) -> None:
    manager.register_provider(Recorder(tools=[
        {"type": "function", "function": tool("recall_notes")}]), name="rec")
    schemas = manager.tool_schemas()
    assert [s["name"] for s in schemas] == ["memory", "recall_notes"]
    for schema in schemas:
        assert set(schema) == {"name", "description", "parameters"}
        assert schema["parameters"]["type"] == "object"
    # the host gets a copy: editing it changes nothing inside the manager
    schemas[0]["name"] = "changed"
    assert manager.tool_schemas()[0]["name"] == "memory"


def test_bad_schemas_are_dropped_and_each_reported(manager: MemoryManager,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="memhost"):
        manager.register_provider(BadSchemas(), name="schemas")
    names = [s["name"] for s in manager.tool_schemas()]
    assert names == ["memory", "double_wrapped", "single_wrapped", "dup_tool"]
    assert manager.status()["tools"] == {"memory": "builtin", "double_wrapped": "schemas",
                                         "single_wrapped": "schemas", "dup_tool": "schemas"}
    dup = next(s for s in manager.tool_schemas() if s["name"] == "dup_tool")
    assert dup["description"] == "first"
    problems = [p["problem"] for p in manager.status()["problems"] if p["provider"] == "schemas"]
    joined = "\n".join(problems)
    assert "'memory'" in joined and "reserved" in joined
    assert "'terminal'" in joined
    assert "'dup_tool'" in joined and "first one wins" in joined
    assert "no string 'name'" in joined
    assert "'has spaces!'" in joined
    assert "'params_not_object'" in joined and "'string_params'" in joined
    assert "str, not an object" in joined
    # one problem per dropped schema, each also logged as a warning
    assert len(problems) == len(BAD_SCHEMAS) - 3
    assert sum("schemas" in r.getMessage() for r in caplog.records) >= len(problems)
    # the builtin memory tool still answers
    assert add(manager, "Project uses tabs")["success"] is True


def test_reserved_names_can_be_extended_by_the_host(home: Path) -> None:
    manager = MemoryManager(home, reserved_tools=("host_search",))
    manager.register_provider(Recorder(tools=[tool("host_search"), tool("mine")]), name="rec")
    assert [s["name"] for s in manager.tool_schemas()] == ["memory", "mine"]
    manager.shutdown(timeout=1)


def test_reserved_names_from_config(home: Path) -> None:
    (home / "config.toml").write_text('[memory]\nreserved_tools = ["mine"]\n')
    configured = MemoryManager.from_home(home)
    configured.register_provider(Recorder(tools=[tool("host_search"), tool("mine")]), name="rec")
    assert [s["name"] for s in configured.tool_schemas()] == ["memory", "host_search"]
    configured.shutdown(timeout=1)


def test_raising_tool_schemas_leaves_a_working_provider(manager: MemoryManager) -> None:
    class NoSchemas(Recorder):
        @hookimpl
        def tool_schemas(self) -> list[dict[str, Any]]:
            raise RuntimeError("schema service down")

    rec = NoSchemas()
    assert manager.register_provider(rec, name="noschemas")
    assert [s["name"] for s in manager.tool_schemas()] == ["memory"]
    calls = manager.status()["providers"][1]["calls"]
    assert calls["tool_schemas"]["errors"] == 1
    assert "schema service down" in calls["tool_schemas"]["last_error"]
    manager.start_session("s")
    manager.finish_turn("please remember my birthday", "noted")
    assert manager.flush(5)
    assert rec.of("sync_turn")


def test_call_tool_routes_memory_and_provider_tools(manager: MemoryManager, home: Path) -> None:
    rec = Recorder(tools=[tool("recall_notes")])
    manager.register_provider(rec, name="rec")
    manager.start_session("sess-7")
    assert add(manager, "User's name is Ada")["success"] is True
    assert "User's name is Ada" in memory_file(home)
    answer = json.loads(manager.call_tool("recall_notes", {"q": "birthday"}))
    assert answer == {"success": True, "tool": "recall_notes", "echo": {"q": "birthday"}}
    # arguments given as a JSON string are parsed
    manager.call_tool("recall_notes", '{"q": "tea"}')
    assert [c["arguments"] for c in rec.of("handle_tool_call")] == [{"q": "birthday"}, {"q": "tea"}]
    assert {c["session_id"] for c in rec.of("handle_tool_call")} == {"sess-7"}
    assert all(c["tool_name"] == "recall_notes" for c in rec.of("handle_tool_call"))


@pytest.mark.parametrize("name, arguments, expected", [
    ("no_such_tool", {}, "No memory tool is named 'no_such_tool'"),
    ("recall_notes", "{not json", "not valid JSON"),
    # Deeper than Python's parser can recurse: bad JSON too, not a RecursionError in the turn.
    ("recall_notes", "[" * 100_000 + "]" * 100_000, "not valid JSON (it nests too deeply)"),
    ("memory", '{"action": "add", "content": ' + "[" * 100_000, "nests too deeply"),
    ("recall_notes", "[1, 2]", "must be a JSON object"),
], ids=["unknown tool", "bad JSON", "nested too deeply", "memory tool, nested too deeply",
       "not an object"])
def test_call_tool_errors_are_json(manager: MemoryManager, name: str, arguments: Any,
                                   expected: str) -> None:
    rec = Recorder(tools=[tool("recall_notes")])
    manager.register_provider(rec, name="rec")
    answer = json.loads(manager.call_tool(name, arguments))
    assert answer["success"] is False and expected in answer["error"]
    assert rec.of("handle_tool_call") == []


def test_unknown_tool_lists_what_is_available(manager: MemoryManager) -> None:
    answer = json.loads(manager.call_tool("recall", {}))
    assert answer["success"] is False
    assert "memory" in answer["error"]


def test_provider_tool_that_raises_gets_a_json_error(manager: MemoryManager) -> None:
    class Broken(Recorder):
        @hookimpl
        def handle_tool_call(self, tool_name: str) -> str:
            raise ValueError("index corrupted")

    manager.register_provider(Broken(tools=[tool("recall_notes")]), name="broken")
    answer = json.loads(manager.call_tool("recall_notes", {"q": "x"}))
    assert answer["success"] is False and "index corrupted" in answer["error"]


# -- mirrored builtin writes ---------------------------------------------------------------------


def mirrors(manager: MemoryManager, rec: Recorder) -> list[dict[str, Any]]:
    assert manager.flush(5)
    return rec.of("on_builtin_write")


def test_on_builtin_write_for_add_replace_remove(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s-mirror")
    add(manager, "User prefers dark roast coffee in the morning")
    manager.call_tool("memory", {"action": "replace", "target": "memory", "old_text": "dark roast",
                                 "content": "User prefers green tea in the morning"})
    manager.call_tool("memory", {"action": "remove", "target": "memory", "old_text": "green tea"})
    add(manager, "Ada, a compiler engineer", target="user")
    got = mirrors(manager, rec)
    assert got == [
        {"action": "add", "target": "memory", "content": "User prefers dark roast coffee in the morning",
         "previous_content": None, "session_id": "s-mirror", "origin": "foreground"},
        # previous_content is the whole committed entry, not the old_text search string
        {"action": "replace", "target": "memory", "content": "User prefers green tea in the morning",
         "previous_content": "User prefers dark roast coffee in the morning",
         "session_id": "s-mirror", "origin": "foreground"},
        {"action": "remove", "target": "memory", "content": "",
         "previous_content": "User prefers green tea in the morning",
         "session_id": "s-mirror", "origin": "foreground"},
        {"action": "add", "target": "user", "content": "Ada, a compiler engineer",
         "previous_content": None, "session_id": "s-mirror", "origin": "foreground"},
    ]


def test_on_builtin_write_once_per_op_of_a_batch(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    add(manager, "Old fact about the build system")
    add(manager, "Stale note about the CI runner")
    mirrors(manager, rec)
    rec.calls.clear()
    answer = json.loads(manager.call_tool("memory", {"target": "memory", "operations": [
        {"action": "remove", "old_text": "CI runner"},
        {"action": "replace", "old_text": "build system", "content": "Build uses meson"},
        {"action": "add", "content": "Tests run with pytest"},
    ]}))
    assert answer["success"] is True
    got = [(m["action"], m["content"], m["previous_content"]) for m in mirrors(manager, rec)]
    assert got == [("remove", "", "Stale note about the CI runner"),
                   ("replace", "Build uses meson", "Old fact about the build system"),
                   ("add", "Tests run with pytest", None)]


def test_no_on_builtin_write_for_failed_writes(home: Path) -> None:
    manager = MemoryManager.from_home(home, memory_char_limit=60)
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    assert add(manager, "A short fact")["success"] is True
    failures = [
        {"action": "add", "target": "memory", "content": "x" * 100},  # over budget
        {"action": "replace", "target": "memory", "old_text": "no such entry", "content": "y"},
        {"action": "remove", "target": "memory", "old_text": "absent"},
        {"action": "add", "target": "memory"},  # no content
        {"target": "memory", "operations": [{"action": "add", "content": "ok entry"},
                                            {"action": "remove", "old_text": "missing"}]},
    ]
    for args in failures:
        assert json.loads(manager.call_tool("memory", args))["success"] is False
    got = mirrors(manager, rec)
    assert [m["content"] for m in got] == ["A short fact"]
    assert "ok entry" not in memory_file(home)
    manager.shutdown(timeout=2)


def test_on_builtin_write_carries_the_writes_origin(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s-main")
    outcome = manager.store.add("memory", "Reviewer noticed the user likes Rust",
                                origin="background_review", session_id="s-main")
    assert outcome.ok
    (got,) = mirrors(manager, rec)
    assert got["origin"] == "background_review" and got["action"] == "add"


def test_builtin_writes_without_an_external_provider(manager: MemoryManager, home: Path) -> None:
    manager.start_session("s")
    assert add(manager, "Lone fact")["success"] is True
    assert "Lone fact" in memory_file(home)
    assert manager.status()["background"]["completed"] == 0
    assert not (home / "outbox").exists()


# -- turns ---------------------------------------------------------------------------------------


def review_flags(manager: MemoryManager, n: int, text: str = "tell me about rust") -> list[bool]:
    flags = []
    for _ in range(n):
        flags.append(manager.begin_turn(text).review_due)
        manager.finish_turn(text, "an answer")
    return flags


def test_review_due_every_nudge_interval(home: Path) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=3)
    manager.start_session("s")
    assert review_flags(manager, 7) == [False, False, True, False, False, True, False]
    manager.shutdown(timeout=1)


def test_review_nudge_zero_disables(home: Path) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=0)
    manager.start_session("s")
    assert review_flags(manager, 12) == [False] * 12
    manager.shutdown(timeout=1)


def test_review_needs_a_memory_store(home: Path) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=1, memory_enabled=False,
                                      user_profile_enabled=False)
    manager.start_session("s")
    assert review_flags(manager, 3) == [False] * 3
    assert manager.tool_schemas() == []
    manager.shutdown(timeout=1)


@pytest.mark.parametrize("prior", [0, 1, 3, 5, 8])
def test_resuming_continues_the_cadence(home: Path, prior: int) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=4)
    history = []
    for i in range(prior):
        history += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}]
    manager.start_session("s", history=history)
    flags = review_flags(manager, 5)
    # prior user turns count towards the interval (prior % interval), so the first review is
    # due after 4 - prior % 4 new turns, then every 4 turns
    first_due = 4 - prior % 4
    assert [i + 1 for i, due in enumerate(flags) if due] == [first_due] + (
        [first_due + 4] if first_due + 4 <= 5 else [])
    assert manager.status()["turns"] == prior + 5
    manager.shutdown(timeout=1)


def test_turn_numbers_continue_after_history(home: Path) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=5)
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
               {"role": "tool", "content": "c"}, {"role": "user", "content": "d"}]
    manager.start_session("s", history=history)
    assert manager.begin_turn("next question please").number == 3
    manager.shutdown(timeout=1)


def test_rotate_new_restarts_turns_and_cadence(home: Path) -> None:
    manager = MemoryManager.from_home(home, nudge_interval=2)
    manager.start_session("s1")
    assert review_flags(manager, 1) == [False]
    manager.rotate("s2", "new")
    assert review_flags(manager, 2) == [False, True]
    manager.rotate("s3", "resume")  # not a new conversation: the cadence goes on
    assert review_flags(manager, 2) == [False, True]
    manager.shutdown(timeout=1)


@pytest.mark.parametrize("text", ["ok", "OK.", "thanks!", "thank you", "/help", "/memory show",
                                  "", "   ", "go ahead...", "lgtm", "k"])
def test_trivial_prompts(text: str) -> None:
    assert is_trivial(text)


@pytest.mark.parametrize("text", ["ok so what's next", "k8s is down", "hello world",
                                  "thanks, and can you fix the build?", "note this", "yolo"])
def test_not_trivial_prompts(text: str) -> None:
    assert not is_trivial(text)


def test_trivial_turns_skip_prefetch_and_queue_prefetch(manager: MemoryManager) -> None:
    rec = Recorder(recall="the user likes tea")
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    for text in ("ok", "thanks!", "/help"):
        turn = manager.begin_turn(text)
        assert turn.recall == "skipped-trivial" and turn.context == ""
        manager.finish_turn(text, "sure")
    assert manager.flush(5)
    assert rec.of("prefetch") == [] and rec.of("queue_prefetch") == []
    assert [c["user_content"] for c in rec.of("sync_turn")] == ["ok", "thanks!", "/help"]
    turn = manager.begin_turn("what do I like to drink?")
    assert turn.recall == "ok" and "the user likes tea" in turn.context
    assert turn.context.startswith("<memory-context>")
    assert [c["query"] for c in rec.of("prefetch")] == ["what do I like to drink?"]


def test_multimodal_user_message_is_flattened(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    content = [{"type": "text", "text": "what is in this picture?"},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    manager.begin_turn(content)
    assert rec.of("prefetch")[0]["query"] == "what is in this picture?\n[image_url]"


def test_interrupted_or_empty_turns_are_not_synced(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    manager.finish_turn("explain monads", "partial answ", interrupted=True)
    manager.finish_turn("explain monads", "")
    manager.finish_turn("", "an answer")
    assert manager.flush(5)
    assert rec.of("sync_turn") == [] and rec.of("queue_prefetch") == []


def test_builtin_only_turn(manager: MemoryManager) -> None:
    manager.start_session("s")
    turn = manager.begin_turn("what did we decide yesterday?")
    assert (turn.number, turn.context, turn.recall) == (1, "", "no-provider")


# -- session -------------------------------------------------------------------------------------


def test_system_prompt_built_once_per_session(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    add(manager, "Snapshot fact one")
    manager.start_session("s1")
    first = manager.system_prompt()
    assert "Snapshot fact one" in first and "Recorder memory is active." in first
    assert first.index("Snapshot fact one") < first.index("Recorder memory is active.")
    add(manager, "Added during the session")
    assert manager.system_prompt() == first
    assert len(rec.of("prompt_fragment")) == 1
    manager.rotate("s2", "new")
    second = manager.system_prompt()
    assert "Added during the session" in second
    assert rec.of("prompt_fragment")[-1]["session_id"] == "s2"


def test_pre_compress_joins_what_providers_keep(manager: MemoryManager) -> None:
    rec = Recorder(keep="  keep: the user is on call this week  ")
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert manager.pre_compress(messages) == "keep: the user is on call this week"
    assert rec.of("pre_compress") == [{"session_id": "s", "messages": messages}]


def test_argument_validation(manager: MemoryManager, home: Path) -> None:
    with pytest.raises(ValueError, match="context"):
        manager.start_session("s", context="daemon")
    manager.start_session("s")
    with pytest.raises(ValueError, match="reason"):
        manager.rotate("s2", "restart")
    with pytest.raises(ConfigError, match="prefetch_timeout"):
        MemoryManager.from_home(home, prefetch_timeout=0.001)
    with pytest.raises(ConfigError, match="prefetch_timeout"):
        MemoryManager.from_home(home, prefetch_timeout=3600)
    assert MemoryManager.from_home(home, prefetch_timeout=0.05).config.memory.prefetch_timeout == 0.05


def test_confirm_callback_is_kept(manager: MemoryManager) -> None:
    def confirm(summary: str, detail: str) -> bool:
        return summary == "yes"

    manager.set_confirm_callback(confirm)
    assert manager.confirm_callback is confirm
    manager.set_confirm_callback(None)
    assert manager.confirm_callback is None


def test_from_home_uses_memhost_home(home: Path) -> None:
    manager = MemoryManager.from_home()
    assert manager.home == home
    manager.shutdown(timeout=1)


def test_provider_whose_outbox_cannot_be_opened_is_refused_loudly(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A file where the outbox folder should be: every write would be lost, so refuse.
    (home / "outbox").parent.mkdir(parents=True, exist_ok=True)
    (home / "outbox").write_text("not a folder")
    manager = MemoryManager.from_home(home)

    class Quiet:
        @hookimpl
        def sync_turn(self, user_content: str) -> None:
            pass

    with caplog.at_level("WARNING"):
        assert manager.register_provider(Quiet(), name="quiet") is False
    assert manager.status()["external_provider"] is None
    assert any("outbox" in p["problem"] for p in manager.status()["problems"])
    assert "outbox" in caplog.text
    manager.shutdown(1)
