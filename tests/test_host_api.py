"""What a host needs around the manager: tool schemas in each API's shape, tool calls as each API
sends them back, the context manager and the typed read of the builtin memory."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from memhost import MemoryEntry, MemoryManager
from providers_for_tests import Recorder, tool

ADD = {"action": "add", "target": "user", "content": "User's name is Ada."}


@pytest.fixture
def memory(home: Path) -> MemoryManager:
    made = MemoryManager.from_home(home)
    made.register_provider(Recorder(tools=[tool("lookup")]), name="recorder")
    made.start_session("chat-1")
    yield made
    made.shutdown()


def user_entries(home: Path) -> str:
    return (home / "memories" / "USER.md").read_text(encoding="utf-8")


# -- tool_schemas(format=...) ----------------------------------------------------------------------

def test_bare_is_the_default_shape(memory: MemoryManager) -> None:
    bare = memory.tool_schemas()
    assert [s["name"] for s in bare] == ["memory", "lookup"]
    assert set(bare[0]) == {"name", "description", "parameters"}
    assert memory.tool_schemas(format="bare") == bare


def test_openai_shape_is_what_chat_completions_takes(memory: MemoryManager) -> None:
    bare = memory.tool_schemas()
    wrapped = memory.tool_schemas(format="openai")
    assert wrapped == [{"type": "function", "function": schema} for schema in bare]
    for item in wrapped:
        jsonschema.Draft202012Validator.check_schema(item["function"]["parameters"])


def test_anthropic_shape_is_what_messages_takes(memory: MemoryManager) -> None:
    bare = memory.tool_schemas()
    shaped = memory.tool_schemas(format="anthropic")
    assert shaped == [{"name": s["name"], "description": s["description"],
                       "input_schema": s["parameters"]} for s in bare]


def test_an_unknown_format_says_which_exist(memory: MemoryManager) -> None:
    with pytest.raises(ValueError, match="bare, openai, anthropic"):
        memory.tool_schemas(format="gemini")


def test_shaped_schemas_are_copies(memory: MemoryManager) -> None:
    memory.tool_schemas(format="openai")[0]["function"]["name"] = "changed"
    memory.tool_schemas(format="anthropic")[0]["input_schema"]["type"] = "changed"
    assert memory.tool_schemas()[0]["name"] == "memory"
    assert memory.tool_schemas()[0]["parameters"]["type"] == "object"


# -- call_tool accepts each API's tool call ----------------------------------------------------------

OPENAI_CALL = {"id": "call_1", "type": "function",
               "function": {"name": "memory", "arguments": json.dumps(ADD)}}
ANTHROPIC_BLOCK = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": ADD}
RESPONSES_ITEM = {"type": "function_call", "call_id": "fc_1", "name": "memory",
                  "arguments": json.dumps(ADD)}


@pytest.mark.parametrize("call", [
    OPENAI_CALL, ANTHROPIC_BLOCK, RESPONSES_ITEM,
    # The SDKs' objects carry the same fields as attributes.
    SimpleNamespace(id="call_1", type="function",
                    function=SimpleNamespace(name="memory", arguments=json.dumps(ADD))),
    SimpleNamespace(type="tool_use", id="toolu_1", name="memory", input=ADD),
], ids=["openai", "anthropic", "responses", "openai-object", "anthropic-object"])
def test_call_tool_reads_each_api_shape(memory: MemoryManager, home: Path, call: object) -> None:
    answer = json.loads(memory.call_tool(call))
    assert answer["success"] is True, answer
    assert "User's name is Ada." in user_entries(home)


def test_call_tool_still_takes_a_name_and_arguments(memory: MemoryManager, home: Path) -> None:
    assert json.loads(memory.call_tool("memory", ADD))["success"] is True
    assert json.loads(memory.call_tool("memory", json.dumps(
        {**ADD, "content": "User likes tea."})))["success"] is True
    assert "User likes tea." in user_entries(home)


def test_a_provider_tool_gets_the_parsed_arguments(memory: MemoryManager) -> None:
    recorder = memory._providers.get("recorder").plugin  # type: ignore[union-attr]
    memory.call_tool({"type": "tool_use", "id": "t", "name": "lookup", "input": {"q": "x"}})
    memory.call_tool({"id": "c", "type": "function",
                      "function": {"name": "lookup", "arguments": '{"q": "y"}'}})
    assert [c["arguments"] for c in recorder.of("handle_tool_call")] == [{"q": "x"}, {"q": "y"}]


@pytest.mark.parametrize("call", [42, {"id": "x"}, SimpleNamespace(type="text", text="hi")])
def test_what_is_no_tool_call_gets_an_answer_saying_what_is(memory: MemoryManager,
                                                              call: object) -> None:
    answer = json.loads(memory.call_tool(call))
    assert answer["success"] is False
    assert "OpenAI tool_call" in answer["error"] and "Anthropic tool_use" in answer["error"]


def test_a_call_object_and_arguments_together_are_refused(memory: MemoryManager, home: Path) -> None:
    answer = json.loads(memory.call_tool(OPENAI_CALL, ADD))
    assert answer["success"] is False and "not both" in answer["error"]
    assert not (home / "memories" / "USER.md").exists()


def test_bad_json_arguments_in_an_openai_call_are_reported(memory: MemoryManager) -> None:
    answer = json.loads(memory.call_tool({"id": "c", "type": "function",
                                          "function": {"name": "memory", "arguments": "{oops"}}))
    assert answer["success"] is False and "not valid JSON" in answer["error"]


# -- context manager ---------------------------------------------------------------------------------

def test_with_shuts_down_even_when_the_host_raises(home: Path) -> None:
    recorder = Recorder()
    with pytest.raises(RuntimeError, match="host failed"):
        with MemoryManager.from_home(home) as memory:
            memory.register_provider(recorder, name="recorder")
            memory.start_session("chat-1")
            memory.begin_turn("Remember that the launch is on Friday.")
            memory.finish_turn("Remember that the launch is on Friday.", "Noted.")
            raise RuntimeError("host failed")
    assert memory.closed
    assert memory.status()["shutdown"]["status"] == "drained"
    assert recorder.of("sync_turn") and "shutdown" in recorder.hooks()


# -- entries(target) --------------------------------------------------------------------------------

def test_entries_are_typed_with_their_metadata(memory: MemoryManager, home: Path) -> None:
    assert memory.entries("user") == []
    memory.call_tool("memory", ADD)
    memory.call_tool("memory", {"action": "add", "target": "memory", "content": "Deploys on Tuesdays."})
    (home / "memories" / "USER.md").write_text(
        user_entries(home) + "\n§\nAdded by hand.", encoding="utf-8")
    saved, by_hand = memory.entries("user")
    assert isinstance(saved, MemoryEntry)
    assert (saved.target, saved.index, saved.text) == ("user", 1, "User's name is Ada.")
    assert saved.origin == "foreground" and saved.session == "chat-1"
    assert isinstance(saved.created, float) and saved.updated == saved.created
    assert saved.pinned is False and saved.review_after is None
    assert (by_hand.index, by_hand.text, by_hand.created, by_hand.origin) == (
        2, "Added by hand.", None, None)
    assert [e.text for e in memory.entries()] == ["Deploys on Tuesdays."]


def test_entries_show_curation_marks(memory: MemoryManager) -> None:
    import datetime

    memory.call_tool("memory", ADD)
    memory.store.update_metadata("user", "User's name is Ada.", pinned=True,
                                 review_after="2031-05-01")
    [entry] = memory.entries("user")
    assert entry.pinned is True and entry.review_after == datetime.date(2031, 5, 1)


def test_entries_of_an_unknown_target(memory: MemoryManager) -> None:
    with pytest.raises(ValueError, match="'memory' or 'user'"):
        memory.entries("notes")
