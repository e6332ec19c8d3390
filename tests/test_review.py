"""The background review, run by a real MemoryManager against a scripted chat-completions
server on 127.0.0.1: what it saves, what it refuses, what it never touches, and how it stops."""

from __future__ import annotations

import copy
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_llm import FakeLLM, call, text_reply, tools_reply

from memhost import MemoryManager, hookimpl
from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import MemoryStore
from memhost.config import update_config
from memhost.review.background import (
    NOTHING_TO_SAVE,
    REVIEW_PROMPT,
    Reviewer,
    deny_on_review_thread,
    in_review_thread,
    render_transcript,
)
from memhost.review.llm import AssistantMessage
from memhost.turns import flatten_content

REVIEW_MARK = REVIEW_PROMPT[:60]


def classify(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    first = messages[0].get("content") or ""
    return "review" if isinstance(first, str) and first.startswith(REVIEW_MARK) else "chat"


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with FakeLLM(classify) as fake:
        yield fake


def configure(home: Path, server_url: str, **memory: Any) -> None:
    changes: dict[tuple[str, ...], Any] = {("review", "base_url"): server_url,
                                           ("review", "model"): "fake-model",
                                           ("memory", "nudge_interval"): 1}
    changes.update({("memory", key): value for key, value in memory.items()})
    update_config(home, changes)


class Host:
    """A minimal host: it keeps the conversation and persists every message it adds."""

    def __init__(self, manager: MemoryManager) -> None:
        self.manager = manager
        self.messages: list[dict[str, Any]] = []
        self.persisted: list[dict[str, Any]] = []
        self.summaries: list[str] = []
        if manager.reviewer is not None:
            manager.reviewer.on_summary = self.summaries.append

    def persist(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.persisted.append(copy.deepcopy(message))

    def turn(self, user: str, reply: str, *, interrupted: bool = False) -> Any:
        turn = self.manager.begin_turn(user)
        self.persist({"role": "user", "content": user})
        self.persist({"role": "assistant", "content": reply})
        self.manager.finish_turn(user, reply, interrupted=interrupted, messages=self.messages)
        return turn


def start(home: Path, server: FakeLLM, **memory: Any) -> Host:
    configure(home, server.url, **memory)
    manager = MemoryManager.from_home(home)
    assert manager.reviewer is not None
    manager.start_session("session-1")
    return Host(manager)


def user_md(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def finish(host: Host, timeout: float = 10.0) -> dict[str, Any]:
    assert host.manager.reviewer.wait(timeout), "the review did not finish"
    return host.manager.status()["review"]["last"]


# -- what it saves --------------------------------------------------------------------------------


def test_a_stated_preference_ends_up_in_user_md(home: Path, server: FakeLLM) -> None:
    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User prefers metric units."})),
                  text_reply("Saved the unit preference."), queue="review")
    host = start(home, server)
    turn = host.turn("Please always give distances in kilometres, I prefer metric units.",
                     "Understood: kilometres from now on.")
    assert turn.review_due
    last = finish(host)

    assert "User prefers metric units." in user_md(home)
    assert last["status"] == "saved" and last["model_calls"] == 2
    assert host.summaries == ["User profile updated"]
    assert last["summary"] == "User profile updated"
    meta = entrymeta.load(home / "memories" / "USER.md")
    assert [record["origin"] for record in meta.values()] == ["background_review"]

    first = server.log("review")[0]
    assert first.tool_names == ["memory"], "the review may be offered the memory tool only"
    assert first.messages[0]["role"] == "system" and first.messages[0]["content"].startswith(REVIEW_MARK)
    assert "I prefer metric units" in first.messages[1]["content"]
    assert server.log("chat") == []


def test_nothing_to_save_changes_nothing(home: Path, server: FakeLLM) -> None:
    MemoryStore(home).add("user", "User's name is Dana.")
    server.script(text_reply(NOTHING_TO_SAVE), queue="review")
    host = start(home, server)  # the session start saves its scores (USER.md.scan.json)
    before = {p.name: p.read_bytes() for p in (home / "memories").iterdir() if p.is_file()}
    host.turn("What is 17 * 3?", "51.")
    last = finish(host)

    assert last["status"] == "nothing" and last["model_calls"] == 1 and last["writes"] == []
    after = {p.name: p.read_bytes() for p in (home / "memories").iterdir() if p.is_file()}
    assert after == before
    assert host.summaries == [] and last["summary"] == ""
    assert not (home / "pending").exists()
    # The reviewer is shown memory as it is now, so it does not save a fact twice.
    assert "User's name is Dana." in server.log("review")[0].messages[0]["content"]


def test_the_review_model_gets_the_conversation_with_its_secrets_masked(
        home: Path, server: FakeLLM) -> None:
    """The review model may be another party than the host's own: the transcript leaves as a
    turn leaves for a provider."""
    token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    server.script(text_reply(NOTHING_TO_SAVE), queue="review")
    host = start(home, server)
    host.turn(f"Deploy with my token {token} please.", "Deployed.")
    assert finish(host)["status"] == "nothing"
    sent = json.dumps([r.body for r in server.log("review")])
    assert token not in sent
    assert "Deploy with my token [redacted] please." in sent


def test_a_call_to_any_other_tool_is_refused_with_a_message(home: Path, server: FakeLLM) -> None:
    server.script(tools_reply(call("terminal", {"command": "rm -rf ~"}, "call_t")),
                  tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User works night shifts."})),
                  text_reply("Saved."), queue="review")
    host = start(home, server)
    host.turn("I work night shifts, so reply briefly.", "Will do.")
    last = finish(host)

    assert last["refused_tools"] == ["terminal"]
    second = server.log("review")[1]
    [answer] = [m for m in second.messages if m.get("role") == "tool"]
    assert answer["tool_call_id"] == "call_t"
    refusal = json.loads(answer["content"])
    assert refusal["success"] is False
    assert "may call only the `memory` tool" in refusal["error"] and "`terminal`" in refusal["error"]
    # Refused, not fatal: the model still gets to use memory afterwards.
    assert "User works night shifts." in user_md(home)
    assert last["status"] == "saved"


def test_the_review_never_reaches_the_hosts_history_or_the_external_provider(
        home: Path, server: FakeLLM) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.calls: list[tuple[str, Any]] = []

        @hookimpl
        def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                      messages: list[dict[str, Any]]) -> None:
            self.calls.append(("sync_turn", copy.deepcopy(messages)))

        @hookimpl
        def on_builtin_write(self, action: str, target: str, content: str,
                             previous_content: str | None, session_id: str, origin: str) -> None:
            self.calls.append(("on_builtin_write", {"action": action, "target": target,
                                                    "content": content, "origin": origin}))

        @hookimpl
        def prefetch(self, query: str, session_id: str) -> str | None:
            self.calls.append(("prefetch", query))
            return None

    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User is vegetarian."})),
                  text_reply("Saved."), queue="review")
    host = start(home, server)
    recorder = Recorder()
    assert host.manager.register_provider(recorder, name="recorder")
    host.turn("I'm vegetarian; suggest a dinner.", "Try a mushroom risotto.")
    finish(host)
    assert host.manager.flush(5)

    # The host's history is exactly what it wrote itself, and holds nothing of the review.
    assert host.messages == host.persisted
    assert [m["role"] for m in host.persisted] == ["user", "assistant"]
    persisted_text = json.dumps(host.persisted)
    assert REVIEW_MARK not in persisted_text and "Nothing to save" not in persisted_text
    # The external provider saw the turn and the review's mirrored write, nothing else of it.
    hooks = [name for name, _ in recorder.calls]
    assert hooks.count("on_builtin_write") == 1
    write = next(value for name, value in recorder.calls if name == "on_builtin_write")
    assert write == {"action": "add", "target": "user", "content": "User is vegetarian.",
                     "origin": "background_review"}
    assert REVIEW_MARK not in json.dumps(recorder.calls)


def test_a_review_still_running_is_cancelled_when_the_next_turn_begins(
        home: Path, server: FakeLLM) -> None:
    server.script({"delay": 3.0, **tools_reply(call("memory", {
        "action": "add", "target": "user", "content": "User has a cat named Miso."}))},
        queue="review")
    host = start(home, server)
    host.turn("My cat Miso knocked my coffee over.", "Oh no! Poor keyboard.")
    assert server.wait_for_requests(1, "review")
    assert host.manager.reviewer.running

    started = time.monotonic()
    host.manager.begin_turn("Anyway, what's the weather like on Mars?")
    assert time.monotonic() - started < 2.5, "begin_turn waited past the 2 s bound"
    assert not host.manager.reviewer.running
    last = host.manager.status()["review"]["last"]
    assert last["status"] == "cancelled"

    time.sleep(3.2)  # the server's late answer arrives; it must be dropped
    assert "Miso" not in user_md(home)
    assert len(server.log("review")) == 1


def test_dont_remember_this_is_in_the_prompt_and_a_complying_model_writes_nothing(
        home: Path, server: FakeLLM) -> None:
    server.script(text_reply(NOTHING_TO_SAVE), queue="review")
    host = start(home, server)
    host.turn("My salary is 95k and I'm job hunting. Don't remember this, it's private.",
              "Understood, I won't keep that.")
    last = finish(host)

    [request] = server.log("review")
    system = request.messages[0]["content"]
    assert "don't remember this" in system and "don't save that" in system
    assert "save nothing of it and nothing derived from it" in system
    assert "Don't remember this, it's private." in request.messages[1]["content"]
    assert last["status"] == "nothing" and user_md(home) == ""
    assert not (home / "memories" / "USER.md").exists()


def test_an_interrupted_turn_starts_no_review(home: Path, server: FakeLLM) -> None:
    host = start(home, server)
    host.turn("I like tea", "Tea is gre", interrupted=True)
    assert host.manager.reviewer.last is None and server.log() == []


def test_one_review_at_a_time(home: Path, server: FakeLLM) -> None:
    server.script({"delay": 0.8, "content": NOTHING_TO_SAVE}, queue="review")
    configure(home, server.url)
    manager = MemoryManager.from_home(home)
    reviewer = manager.reviewer
    conversation = [{"role": "user", "content": "I like tea"}, {"role": "assistant", "content": "ok"}]
    assert reviewer.start(conversation, session_id="s")
    assert not reviewer.start(conversation, session_id="s")
    assert reviewer.wait(5)
    assert reviewer.status()["skipped_busy"] == 1 and len(server.log()) == 1


def test_model_calls_are_bounded_by_max_iterations(home: Path, server: FakeLLM) -> None:
    counter = iter(range(1000))
    server.default["review"] = lambda body: tools_reply(call("memory", {
        "action": "add", "target": "memory", "content": f"Fact number {next(counter)}."}))
    configure(home, server.url)
    update_config(home, {("review", "max_iterations"): 3})
    manager = MemoryManager.from_home(home)
    reviewer = manager.reviewer
    reviewer.start([{"role": "user", "content": "Tell me facts"}], session_id="s")
    assert reviewer.wait(10)
    assert len(server.log("review")) == 3
    assert reviewer.last.status == "limit" and reviewer.last.model_calls == 3


def test_a_model_failure_is_logged_and_never_reaches_the_turn(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    configure(home, f"http://127.0.0.1:{port}/v1")
    manager = MemoryManager.from_home(home)
    manager.start_session("s")
    host = Host(manager)
    with caplog.at_level(logging.WARNING, logger="memhost.review.background"):
        host.turn("I am left-handed.", "Noted.")  # must not raise
        assert manager.reviewer.wait(10)
    last = manager.status()["review"]["last"]
    assert last["status"] == "failed" and "connection refused" in last["error"]
    assert any("background review failed" in r.getMessage() for r in caplog.records)
    assert host.summaries == []


def test_the_transcript_is_bounded_and_leaves_out_recall_and_system_text() -> None:
    messages = [{"role": "system", "content": "SYSTEM PROMPT TEXT"}]
    for number in range(50):
        messages.append({"role": "user", "content": f"message {number} " + "x" * 300})
        messages.append({"role": "assistant", "content": f"reply {number}"})
    messages.append({"role": "user", "content": "last question\n\n<memory-context>\n[System note: "
                     "recalled]\n\nUser owns a boat\n</memory-context>"})
    text, left_out = render_transcript(messages, 2_000)
    assert len(text) <= 2_000 + 60
    assert left_out > 0 and text.startswith(f"[{left_out} earlier messages left out")
    assert text.endswith("USER: last question")
    assert "SYSTEM PROMPT TEXT" not in text and "boat" not in text


def test_the_request_size_follows_max_chars(home: Path, server: FakeLLM) -> None:
    server.script(text_reply(NOTHING_TO_SAVE), queue="review")
    configure(home, server.url)
    update_config(home, {("review", "max_chars"): 3_000})
    manager = MemoryManager.from_home(home)
    history = [{"role": "user", "content": "y" * 2_000} for _ in range(20)]
    manager.reviewer.start(history, session_id="s")
    assert manager.reviewer.wait(5)
    [request] = server.log("review")
    assert len(request.messages[1]["content"]) < 3_000 + 400


def test_a_prompt_raised_on_the_review_thread_is_denied_without_asking() -> None:
    asked: list[str] = []

    def dangerous_command_prompt(command: str) -> bool:
        asked.append(command)
        return True

    guarded = deny_on_review_thread(dangerous_command_prompt)
    seen: dict[str, Any] = {}

    class Model:
        model = "in-process"

        def complete(self, messages: Any, tools: Any = None) -> AssistantMessage:
            seen["in_review"] = in_review_thread()
            seen["answer"] = guarded("rm -rf /")
            return AssistantMessage(NOTHING_TO_SAVE)

    store = MemoryStore(Path("/nonexistent-memhost-home"))
    reviewer = Reviewer(store, Model())
    assert reviewer.start([{"role": "user", "content": "hello there"}])
    assert reviewer.wait(5)
    assert seen == {"in_review": True, "answer": False} and asked == []
    # On the host's own thread the prompt is asked as usual.
    assert not in_review_thread()
    assert guarded("ls") is True and asked == ["ls"]


def test_a_hanging_model_does_not_hold_up_cancel() -> None:
    release = threading.Event()

    class Stuck:
        def complete(self, messages: Any, tools: Any = None) -> AssistantMessage:
            release.wait(30)
            return AssistantMessage(NOTHING_TO_SAVE)

    reviewer = Reviewer(MemoryStore(Path("/nonexistent-memhost-home")), Stuck())
    reviewer.start([{"role": "user", "content": "hello there"}])
    time.sleep(0.1)
    assert reviewer.cancel() is True
    assert reviewer.last.status == "cancelled"
    release.set()


def test_from_home_builds_the_reviewer_only_when_it_is_configured(home: Path) -> None:
    assert MemoryManager.from_home(home).reviewer is None  # no server set
    update_config(home, {("review", "base_url"): "http://127.0.0.1:9/v1",
                         ("review", "model"): "m"})
    manager = MemoryManager.from_home(home)
    assert isinstance(manager.reviewer, Reviewer)
    status = manager.status()["review"]
    assert status["running"] is False and status["model"] == "m" and status["max_iterations"] == 8
    update_config(home, {("review", "enabled"): False})
    assert MemoryManager.from_home(home).reviewer is None
    update_config(home, {("review", "enabled"): True, ("review", "base_url"): "localhost:8080"})
    manager = MemoryManager.from_home(home)
    assert manager.reviewer is None
    assert any("background review off" in p["problem"] for p in manager.status()["problems"])


def test_flattened_content_of_the_turn_is_reviewed() -> None:
    # Multimodal user content is reviewed as its text parts.
    text, _ = render_transcript([{"role": "user", "content": [
        {"type": "text", "text": "I paint watercolours"}, {"type": "image_url", "image_url": {}}]}],
        1_000)
    assert "I paint watercolours" in text and flatten_content("x") == "x"
