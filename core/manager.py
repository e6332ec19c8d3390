"""The host's one object: :class:`MemoryManager`.

It registers the builtin provider first and at most one external provider
(:mod:`memhost.registration`), then drives them through a session: the system prompt, tools,
per-turn recall (:mod:`memhost.prefetching`), background writes (:mod:`memhost.delivery`), session
boundaries and shutdown (:mod:`memhost.shutdown`). Every provider call is isolated (see
:mod:`memhost.providers`); every payload handed to an external provider is redacted first (see
:mod:`memhost.security.redact`).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost.abandoned import Leftovers, watch, weak_attribute, weak_method
from memhost.builtin_providers.provider import NAME as BUILTIN
from memhost.builtin_providers.provider import BuiltinProvider
from memhost.builtin_providers.store import Change, MemoryStore
from memhost.builtin_providers.view import MemoryEntry, read_entries
from memhost.config import Config, load_config, validate
from memhost.delivery import Delivery
from memhost.errors import check_not_forked
from memhost.fencing import build_context_block
from memhost.home import config_path, memhost_home
from memhost.prefetching import BoundedPrefetch
from memhost.providers import FAILED, Provider, ProviderSet
from memhost.registration import BUILTIN_ONLY, ProviderRegistration
from memhost.review.approval import ApprovalGate
from memhost.security.redact import redact, redact_many
from memhost.security.screen import Screen
from memhost.shutdown import shut_down
from memhost.status import manager_status
from memhost.toolcalls import ToolCallShapeError, error_answer, parse_arguments, read_tool_call
from memhost.toolrouter import ToolRouter
from memhost.toolschemas import RESERVED_TOOL_NAMES, shape_tool_schema
from memhost.turns import NudgeCounter, count_user_turns, flatten_content, is_trivial
from memhost.users import open_user_home
from memhost.worker import BackgroundWorker, ShutdownReport, Task

if TYPE_CHECKING:
    from memhost.discovery.shared import ProviderReads

log = logging.getLogger("memhost")

SESSION_CONTEXTS = ("primary", "subagent", "cron", "review")
ROTATE_REASONS = ("new", "resume", "branch", "compress", "rewind")

ConfirmCallback = Callable[[str, str], bool]


@dataclass(frozen=True)
class Turn:
    """What :meth:`MemoryManager.begin_turn` prepared for one user turn."""

    number: int
    #: The fenced recall block to append to the user's message ("" when nothing was recalled).
    context: str
    #: True when the background review is due after this turn's reply.
    review_due: bool
    #: How recall went: ok, empty, no-provider, unavailable, skipped-trivial, skipped-stuck,
    #: timed-out, failed.
    recall: str


class MemoryManager(ProviderRegistration):
    """Builtin memory first, then at most one external provider, driven through one session."""

    def __init__(self, home: Path, config: Config | None = None, *,
                 reserved_tools: tuple[str, ...] = (), user_id: str = "",
                 provider_reads: ProviderReads | None = None) -> None:
        #: Where config.toml, .env and provider folders are. ``home`` is where this manager's
        #: memory is: the same folder, or ``<home>/users/<user_id>/`` for one of many users.
        self.settings_home = home
        self.user_id = user_id
        self.home = home = open_user_home(home, user_id) if user_id else home
        self.config = config if config is not None else load_config(self.settings_home)
        settings = self.config.memory
        self.store = MemoryStore.from_settings(home, settings)
        self.store.screen = Screen.from_config(self.config, self.settings_home)  # .env: the home's
        self.session_id = ""
        self.context = "primary"
        self.confirm_callback: ConfirmCallback | None = None
        self.reviewer: Any = None  # set by hosts that run the background review
        self.problems: list[dict[str, str]] = []
        self._reads = provider_reads

        self._providers = ProviderSet()
        self._router = ToolRouter(RESERVED_TOOL_NAMES | set(settings.reserved_tools)
                                  | set(reserved_tools))
        self._external: Provider | None = None
        self._worker = BackgroundWorker(retry_budget=settings.write_retry_budget)
        self._delivery: Delivery | None = None  # the external provider's writes
        self._recall = BoundedPrefetch(self._providers, settings.prefetch_timeout)
        self._turns = 0
        self._nudge = NudgeCounter(settings.nudge_interval)
        self._review_due = False
        self._system_prompt: str | None = None
        self._shutdown_report: ShutdownReport | None = None
        self._shutdown_lock = threading.Lock()
        self._open_turns = 0  # begun and not yet finished; see ``open_turns``
        self._last_turn_call = time.monotonic()  # see ``quiet_seconds``
        self._turns_lock = threading.Lock()

        self.builtin = BuiltinProvider(self.store, gate=ApprovalGate(
            self.store, home=home, enabled=settings.write_approval,
            confirm=weak_attribute(self, "confirm_callback")))  # read at each write, weakly
        self._leftovers = watch(self, Leftovers(self._worker, self._providers, self._recall))
        self._add(self.builtin, BUILTIN)
        self.store.subscribe(weak_method(self._mirror))

    @classmethod
    def from_home(cls, home: str | Path | None = None, *, user_id: str = "",
                  **overrides: Any) -> MemoryManager:
        """Read ``<home>/config.toml`` (``overrides`` replace ``[memory]`` keys), register the
        builtin provider and the configured external one. A configured provider that cannot be
        used is reported (WARNING, :meth:`status`, ``memhost doctor``), never silently skipped.
        With ``user_id``, the manager of that user's memory in ``<home>/users/<user_id>/``."""
        resolved = memhost_home(home)
        config = load_config(resolved)
        if overrides:
            data = config.model_dump()
            data["memory"].update(overrides)
            config = validate(data, config_path(resolved))
        return cls.from_config(resolved, config, user_id=user_id)

    @classmethod
    def from_config(cls, home: Path, config: Config, *, user_id: str = "",
                    provider_reads: ProviderReads | None = None) -> MemoryManager:
        """:meth:`from_home` with the config already read (a :class:`memhost.MemoryHub`
        reads it once for all its users, and finds and configures their provider once with a
        :class:`memhost.discovery.SharedProviderReads` as ``provider_reads``)."""
        manager = cls(home, config, user_id=user_id, provider_reads=provider_reads)
        manager._activate_configured()
        from memhost.review.background import reviewer_from_config

        manager.reviewer = reviewer_from_config(manager)
        return manager

    # -- session ---------------------------------------------------------------------------------

    def start_session(self, session_id: str, *, context: str = "primary",
                      history: list[dict[str, Any]] | None = None) -> None:
        """Initialise every provider for ``session_id``; ``history`` resumes the nudge cadence."""
        if context not in SESSION_CONTEXTS:
            raise ValueError(f"context must be one of {', '.join(SESSION_CONTEXTS)}, not {context!r}")
        self.session_id, self.context = session_id, context
        self._system_prompt = None
        self._turns = count_user_turns(history)
        self._nudge.resume(self._turns)
        for provider in self._providers:
            self._initialize(provider)

    def _initialize(self, provider: Provider) -> None:
        provider.health.mark_available()
        done = self._call_initialize(provider, self.session_id)
        if provider is not self._external:
            return
        if done is FAILED:
            # Usually a service it cannot reach: it rests, started again now and then off the
            # host's thread (memhost.revival), rather than stall every turn behind the failure.
            provider.health.mark_unavailable(provider, self.session_id)
            return
        assert self._delivery is not None
        self._delivery.started()

    def system_prompt(self) -> str:
        """The memory part of the system prompt, built once per session and then reused as is."""
        if self._system_prompt is None:
            parts = [self._providers.call(p, "prompt_fragment", session_id=self.session_id)
                     for p in self._providers]
            self._system_prompt = "\n\n".join(p.strip() for p in parts if p and p.strip())
        return self._system_prompt

    def tool_schemas(self, format: str = "bare") -> list[dict[str, Any]]:
        """A copy of the memory tools, shaped ``bare``, ``openai`` or ``anthropic``."""
        return [shape_tool_schema(schema, format) for schema in copy.deepcopy(self._router.schemas)]

    def call_tool(self, call: Any, arguments: dict[str, Any] | str | None = None) -> str:
        """Run a memory tool the model called: a tool name and its arguments, or the tool call
        as the model API sent it back (see :mod:`memhost.toolcalls`). Always answers with a JSON
        string."""
        self._last_turn_call = time.monotonic()
        try:
            name, arguments = read_tool_call(call, arguments)
        except ToolCallShapeError as exc:
            return error_answer(str(exc))
        provider = self._router.get(name)
        if provider is None and name == "memory":
            provider = self._providers.get(BUILTIN)  # its answer says why memory is off
        if provider is not None and provider.health.unavailable:
            return error_answer(f"Tool {name!r} is unavailable this session, until its provider "
                                f"starts again: {provider.health.unavailable}")
        if provider is not None and not provider.is_builtin and self.closed:
            return error_answer(f"Tool {name!r} is unavailable: its memory provider was shut "
                                "down. Go on without it; it answers again in a later turn.")
        if provider is None:
            return error_answer(f"No memory tool is named {name!r}. Available: "
                                f"{', '.join(self._router.names()) or 'none'}.")
        try:
            arguments = parse_arguments(name, arguments)
        except ToolCallShapeError as exc:
            return error_answer(str(exc))
        if not provider.is_builtin:
            # A copy: a provider that edits its arguments must not edit the host's dict.
            arguments = copy.deepcopy(redact(arguments))
        result = self._providers.call(provider, "handle_tool_call", tool_name=name,
                                      arguments=arguments, session_id=self.session_id)
        if result is FAILED or result is None:
            # This hook's own last error: provider.last_error may already hold a fault a
            # background write of the same provider hit meanwhile on the worker thread.
            stats = provider.stats.get("handle_tool_call")
            error = stats.last_error if stats is not None and result is FAILED else ""
            return error_answer(f"Tool {name!r} failed: {error or 'no answer'}")
        return result

    # -- turns -----------------------------------------------------------------------------------

    def begin_turn(self, user_message: Any, *, untrusted: bool = False) -> Turn:
        """Start a user turn: reset per-turn state, tick the review nudge, recall.

        ``untrusted=True`` says the turn carries content nobody vouches for (a web page, a file,
        an email, another agent's output): memory writes in it are staged for approval."""
        self.store.screen.begin_turn(self.session_id, untrusted=untrusted)
        with self._turns_lock:
            self._turns += 1
            self._open_turns += 1
            self._last_turn_call = time.monotonic()
        self.builtin.tool.reset_turn()
        if self.reviewer is not None:
            self.reviewer.cancel()
        self._review_due = bool(self.builtin.tool.enabled_targets()) and self._nudge.tick()
        query = flatten_content(user_message)
        if self._external is None:
            recall, raw = "no-provider", ""
        elif self._external.health.unavailable:
            self._revive_if_due()  # this turn goes on without recall
            recall, raw = "unavailable", ""
        elif is_trivial(query):
            recall, raw = "skipped-trivial", ""
        else:
            recall, raw = self._recall.ask(self._external, query, self.session_id,
                                           closed=self.closed)
        context = build_context_block(raw, source=self._external.name) if raw and self._external else ""
        return Turn(self._turns, context, self._review_due, recall)

    def mark_untrusted(self) -> None:
        """The current turn has read untrusted content: its memory writes are staged."""
        self.store.screen.mark_untrusted(self.session_id)

    def finish_turn(self, user_message: Any, reply: Any, *, interrupted: bool = False,
                    messages: list[dict[str, Any]] | None = None) -> None:
        """After the reply was delivered: sync the turn, warm the next recall, and start the
        background review when due. Nothing happens for an interrupted turn."""
        with self._turns_lock:
            self._open_turns = max(0, self._open_turns - 1)
            self._last_turn_call = time.monotonic()
        due, self._review_due = self._review_due, False
        user, answer = flatten_content(user_message), flatten_content(reply)
        if interrupted or not user.strip() or not answer.strip():
            return
        if self._external is not None:
            user_r, answer_r, messages_r = redact_many(user, answer, messages or [])
            warm: tuple[Task, ...] = ()
            if not is_trivial(user):
                providers, provider, session_id = self._providers, self._external, self.session_id
                warm = (Task("prefetch", "queue_prefetch", lambda: providers.call(
                    provider, "queue_prefetch", query=user_r, session_id=session_id)),)
            # The sync and the warm-up go to the worker in one hand-off, the sync first. Neither
            # holds self: a queued task must not keep the manager alive (memhost.abandoned).
            self._submit_write("sync_turn", [("sync_turn", {
                "user_content": user_r, "assistant_content": answer_r,
                "session_id": self.session_id, "messages": messages_r})], *warm)
        if due and self.reviewer is not None:
            history = messages or [{"role": "user", "content": user},
                                   {"role": "assistant", "content": answer}]
            self.reviewer.start(history, session_id=self.session_id)

    def pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Before the host compresses its context: text the summary should keep."""
        parts = []
        for provider in self._providers:
            # A copy for external providers: they must not edit the host's transcript.
            payload = messages if provider.is_builtin else copy.deepcopy(redact(messages))
            value = self._providers.call(provider, "pre_compress", session_id=self.session_id,
                                         messages=payload)
            if value and value is not FAILED and value.strip():
                parts.append(value.strip())
        return "\n\n".join(parts)

    def subtask_finished(self, task: str, result: str, child_session_id: str) -> None:
        task_r, result_r = redact_many(task, result)
        self._submit_write("on_subtask", [("on_subtask", {
            "task": task_r, "result": result_r, "child_session_id": child_session_id,
            "session_id": self.session_id})])

    def rotate(self, new_session_id: str, reason: str, *,
               messages: list[dict[str, Any]] | None = None) -> None:
        """The session id changes without teardown. ``new`` (a genuinely new conversation) ends
        the old session and starts the new one with a fresh snapshot; other reasons only rotate."""
        if reason not in ROTATE_REASONS:
            raise ValueError(f"reason must be one of {', '.join(ROTATE_REASONS)}, not {reason!r}")
        old = self.session_id
        calls: list[tuple[str, dict[str, Any]]] = []
        if reason == "new":
            calls.append(("session_end", {"session_id": old, "messages": redact(messages or [])}))
        calls.append(("rotate", {"old_session_id": old, "new_session_id": new_session_id,
                                 "reason": reason}))
        self._submit_write(f"rotate ({reason})", calls)
        self.session_id = new_session_id
        if reason == "new":
            self._turns = 0
            self._nudge.resume(0)
            self._system_prompt = None
            self._initialize(self._providers.get(BUILTIN))  # type: ignore[arg-type]

    @property
    def open_turns(self) -> int:
        """Turns begun and not finished: a MemoryHub never closes a manager mid-turn (see hub)."""
        return self._open_turns

    @property
    def quiet_seconds(self) -> float:
        """Seconds since the host last began or finished a turn or called a tool."""
        return time.monotonic() - self._last_turn_call

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` ran."""
        return self._shutdown_report is not None

    def entries(self, target: str = "memory") -> list[MemoryEntry]:
        """The ``memory`` or ``user`` entries of the builtin memory on disk, with metadata."""
        return read_entries(self.store, target)

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    def end_session(self, messages: list[dict[str, Any]] | None = None) -> None:
        self._submit_write("session_end", [("session_end", {
            "session_id": self.session_id, "messages": redact(messages or [])})])

    def set_confirm_callback(self, callback: ConfirmCallback | None) -> None:
        """``callback(summary, detail) -> bool`` answers a write-approval prompt."""
        self.confirm_callback = callback

    # -- background writes -----------------------------------------------------------------------

    def _mirror(self, changes: list[Change], origin: str, session_id: str) -> None:
        for change in changes:
            content, previous = redact_many(change.content, change.previous)
            self._submit_write("on_builtin_write", [("on_builtin_write", {
                "action": change.action, "target": change.target, "content": content,
                "previous_content": previous, "session_id": session_id or self.session_id,
                "origin": origin})])

    def _submit_write(self, label: str, calls: list[tuple[str, dict[str, Any]]],
                      *then: Task) -> None:
        if self._delivery is not None:
            self._delivery.submit(label, calls, *then)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every background task queued so far has run; ``False`` on timeout."""
        return self._worker.flush(timeout)

    # -- shutdown and status ---------------------------------------------------------------------

    def shutdown(self, timeout: float | None = None) -> ShutdownReport:
        """Drain background work within ``timeout`` (default ``memory.shutdown_timeout``), then
        shut providers down in reverse order, once (:mod:`memhost.shutdown`). Safe to call more
        than once."""
        check_not_forked(self._leftovers.pid)  # the providers and journals are the parent's
        with self._shutdown_lock:
            if self._shutdown_report is None:
                if self.reviewer is not None:
                    self.reviewer.cancel()
                self._shutdown_report = shut_down(
                    self._worker, self._providers,
                    bound=self.config.memory.shutdown_timeout if timeout is None else timeout,
                    journals=self._delivery.journals if self._delivery else [],
                    external=self._external, prefetch=self._recall)
            return self._shutdown_report

    def status(self) -> dict[str, Any]:
        """A JSON-serialisable picture of the manager, its providers and their faults."""
        return manager_status(self)


__all__ = ["BUILTIN_ONLY", "MemoryManager", "Turn"]
