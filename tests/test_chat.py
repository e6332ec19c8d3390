"""``memhost chat`` driven end to end: the real console script in a subprocess with stdin piped,
against a scripted chat-completions server on 127.0.0.1; plus the host class in-process for
recall, /new and resuming."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_llm import FakeLLM, call, text_reply, tools_reply

from memhost import MemoryManager, hookimpl
from memhost.cli.chat import BASE_PROMPT, ChatHost
from memhost.config import update_config
from memhost.review.background import REVIEW_PROMPT
from memhost.review.llm import OpenAIChatModel
from cli_runner import run_memhost

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))
REVIEW_MARK = REVIEW_PROMPT[:60]


def classify(body: dict[str, Any]) -> str:
    first = body["messages"][0].get("content") or ""
    return "review" if first.startswith(REVIEW_MARK) else "chat"


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with FakeLLM(classify) as fake:
        yield fake


def chat(home: Path, server: FakeLLM, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT, "the memhost console script is not installed next to this Python"
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    env.pop("MEMHOST_REVIEW_API_KEY", None)
    return run_memhost(["chat", "--base-url", server.url, "--model", "fake-model", *args],
                       input=stdin, env=env, timeout=60)


def user_entries(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_chat_session_end_to_end(home: Path, server: FakeLLM) -> None:
    update_config(home, {("memory", "nudge_interval"): 1, ("review", "base_url"): server.url,
                         ("review", "model"): "fake-review-model"})
    server.script(
        tools_reply(call("memory", {"action": "add", "target": "user",
                                    "content": "User's name is Dana."})),
        # The model echoes a recall fence: it must not reach the terminal.
        text_reply("Nice to meet you, Dana!\n<memory-context>\nsecret recall\n"
                   "</memory-context>\nEnjoy your tea."),
        queue="chat")
    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User loves green tea."})),
                  text_reply("Saved the tea preference."), queue="review")

    result = chat(home, server, "Hi, I'm Dana and I love green tea.\n/memory\n/pending\n/quit\n",
                  "--session", "walkthrough-1")
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "memhost chat: fake-model at " + server.url in out
    assert "session walkthrough-1" in out
    assert "[memory] memory (user): Entry added." in out
    assert "Nice to meet you, Dana!" in out and "Enjoy your tea." in out
    assert "secret recall" not in out and "memory-context" not in out
    assert "USER.md (user):" in out and "[1] User's name is Dana." in out
    assert "No memory writes are waiting for approval." in out
    assert "[memory] User profile updated" in out  # the review's summary, before the exit report
    assert "memory shutdown: drained" in out
    assert "last memory review: saved (User profile updated)" in out
    assert out.index("User profile updated") < out.index("memory shutdown:")

    assert "User's name is Dana." in user_entries(home)
    assert "User loves green tea." in user_entries(home)

    first, second = server.log("chat")
    system = first.messages[0]
    assert system["role"] == "system" and system["content"].startswith(BASE_PROMPT)
    assert "persistent memory" in system["content"]  # the builtin provider's fragment
    assert first.tool_names == ["memory"] and first.body["stream"] is True
    assert second.messages[-1]["role"] == "tool"
    assert json.loads(second.messages[-1]["content"])["success"] is True
    [review] = server.log("review")[:1]
    assert "green tea" in review.messages[1]["content"]

    log = home / "chats" / "walkthrough-1.jsonl"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    persisted = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [m["role"] for m in persisted] == ["user", "assistant", "tool", "assistant"]
    assert persisted[0]["content"] == "Hi, I'm Dana and I love green tea."
    assert REVIEW_MARK not in log.read_text(encoding="utf-8")
    assert "secret recall" not in log.read_text(encoding="utf-8")


def test_approval_prompts_inline_allow_and_deny(home: Path, server: FakeLLM) -> None:
    update_config(home, {("memory", "write_approval"): True, ("memory", "nudge_interval"): 0})
    server.script(
        tools_reply(call("memory", {"action": "add", "target": "user", "content": "User likes tea."})),
        text_reply("Saved."),
        tools_reply(call("memory", {"action": "add", "target": "user",
                                    "content": "User hates coffee."})),
        text_reply("Understood, not saved."),
        queue="chat")
    result = chat(home, server, "Remember that I like tea\ny\nAnd that I hate coffee\nn\n/quit\n",
                  "--no-stream")
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "The model wants to add to the user profile (USER.md):" in out
    assert "    User likes tea." in out
    assert "Allow this memory write once? [y/N] y" in out
    assert "Allow this memory write once? [y/N] n" in out
    assert "not saved: Denied by the user" in out
    assert "review off" in out and "write approval on" in out  # no [review] model set
    assert "User likes tea." in user_entries(home)
    assert "coffee" not in user_entries(home)
    denied = json.loads(server.log("chat")[3].messages[-1]["content"])
    assert denied["denied"] is True and denied["success"] is False


def test_a_model_error_is_shown_and_the_chat_goes_on(home: Path, server: FakeLLM) -> None:
    server.script({"status": 401, "error": "no key"}, text_reply("Second try worked."), queue="chat")
    result = chat(home, server, "hello there\nhello again\n/quit\n", "--api-key-env", "MY_CHAT_KEY")
    assert result.returncode == 0, result.stderr
    assert "needs an API key" in result.stdout and "MY_CHAT_KEY" in result.stdout
    assert "Second try worked." in result.stdout
    assert "Traceback" not in result.stderr


def test_without_a_server_setting_chat_says_what_to_set(home: Path) -> None:
    assert SCRIPT
    result = run_memhost(["chat"], input="", timeout=60,
                         env={**os.environ, "MEMHOST_HOME": str(home)})
    assert result.returncode == 2
    assert "[chat] base_url" in result.stderr and "--base-url" in result.stderr


def test_a_model_for_the_chat_alone_does_not_turn_the_review_on(home: Path,
                                                                 server: FakeLLM) -> None:
    update_config(home, {("memory", "nudge_interval"): 1})
    server.script(text_reply("Hello!"), text_reply("Hello again!"), queue="chat")
    result = chat(home, server, "Hi, I'm Dana.\nI like green tea.\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "review off" in result.stdout
    assert server.log("review") == [] and len(server.log("chat")) == 2


def test_the_chat_reads_its_own_settings(home: Path, server: FakeLLM) -> None:
    assert SCRIPT
    update_config(home, {("chat", "base_url"): server.url, ("chat", "model"): "chat-model",
                         ("chat", "api_key_env"): "MY_CHAT_KEY"})
    server.script(text_reply("Hello from the chat model."), queue="chat")
    result = run_memhost(["chat", "--no-stream"], input="hello\n/quit\n", timeout=60,
                         env={**os.environ, "MEMHOST_HOME": str(home),
                              "MY_CHAT_KEY": "sk-chat-test"})
    assert result.returncode == 0, result.stderr
    assert "Hello from the chat model." in result.stdout and "review off" in result.stdout
    [request] = server.log("chat")
    assert request.body["model"] == "chat-model"
    assert request.headers["authorization"] == "Bearer sk-chat-test"


def test_a_chat_for_one_user_of_the_home(home: Path, server: FakeLLM) -> None:
    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User's name is Gil."})),
                  text_reply("Hi Gil."), queue="chat")
    result = chat(home, server, "I'm Gil.\n/quit\n", "--no-stream", "--session", "gil-1")
    assert result.returncode == 0
    assert SCRIPT
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "User's name is Hana."})),
                  text_reply("Hi Hana."), queue="chat")
    result = run_memhost(["--user", "hana", "chat", "--base-url", server.url,
                          "--model", "fake-model", "--no-stream", "--session", "hana-1"],
                         input="I'm Hana.\n/quit\n", env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    user_home = home / "users" / "hana"
    assert (user_home / "memories" / "USER.md").read_text(encoding="utf-8") == (
        "User's name is Hana.")
    assert (user_home / "chats" / "hana-1.jsonl").exists()
    assert "Hana" not in user_entries(home) and "Gil" in user_entries(home)


# -- in-process ---------------------------------------------------------------------------------


class Recall:
    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        return "User owns a sailboat named Petrel."


def host(home: Path, server: FakeLLM, stdin: str, session: str = "s1") -> tuple[ChatHost, io.StringIO]:
    manager = MemoryManager.from_home(home)
    model = OpenAIChatModel(server.url, "fake-model", home=home, sleep=lambda s: None)
    out = io.StringIO()
    return ChatHost(manager, model, session, stdin=io.StringIO(stdin), stdout=out), out


def test_recall_is_fenced_into_the_sent_message_but_not_the_session_log(
        home: Path, server: FakeLLM) -> None:
    update_config(home, {("memory", "nudge_interval"): 0})
    server.script(text_reply("Enjoy sailing!"), queue="chat")
    chat_host, out = host(home, server, "What should I do this weekend?\n/quit\n")
    assert chat_host.manager.register_provider(Recall(), name="recall")
    assert chat_host.run() == 0

    [request] = server.log("chat")
    sent = request.messages[-1]["content"]
    assert sent.startswith("What should I do this weekend?\n\n<memory-context>")
    assert "sailboat named Petrel" in sent and sent.rstrip().endswith("</memory-context>")
    persisted = (home / "chats" / "s1.jsonl").read_text(encoding="utf-8")
    assert "Petrel" not in persisted and "memory-context" not in persisted
    assert "Enjoy sailing!" in out.getvalue() and "memory: recall;" in out.getvalue()


def test_new_starts_a_session_that_sees_the_saved_memory(home: Path, server: FakeLLM) -> None:
    update_config(home, {("memory", "nudge_interval"): 0})
    server.script(
        tools_reply(call("memory", {"action": "add", "target": "memory",
                                    "content": "The project deploys with Fly.io."})),
        text_reply("Noted."), text_reply("You deploy with Fly.io."), queue="chat")
    chat_host, out = host(home, server, "We deploy with Fly.io\n/new\nHow do we deploy?\n/quit\n")
    assert chat_host.run() == 0
    first, _, third = server.log("chat")
    assert "Fly.io" not in first.messages[0]["content"]  # the snapshot is frozen per session...
    assert "The project deploys with Fly.io." in third.messages[0]["content"]  # ...and /new reloads it
    assert [m["role"] for m in third.messages] == ["system", "user"]  # a fresh conversation
    assert "new session chat-" in out.getvalue()
    assert chat_host.session_id != "s1"
    assert (home / "chats" / f"{chat_host.session_id}.jsonl").exists()


def test_session_resumes_its_conversation(home: Path, server: FakeLLM) -> None:
    update_config(home, {("memory", "nudge_interval"): 0})
    server.script(text_reply("Hello!"), text_reply("You said hello."), queue="chat")
    first, _ = host(home, server, "hello\n/quit\n", session="resume-me")
    assert first.run() == 0
    second, out = host(home, server, "what did I say?\n/quit\n", session="resume-me")
    assert second.run() == 0
    request = server.log("chat")[1]
    assert [m["content"] for m in request.messages[1:]] == ["hello", "Hello!", "what did I say?"]
    assert "session resume-me (resumed, 1 turns)" in out.getvalue()
