"""The chat-completions client against a real local HTTP server: answers, tool calls, streaming,
and every error path a user meets (no server, bad key, rate limit, timeout, no tool support)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_llm import FakeLLM, call, text_reply, tools_reply

from memhost.config import ReviewSettings
from memhost.review.llm import ModelError, OpenAIChatModel, chat_completions_url
from memhost.schema.envstore import EnvStore

KEY_ENV = "MEMHOST_TEST_LLM_KEY"
MEMORY_TOOL = {"name": "memory", "description": "save things",
               "parameters": {"type": "object", "properties": {}}}


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def client(server: FakeLLM, home: Path, **options: object) -> OpenAIChatModel:
    options.setdefault("sleep", lambda seconds: None)
    return OpenAIChatModel(server.url, "fake-model", api_key_env=KEY_ENV, home=home, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- answers --------------------------------------------------------------------------------------


def test_a_text_answer_and_the_request_it_came_from(server: FakeLLM, home: Path) -> None:
    server.script(text_reply("Hello there."))
    reply = client(server, home).complete([{"role": "user", "content": "hi"}], [MEMORY_TOOL])
    assert reply.content == "Hello there."
    assert reply.tool_calls == ()
    [request] = server.log()
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "fake-model"
    assert request.messages == [{"role": "user", "content": "hi"}]
    # Bare schemas go out in the wrapped shape the API expects.
    assert request.body["tools"] == [{"type": "function", "function": MEMORY_TOOL}]
    assert "authorization" not in request.headers  # no key configured, none sent


def test_tool_calls_come_back_parsed_and_round_trip_as_a_message(server: FakeLLM, home: Path) -> None:
    server.script(tools_reply(call("memory", {"action": "add", "target": "user",
                                              "content": "Likes tea"}, "call_a")))
    reply = client(server, home).complete([{"role": "user", "content": "x"}], [MEMORY_TOOL])
    [tool_call] = reply.tool_calls
    assert (tool_call.id, tool_call.name) == ("call_a", "memory")
    assert tool_call.parsed_arguments() == {"action": "add", "target": "user", "content": "Likes tea"}
    assert reply.finish_reason == "tool_calls"
    message = reply.as_message()
    assert message["tool_calls"][0]["function"]["name"] == "memory"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"])["content"] == "Likes tea"


def test_streaming_assembles_text_and_tool_call_fragments(server: FakeLLM, home: Path) -> None:
    server.script({"content": "Saving that for you now.",
                   "tool_calls": [call("memory", {"action": "add", "target": "memory",
                                                  "content": "Project uses uv"}, "c1")]})
    pieces: list[str] = []
    reply = client(server, home).stream([{"role": "user", "content": "x"}], [MEMORY_TOOL],
                                        on_text=pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == "Saving that for you now."
    assert reply.content == "Saving that for you now."
    assert reply.tool_calls[0].parsed_arguments()["content"] == "Project uses uv"
    assert server.log()[0].body["stream"] is True


def test_the_api_key_comes_from_the_env_store_file(server: FakeLLM, home: Path) -> None:
    EnvStore(home).set(KEY_ENV, "sk-test-file-key-123456789")
    server.script(text_reply("ok"))
    client(server, home).complete([{"role": "user", "content": "x"}])
    assert server.log()[0].headers["authorization"] == "Bearer sk-test-file-key-123456789"


@pytest.mark.parametrize(("base", "endpoint"), [
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/chat/completions"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/chat/completions"),
    ("https://api.example.com/openai/v1/", "https://api.example.com/openai/v1/chat/completions"),
    ("http://h/v1/chat/completions", "http://h/v1/chat/completions"),
])
def test_base_urls_are_normalised(base: str, endpoint: str) -> None:
    assert chat_completions_url(base) == endpoint


def test_a_base_url_that_is_not_http_is_refused_clearly() -> None:
    with pytest.raises(ModelError, match="not a model server URL"):
        chat_completions_url("localhost:8080")


def test_settings_without_a_server_say_which_key_to_set(home: Path) -> None:
    with pytest.raises(ModelError, match=r"\[review\] base_url"):
        OpenAIChatModel.from_settings(ReviewSettings(model="m"), home)
    with pytest.raises(ModelError, match=r"\[review\] model"):
        OpenAIChatModel.from_settings(ReviewSettings(base_url="http://127.0.0.1:1"), home)


# -- errors a user can act on ---------------------------------------------------------------------


def test_connection_refused_names_the_url_and_says_the_server_is_not_running(home: Path) -> None:
    port = free_port()
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", home=home, sleep=lambda s: None)
    with pytest.raises(ModelError) as caught:
        model.complete([{"role": "user", "content": "x"}])
    message = str(caught.value)
    assert caught.value.kind == "connection"
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in message
    assert "connection refused" in message and "not running" in message
    assert "[review] base_url" in message


def test_401_without_a_key_names_the_env_key_to_set(server: FakeLLM, home: Path) -> None:
    server.script({"status": 401, "error": "Missing API key"})
    with pytest.raises(ModelError) as caught:
        client(server, home).complete([{"role": "user", "content": "x"}])
    message = str(caught.value)
    assert caught.value.kind == "auth" and caught.value.status == 401
    assert KEY_ENV in message and str(home / ".env") in message
    assert "none is set" in message and "never in config.toml" in message


def test_401_with_a_wrong_key_never_prints_the_key(server: FakeLLM, home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-wrong-but-secret-value-9876543210"
    monkeypatch.setenv(KEY_ENV, secret)
    # Servers like to echo the key they rejected.
    server.script({"status": 401, "error": f"Incorrect API key provided: {secret}"},
                  {"status": 403, "error": "forbidden"})
    for status in (401, 403):
        with pytest.raises(ModelError) as caught:
            client(server, home).complete([{"role": "user", "content": "x"}])
        message = str(caught.value)
        assert caught.value.status == status
        assert "rejected the API key" in message and KEY_ENV in message
        assert secret not in message and "9876543210" not in message
    assert server.log()[0].headers["authorization"] == f"Bearer {secret}"


def test_429_then_success_retries_and_honours_retry_after(server: FakeLLM, home: Path) -> None:
    server.script({"status": 429, "error": "slow down", "headers": {"Retry-After": "2"}},
                  {"status": 503, "error": "overloaded"},
                  text_reply("finally"))
    waits: list[float] = []
    reply = client(server, home, sleep=waits.append).complete([{"role": "user", "content": "x"}])
    assert reply.content == "finally"
    assert len(server.log()) == 3
    assert waits[0] == 2.0  # exactly what Retry-After asked for
    assert 0 < waits[1] <= 1.25  # then plain backoff with jitter


def test_a_rate_limit_that_never_ends_gives_up_with_advice(server: FakeLLM, home: Path) -> None:
    server.script(*[{"status": 429, "error": "rate limited"}] * 3)
    with pytest.raises(ModelError) as caught:
        client(server, home, max_retries=2).complete([{"role": "user", "content": "x"}])
    assert caught.value.kind == "rate_limit"
    assert "HTTP 429" in str(caught.value) and "after 3 attempts" in str(caught.value)
    assert "nudge_interval" in str(caught.value)
    assert len(server.log()) == 3


def test_a_retry_after_longer_than_the_cap_is_not_waited_for(server: FakeLLM, home: Path) -> None:
    server.script({"status": 429, "error": "come back tomorrow", "headers": {"Retry-After": "86400"}})
    waits: list[float] = []
    with pytest.raises(ModelError, match="HTTP 429"):
        client(server, home, sleep=waits.append).complete([{"role": "user", "content": "x"}])
    assert waits == [] and len(server.log()) == 1


def test_a_timeout_says_how_long_and_which_setting_to_raise(server: FakeLLM, home: Path) -> None:
    server.script({"delay": 1.5, "content": "too late"})
    with pytest.raises(ModelError) as caught:
        client(server, home, timeout=0.3).complete([{"role": "user", "content": "x"}])
    message = str(caught.value)
    assert caught.value.kind == "timeout"
    assert "did not answer within 0.3s" in message and "[review] timeout" in message
    assert server.url in message


def test_a_model_without_tool_support_is_named_as_such(server: FakeLLM, home: Path) -> None:
    server.script({"status": 400, "error": "tools param requires --jinja flag"})
    with pytest.raises(ModelError) as caught:
        client(server, home).complete([{"role": "user", "content": "x"}], [MEMORY_TOOL])
    message = str(caught.value)
    assert caught.value.kind == "tools_unsupported"
    assert "'fake-model'" in message and "does not accept tool calls" in message
    assert "--jinja" in message


def test_a_wrong_path_and_an_unknown_model_are_told_apart(server: FakeLLM, home: Path) -> None:
    wrong = OpenAIChatModel(server.url + "/chat/completions/nope", "m", home=home)
    wrong.url = server.url.replace("/v1", "/api/nope")
    with pytest.raises(ModelError, match="No chat-completions endpoint"):
        wrong.complete([{"role": "user", "content": "x"}])
    server.script({"status": 404, "error": "model 'llama9' not found"})
    with pytest.raises(ModelError, match=r"does not know the model 'fake-model'"):
        client(server, home).complete([{"role": "user", "content": "x"}])


def test_importing_memhost_does_not_import_httpx() -> None:
    # The recall engine too: its default embedder is none, and only the HTTP one needs httpx.
    code = ("import sys, memhost, memhost.review.llm, memhost.review.background, "
            "memhost.review.approval, memhost.manager, memhost.recall.provider, "
            "memhost.recall.embedding; "
            "assert 'httpx' not in sys.modules, 'httpx was imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ}, timeout=60)
    assert result.returncode == 0, result.stderr
