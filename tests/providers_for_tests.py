"""Test providers shared by the manager, fault, background, outbox and egress tests.

A plain module (not a conftest): tests import what they need. Every provider here is an ordinary
memhost provider, registered with ``manager.register_provider(obj, name=...)``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memhost import hookimpl

ALL_HOOKS = (
    "check_available", "initialize", "prompt_fragment", "tool_schemas", "handle_tool_call",
    "prefetch", "queue_prefetch", "sync_turn", "session_end", "rotate", "pre_compress",
    "on_builtin_write", "on_subtask", "shutdown", "scratch_config",
)


def tool(name: str, description: str = "A test tool.") -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


def bounded(fn: Callable[[], Any], timeout: float = 30.0) -> Any:
    """``fn()`` on a daemon thread: its result, or a test failure when it has not returned
    within ``timeout`` (a hang fails the test instead of stalling the suite)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # surfaced below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "a host call hung"
    if "error" in box:
        raise box["error"]
    return box["value"]


def wait_for(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.005) -> Any:
    """Poll ``predicate`` until it is truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


class Recorder:
    """Implements every hook and records each call: ``calls`` is a list of ``(hook, kwargs)``.

    ``recall`` is what ``prefetch`` returns; ``tools`` are its tool schemas. Each call also
    records the thread it ran on, in ``threads``.
    """

    def __init__(self, *, recall: str | None = None, tools: list[dict[str, Any]] | None = None,
                 keep: str | None = None) -> None:
        self.recall = recall
        self.tools = tools if tools is not None else [tool("recorder_search")]
        self.keep = keep
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.threads: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def _record(self, hook: str, **kwargs: Any) -> None:
        with self.lock:
            self.calls.append((hook, kwargs))
            self.threads.append((hook, threading.current_thread().name))

    def of(self, hook: str) -> list[dict[str, Any]]:
        with self.lock:
            return [kwargs for name, kwargs in self.calls if name == hook]

    def hooks(self) -> list[str]:
        with self.lock:
            return [name for name, _ in self.calls]

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        self._record("check_available", config=config)
        return None

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any], context: str) -> None:
        self._record("initialize", session_id=session_id, home=home, config=config, context=context)

    @hookimpl
    def prompt_fragment(self, session_id: str) -> str | None:
        self._record("prompt_fragment", session_id=session_id)
        return "Recorder memory is active."

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        self._record("tool_schemas")
        return list(self.tools)

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any], session_id: str) -> str:
        self._record("handle_tool_call", tool_name=tool_name, arguments=arguments,
                     session_id=session_id)
        return json.dumps({"success": True, "tool": tool_name, "echo": arguments})

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        self._record("prefetch", query=query, session_id=session_id)
        return self.recall

    @hookimpl
    def queue_prefetch(self, query: str, session_id: str) -> None:
        self._record("queue_prefetch", query=query, session_id=session_id)

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        self._record("sync_turn", user_content=user_content, assistant_content=assistant_content,
                     session_id=session_id, messages=messages)

    @hookimpl
    def session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._record("session_end", session_id=session_id, messages=messages)

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        self._record("rotate", old_session_id=old_session_id, new_session_id=new_session_id,
                     reason=reason)

    @hookimpl
    def pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        self._record("pre_compress", session_id=session_id, messages=messages)
        return self.keep

    @hookimpl
    def on_builtin_write(self, action: str, target: str, content: str,
                         previous_content: str | None, session_id: str, origin: str) -> None:
        self._record("on_builtin_write", action=action, target=target, content=content,
                     previous_content=previous_content, session_id=session_id, origin=origin)

    @hookimpl
    def on_subtask(self, task: str, result: str, child_session_id: str, session_id: str) -> None:
        self._record("on_subtask", task=task, result=result, child_session_id=child_session_id,
                     session_id=session_id)

    @hookimpl
    def shutdown(self) -> dict[str, int] | None:
        self._record("shutdown")
        return None

    @hookimpl
    def scratch_config(self, config: dict[str, Any], home: Path) -> dict[str, Any] | None:
        self._record("scratch_config", config=config, home=home)
        return None


class WedgedSync(Recorder):
    """A recorder whose ``sync_turn`` blocks on ``release`` (an Event) before recording."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = threading.Event()
        self.entered = threading.Event()

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        self.entered.set()
        self.release.wait()
        super().sync_turn(user_content, assistant_content, session_id, messages)


class HangingPrefetch(Recorder):
    """A recorder whose ``prefetch`` blocks on ``release``, then returns ``late``."""

    def __init__(self, late: str = "LATE RESULT FROM TURN ONE", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = threading.Event()
        self.late = late
        self.prefetch_calls = 0

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        self.prefetch_calls += 1
        self._record("prefetch", query=query, session_id=session_id)
        if self.prefetch_calls == 1:
            self.release.wait()
            return self.late
        return self.recall


# -- the fault suite -------------------------------------------------------------------------------


class Boom(RuntimeError):
    pass


class RaisesEverywhere:
    """Raises in every hook. Its one tool still reaches the manager so that ``handle_tool_call``
    is exercised too: ``tool_schemas`` raises only when ``schemas_raise`` is set. With
    ``starts=True`` its ``initialize`` succeeds, so the session goes on calling its other hooks
    (a failed ``initialize`` makes it unavailable for the session)."""

    def __init__(self, *, schemas_raise: bool = False, starts: bool = False) -> None:
        self.schemas_raise = schemas_raise
        self.starts = starts

    @hookimpl
    def initialize(self, session_id: str) -> None:
        if not self.starts:
            raise Boom("boom in initialize")

    @hookimpl
    def prompt_fragment(self) -> str | None:
        raise Boom("boom in prompt_fragment")

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.schemas_raise:
            raise Boom("boom in tool_schemas")
        return [tool("raiser_tool")]

    @hookimpl
    def handle_tool_call(self, tool_name: str) -> str:
        raise Boom("boom in handle_tool_call")

    @hookimpl
    def prefetch(self, query: str) -> str | None:
        raise Boom("boom in prefetch")

    @hookimpl
    def queue_prefetch(self, query: str) -> None:
        raise Boom("boom in queue_prefetch")

    @hookimpl
    def sync_turn(self, user_content: str) -> None:
        raise Boom("boom in sync_turn")

    @hookimpl
    def session_end(self, session_id: str) -> None:
        raise Boom("boom in session_end")

    @hookimpl
    def rotate(self, new_session_id: str) -> None:
        raise Boom("boom in rotate")

    @hookimpl
    def pre_compress(self, messages: list[dict[str, Any]]) -> str | None:
        raise Boom("boom in pre_compress")

    @hookimpl
    def on_builtin_write(self, action: str) -> None:
        raise Boom("boom in on_builtin_write")

    @hookimpl
    def on_subtask(self, task: str) -> None:
        raise Boom("boom in on_subtask")

    @hookimpl
    def shutdown(self) -> None:
        raise Boom("boom in shutdown")


class Exits:
    """Calls ``sys.exit`` in every hook but ``tool_schemas`` (so its tool handler is reached);
    in ``initialize`` only unless ``starts``."""

    def __init__(self, *, starts: bool = False) -> None:
        self.starts = starts

    @hookimpl
    def initialize(self) -> None:
        if not self.starts:
            sys.exit(3)

    @hookimpl
    def prompt_fragment(self) -> str | None:
        sys.exit("exit in prompt_fragment")

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        return [tool("exiter_tool")]

    @hookimpl
    def handle_tool_call(self) -> str:
        sys.exit("exit in handle_tool_call")

    @hookimpl
    def prefetch(self) -> str | None:
        sys.exit("exit in prefetch")

    @hookimpl
    def queue_prefetch(self) -> None:
        sys.exit("exit in queue_prefetch")

    @hookimpl
    def sync_turn(self) -> None:
        sys.exit("exit in sync_turn")

    @hookimpl
    def session_end(self) -> None:
        sys.exit("exit in session_end")

    @hookimpl
    def rotate(self) -> None:
        sys.exit("exit in rotate")

    @hookimpl
    def pre_compress(self) -> str | None:
        sys.exit("exit in pre_compress")

    @hookimpl
    def on_builtin_write(self) -> None:
        sys.exit("exit in on_builtin_write")

    @hookimpl
    def on_subtask(self) -> None:
        sys.exit("exit in on_subtask")

    @hookimpl
    def shutdown(self) -> None:
        sys.exit("exit in shutdown")


class Hangs(Recorder):
    """``prefetch`` and ``sync_turn`` block until ``release`` is set (a test sets it at teardown)."""

    def __init__(self) -> None:
        super().__init__(tools=[tool("hanger_tool")])
        self.release = threading.Event()

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        self._record("prefetch", query=query, session_id=session_id)
        self.release.wait()
        return "too late"

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        self._record("sync_turn", user_content=user_content)
        self.release.wait()


class WrongTypes:
    """Returns the wrong type from every hook whose return value the manager uses."""

    @hookimpl
    def prompt_fragment(self) -> Any:
        return {"not": "text"}

    @hookimpl
    def tool_schemas(self) -> Any:
        return [tool("wrongtypes_tool")]

    @hookimpl
    def handle_tool_call(self) -> Any:
        return {"success": True}  # a dict, not a JSON string

    @hookimpl
    def prefetch(self) -> Any:
        return ["recall", "as", "a", "list"]

    @hookimpl
    def pre_compress(self) -> Any:
        return 42

    @hookimpl
    def queue_prefetch(self) -> Any:
        return object()

    @hookimpl
    def sync_turn(self) -> Any:
        return 3.5

    @hookimpl
    def shutdown(self) -> Any:
        return "bye"


class WrongSchemaContainer:
    """``tool_schemas`` returns one schema dict instead of a list of them."""

    @hookimpl
    def tool_schemas(self) -> Any:
        return tool("not_in_a_list")

    @hookimpl
    def sync_turn(self, user_content: str) -> None:
        pass


BAD_SCHEMAS: list[Any] = [
    "not a schema",
    {"type": "function", "function": {"type": "function",
                                      "function": tool("double_wrapped")}},  # kept, unwrapped
    {"type": "function", "function": tool("single_wrapped")},  # kept, unwrapped
    {"description": "a tool without a name", "parameters": {"type": "object"}},
    {"name": "", "description": "empty name"},
    {"name": 7, "description": "numeric name"},
    tool("memory"),  # reserved: the builtin memory tool
    tool("terminal"),  # reserved core tool
    tool("dup_tool", "first"),
    tool("dup_tool", "second"),  # duplicate: the first wins
    {"name": "params_not_object", "parameters": "nope"},
    {"name": "has spaces!", "parameters": {"type": "object"}},
    {"name": "string_params", "parameters": {"type": "string"}},
]


class BadSchemas(Recorder):
    """Hands in malformed, double-wrapped, nameless, reserved-name and duplicate schemas."""

    def __init__(self) -> None:
        super().__init__(tools=list(BAD_SCHEMAS))


def secrets_in(value: Any, secrets: tuple[str, ...]) -> list[str]:
    """Every secret of ``secrets`` that occurs in any string inside ``value``."""
    found = []
    for text in _strings(value):
        found.extend(s for s in secrets if s in text)
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set)):
        for item in value:
            yield from _strings(item)
    elif value is not None and not isinstance(value, (int, float, bool, Path)):
        yield repr(value)

