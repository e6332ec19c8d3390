"""The memhost hook specification: the whole lifecycle of a memory provider.

A provider implements any subset of these hooks, and may accept fewer arguments than a hook
names. The manager calls each provider's hooks itself (builtin first), one provider at a time,
with every call isolated: an exception is logged and counted, never allowed to break the turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("memhost")

Message = dict[str, Any]


@hookspec
def check_available(config: dict[str, Any]) -> str | None:
    """At registration, before ``initialize``, on the host's thread. Must not block: no
    network. Return ``None`` when usable, else a reason a person can act on."""


@hookspec
def initialize(session_id: str, home: Path, config: dict[str, Any], context: str) -> None:
    """Once per session, on the host's thread; may block briefly (open a connection).
    ``context`` is ``primary``, ``subagent``, ``cron`` or ``review``; only ``primary`` sessions
    should write."""


@hookspec
def prompt_fragment(session_id: str) -> str | None:
    """When the system prompt is built (once per session), on the host's thread; must not
    block. Static text, or ``None``."""


@hookspec
def tool_schemas() -> list[dict[str, Any]]:
    """At registration, on the host's thread, before the manager changes any state; must not
    block. Bare function schemas ``{"name", "description", "parameters"}``."""


@hookspec
def handle_tool_call(tool_name: str, arguments: dict[str, Any], session_id: str) -> str:
    """When the model calls one of this provider's tools, on the host's thread; the model
    waits for the answer, so block only as long as the tool needs. Returns a JSON string."""


@hookspec
def prefetch(query: str, session_id: str) -> str | None:
    """Before each turn, on a prefetch thread, joined for at most ``memory.prefetch_timeout``.
    Should not block: return raw recalled text (the manager fences it) or ``None``, fast."""


@hookspec
def queue_prefetch(query: str, session_id: str) -> None:
    """After a turn, on the background worker, to warm the next ``prefetch``. May block."""


@hookspec
def sync_turn(user_content: str, assistant_content: str, session_id: str,
              messages: list[Message]) -> None:
    """After each completed, uninterrupted turn, on the background worker, in turn order.
    May block; raise ``memhost.RetryableError`` for a passing failure."""


@hookspec
def session_end(session_id: str, messages: list[Message]) -> None:
    """At a real session boundary, on the background worker. May block."""


@hookspec
def rotate(old_session_id: str, new_session_id: str, reason: str) -> None:
    """The session id changed without teardown (``new``, ``resume``, ``branch``, ``compress``,
    ``rewind``), on the background worker, after any ``session_end`` of the old id. May
    block."""


@hookspec
def pre_compress(session_id: str, messages: list[Message]) -> str | None:
    """Before the host compresses its context, on the host's thread; blocks the compression,
    so keep it short. Return text the summary must keep, or ``None``."""


@hookspec
def on_builtin_write(action: str, target: str, content: str, previous_content: str | None,
                     session_id: str, origin: str) -> None:
    """After a builtin memory write committed (external providers only; never for staged or
    failed writes), on the background worker. May block."""


@hookspec
def on_subtask(task: str, result: str, child_session_id: str, session_id: str) -> None:
    """On the parent, when a subagent finished, on the background worker. May block."""


@hookspec
def scratch_config(config: dict[str, Any], home: Path) -> dict[str, Any] | None:
    """Only for ``memhost providers check``, on a checker thread, before its scripted session;
    must not block. Return ``config`` changed so that everything the session stores goes to a
    scratch store (``home`` is a fresh folder, deleted afterwards), never the user's real one;
    drop what lives outside ``home`` in ``shutdown``. ``None``: nothing lives outside ``home``."""


@hookspec
def shutdown() -> dict[str, int] | None:
    """Once, after background work drained, in reverse registration order, on a shutdown
    thread the host waits on for at most the shutdown bound; may block briefly. May return
    counts of work the provider itself abandoned, e.g. ``{"abandoned_writes": 2}``."""
