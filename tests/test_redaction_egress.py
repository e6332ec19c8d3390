"""Egress redaction: no secret reaches a provider unmasked, through any hook, and the host's own
objects are never changed on the way."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, hookimpl
from memhost.security.redact import MASK
from providers_for_tests import Recorder, secrets_in, tool

OPENAI_KEY = "sk-" + "Abc123XyZ" * 3
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 4
PASSWORD = "Tr0ub4dor-Horse-Staple"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
BEARER = "eyJhbGciOi.opaque-session-token-1234567890"
SECRETS = (OPENAI_KEY, GITHUB_TOKEN, PASSWORD, AWS_KEY, BEARER)

EGRESS_HOOKS = ("sync_turn", "prefetch", "queue_prefetch", "session_end", "pre_compress",
                "on_builtin_write", "on_subtask", "handle_tool_call")


def transcript() -> list[dict[str, Any]]:
    """A transcript with a secret in the user's message, in a tool result and nested deep in a
    message field (a tool call's JSON arguments, multimodal parts, metadata headers)."""
    return [
        {"role": "system", "content": "Be brief."},  # no secret: shared unless copied
        {"role": "user", "content": f"my key is {OPENAI_KEY}, keep it handy"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call-1", "type": "function",
            "function": {"name": "terminal",
                         "arguments": json.dumps({"env": {"GITHUB_TOKEN": GITHUB_TOKEN}})}}]},
        {"role": "tool", "tool_call_id": "call-1",
         "content": f"export password={PASSWORD}\naws_access_key_id {AWS_KEY}"},
        {"role": "user", "content": [{"type": "text", "text": f"also {GITHUB_TOKEN}"}],
         "metadata": {"headers": {"Authorization": f"Bearer {BEARER}"}}},
        # the model repeats the password bare: masked because it was seen as a secret above
        {"role": "assistant", "content": f"Your password is {PASSWORD}."},
    ]


class Mutating(Recorder):
    """Also edits everything it receives, to show the host's objects are not shared."""

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        super().sync_turn(user_content, assistant_content, session_id, copy.deepcopy(messages))
        messages.append({"role": "provider", "content": "mutated"})
        for message in messages:
            if isinstance(message, dict):
                message["content"] = "mutated"

    @hookimpl
    def pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        super().pre_compress(session_id, copy.deepcopy(messages))
        messages.clear()
        return None

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any], session_id: str) -> str:
        answer = super().handle_tool_call(tool_name, copy.deepcopy(arguments), session_id)
        arguments["nested"]["list"].append("mutated")
        arguments["q"] = "mutated"
        return answer


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    m = MemoryManager.from_home(home)
    yield m
    m.shutdown(timeout=2)


def test_no_secret_reaches_any_hook(manager: MemoryManager, home: Path) -> None:
    spy = Mutating(tools=[tool("notes_search")])
    manager.register_provider(spy, name="spy")
    manager.start_session("s1")

    messages = transcript()
    user = messages[1]["content"]
    reply = messages[-1]["content"]
    arguments = {"q": f"find {OPENAI_KEY}", "nested": {"list": [f"password={PASSWORD}"]}}
    originals = copy.deepcopy((messages, arguments))

    manager.begin_turn(user)
    manager.call_tool("notes_search", arguments)
    add = manager.call_tool("memory", {"action": "add", "target": "memory",
                                       "content": f"Staging DB password={PASSWORD}"})
    assert json.loads(add)["success"] is False  # the builtin store refuses a secret...
    memory_file = home / "memories" / "MEMORY.md"  # ...but a file edited by hand may hold one
    memory_file.parent.mkdir(parents=True, exist_ok=True)
    memory_file.write_text(f"Staging DB password={PASSWORD}", encoding="utf-8")
    manager.call_tool("memory", {"action": "replace", "target": "memory", "old_text": "Staging DB",
                                 "content": "Staging DB password is in the vault"})
    manager.finish_turn(user, reply, messages=messages)
    manager.pre_compress(messages)
    manager.subtask_finished(f"clone with {GITHUB_TOKEN}", f"cloned; password={PASSWORD}", "child")
    manager.rotate("s2", "new", messages=messages)
    manager.end_session(messages)
    assert manager.flush(5)

    # every egress hook was reached, with the secret-bearing payload masked
    for hook in EGRESS_HOOKS:
        assert spy.of(hook), f"{hook} was never called"
        assert secrets_in(spy.of(hook), SECRETS) == [], hook
    assert secrets_in(spy.calls, SECRETS) == []
    assert MASK in json.dumps(spy.calls, default=str)

    (sync,) = spy.of("sync_turn")
    assert sync["assistant_content"] == f"Your password is {MASK}."  # masked where repeated bare
    assert sync["user_content"] == f"my key is {MASK}, keep it handy"
    assert len(sync["messages"]) == len(messages)
    assert spy.of("prefetch")[0]["query"] == f"my key is {MASK}, keep it handy"
    assert spy.of("handle_tool_call")[0]["arguments"] == {
        "q": f"find {MASK}", "nested": {"list": [f"password={MASK}"]}}
    (mirrored,) = spy.of("on_builtin_write")  # the refused add was never mirrored
    assert mirrored["previous_content"] == f"Staging DB password={MASK}"
    assert [len(e["messages"]) for e in spy.of("session_end")] == [len(messages)] * 2

    # the host's objects are exactly what they were, although the provider edited its copies
    assert (messages, arguments) == originals


def test_secret_in_a_tool_result_masks_its_bare_repeats(manager: MemoryManager) -> None:
    spy = Recorder()
    manager.register_provider(spy, name="spy")
    manager.start_session("s")
    token = "Zq9-unusual-shape-token-77"
    messages = [{"role": "tool", "content": f"api_key: {token}"},
                {"role": "assistant", "content": f"I used {token} to log in"}]
    manager.finish_turn(f"which token did you use? {token}", f"I used {token}", messages=messages)
    assert manager.flush(5)
    assert secrets_in(spy.calls, (token,)) == []
    (sync,) = spy.of("sync_turn")
    assert sync["user_content"] == f"which token did you use? {MASK}"
    assert sync["messages"][1]["content"] == f"I used {MASK} to log in"


@pytest.mark.parametrize("secret, text", [
    ("sk-proj-" + "a1" * 12, "key sk-proj-" + "a1" * 12),
    ("xoxb-263594206564-2343314145-m3Vx8QzK1pLr7TnW2yB9cJ4d",
     "slack xoxb-263594206564-2343314145-m3Vx8QzK1pLr7TnW2yB9cJ4d"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("MIIEowIBAAKCAQEA", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"),
    ("hunter2hunter2", "password: hunter2hunter2"),
    ("hunter2hunter2", "postgres://app:hunter2hunter2@db.internal/main"),
    ("hunter2hunter2", "export DB_PASSWORD=hunter2hunter2"),
    ("abcdef123456", "GITHUB_TOKEN=abcdef123456"),
    ("Zq8r2LmW0pXv", "MY_API_KEY: Zq8r2LmW0pXv"),
])
def test_common_secret_shapes_are_masked_in_sync(manager: MemoryManager, secret: str,
                                                 text: str) -> None:
    spy = Recorder()
    manager.register_provider(spy, name="spy")
    manager.start_session("s")
    manager.finish_turn(f"remember this: {text}", "ok, noted",
                        messages=[{"role": "user", "content": {"nested": [text]}}])
    assert manager.flush(5)
    assert secrets_in(spy.calls, (secret,)) == []
    assert spy.of("sync_turn")


def test_a_secret_is_refused_by_the_builtin_memory(manager: MemoryManager, home: Path) -> None:
    # Memory goes into every system prompt: a secret is refused, with why and what to do.
    manager.start_session("s")
    answer = json.loads(manager.call_tool("memory", {"action": "add", "target": "memory",
                                                     "content": f"VPN password={PASSWORD}"}))
    assert answer["success"] is False
    assert "secret" in answer["error"] and "system prompt" in answer["error"]
    memory = home / "memories" / "MEMORY.md"
    assert not memory.exists() or PASSWORD not in memory.read_text(encoding="utf-8")


def test_secret_as_a_dict_value_is_masked(manager: MemoryManager) -> None:
    spy = Recorder()
    manager.register_provider(spy, name="spy")
    manager.start_session("s")
    manager.finish_turn("connect to the database", "connected", messages=[
        {"role": "tool", "content": "ok", "arguments": {"password": "hunter2hunter2"}}])
    assert manager.flush(5)
    assert secrets_in(spy.calls, ("hunter2hunter2",)) == []


def test_a_secret_value_this_process_holds_is_masked_whatever_it_looks_like(
        manager: MemoryManager) -> None:
    # A provider's password read from .env (the env store remembers every value it reads) can
    # be plain words no rule recognises; the user may still type it in a turn.
    from memhost.security import masking

    plain = "plumtree-harbor-quince"
    spy = Recorder()
    manager.register_provider(spy, name="spy")
    manager.start_session("s")
    try:
        manager.finish_turn(f"the tea blend is {plain}", "noted")
        assert manager.flush(5)
        assert plain in spy.of("sync_turn")[0]["user_content"]  # no rule reads it as a secret...
        masking.remember(plain)  # ...until the process holds it as one
        manager.finish_turn(f"again: {plain}", "noted", messages=[
            {"role": "user", "content": {"nested": [f"again: {plain}"]}}])
        assert manager.flush(5)
        later = spy.of("sync_turn")[1]
        assert later["user_content"] == f"again: {MASK}"
        assert secrets_in([later], (plain,)) == []
    finally:
        masking.forget_all()


def test_a_held_secret_never_reaches_the_prompt_even_from_an_entry_scored_before(
        home: Path) -> None:
    # Saved as an ordinary note (no rule reads it as a secret), then configured as a password:
    # the entry's saved score predates that; the entry is withheld all the same, as a fresh
    # score would have it, and memory show says why.
    from memhost.security import masking

    plain = "plumtree-harbor-quince"
    first = MemoryManager.from_home(home)
    first.start_session("s1")
    saved = json.loads(first.call_tool("memory", {"action": "add", "target": "memory",
                                                  "content": f"The tea blend is {plain}."}))
    assert saved["success"], saved
    first.shutdown(timeout=2)
    second = MemoryManager.from_home(home)
    second.start_session("s2")  # scores the entry and saves the score
    assert plain in second.system_prompt()
    second.shutdown(timeout=2)
    masking.remember(plain)
    third = MemoryManager.from_home(home)
    third.start_session("s3")  # reads the saved score: nothing scores the entry again
    try:
        prompt = third.system_prompt()
        assert plain not in prompt and "The tea blend" not in prompt
        assert "[BLOCKED: an entry of MEMORY.md is withheld from the prompt (it holds the " \
               "value of a configured secret)" in prompt
    finally:
        third.shutdown(timeout=2)
        masking.forget_all()


def test_a_text_scored_before_its_value_became_a_secret_is_refused_after(home: Path) -> None:
    # The scorer keeps what it read of each text; the values of secrets a process holds are
    # read on every call, so a text it passed a moment ago is refused once it holds one.
    from memhost.builtin_providers.store import MemoryStore
    from memhost.security import masking, scorer

    plain = "plumtree-harbor-quince"
    text = f"The tea blend is {plain}."
    store = MemoryStore(home)
    assert scorer.refusal_reading(text).reasons == ()
    assert store.add("memory", text).ok and store.remove("memory", "tea blend").ok
    masking.remember(plain)
    try:
        assert "secret_value" in scorer.refusal_reading(text).reasons
        refused = store.add("memory", text)
        assert not refused.ok and refused.response.get("blocked_pattern") == "secret_value"
        assert plain not in json.dumps(refused.response)
    finally:
        masking.forget_all()
    assert store.add("memory", text).ok  # forgotten: an ordinary note again
