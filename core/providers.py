"""A typed facade over pluggy's plugin manager: register providers, call one provider's hook.

pluggy validates every hookimpl against the spec and gives us call monitoring; it does not fan
out lifecycle calls for us, because it stops at the first exception and calls plugins
last-registered-first. So the manager calls each provider's hook itself, through
:meth:`ProviderSet.call`, which isolates the call (an exception, ``SystemExit`` included, is
logged, counted and turned into :data:`FAILED`; ``KeyboardInterrupt`` passes) and records timings.
"""

from __future__ import annotations

import difflib
import logging
import os
import sys
import threading
import time
import types
from collections.abc import Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pluggy

from memhost import hookspecs
from memhost.bounded import DaemonExecutor, Pending
from memhost.errors import ProviderError, RetryableError
from memhost.faultlog import FaultLog
from memhost.health import Health
from memhost.security.masking import scrub
from memhost.security.redact import redact
from memhost.signatures import signature_problem

log = logging.getLogger("memhost.providers")
faults = FaultLog(log)

TRACE_ENV = "MEMHOST_TRACE_HOOKS"

HOOK_NAMES = tuple(
    name for name in vars(hookspecs)
    if callable(getattr(hookspecs, name)) and hasattr(getattr(hookspecs, name), "memhost_spec")
)
#: Hooks only ``memhost providers check`` calls, never a host.
CHECK_ONLY_HOOKS = ("scratch_config",)
#: The hooks a host's manager calls.
HOST_HOOKS = tuple(name for name in HOOK_NAMES if name not in CHECK_ONLY_HOOKS)

#: What each hook must return; anything else is counted as a fault and treated as "nothing"
#: (and fails ``memhost providers check``).
RETURN_TYPES: dict[str, tuple[type, ...]] = {
    "check_available": (str, type(None)),
    "prompt_fragment": (str, type(None)),
    "tool_schemas": (list, tuple),
    "handle_tool_call": (str,),
    "prefetch": (str, type(None)),
    "pre_compress": (str, type(None)),
    "shutdown": (dict, type(None)),
    "scratch_config": (dict, type(None)),
}

#: Hooks the host's thread waits for. An external provider's calls to them run on that
#: provider's own daemon thread and are waited for at most ``memory.hook_timeout``.
BOUNDED_HOOKS = frozenset({"check_available", "initialize", "prompt_fragment", "tool_schemas",
                           "handle_tool_call", "pre_compress"})


def wrong_type(hook: str, value: Any) -> str | None:
    """Why ``value`` is not what ``hook`` must return, or ``None``."""
    expected = RETURN_TYPES.get(hook)
    if expected is None or isinstance(value, expected):
        return None
    names = " or ".join("None" if t is type(None) else t.__name__ for t in expected)
    return f"returned {type(value).__name__}, expected {names}"


class _Failed:
    def __repr__(self) -> str:
        return "FAILED"

    def __bool__(self) -> bool:
        return False


FAILED: Any = _Failed()  #: returned by :meth:`ProviderSet.call` when the hook failed


@dataclass
class HookStats:
    calls: int = 0
    errors: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0
    last_error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "errors": self.errors, "last_error": self.last_error,
                "avg_ms": round(self.seconds / self.calls * 1000, 3) if self.calls else 0.0,
                "max_ms": round(self.max_seconds * 1000, 3)}


@dataclass
class Provider:
    """One registered provider: its object, the hooks it implements and its call statistics."""

    name: str
    plugin: Any
    hooks: frozenset[str]
    stats: dict[str, HookStats] = field(default_factory=dict)
    last_error: str = ""
    health: Health = field(default_factory=Health)
    #: How long the host waits for one of :data:`BOUNDED_HOOKS` (``None``: called in place).
    call_timeout: float | None = None
    stuck: Pending | None = None
    executor: DaemonExecutor | None = None

    @property
    def is_builtin(self) -> bool:
        return self.name == "builtin"

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": "builtin" if self.is_builtin else "external",
            "hooks": sorted(self.hooks),
            "errors": sum(s.errors for s in self.stats.values()),
            "last_error": self.last_error,
            "health": self.health.as_dict(),
            "calls": {hook: s.as_dict() for hook, s in sorted(self.stats.items())},
        }


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, remembering for each provider class which of its attributes are not
    hook implementations.

    ``register`` examines every attribute of the object it is given (statically, with
    ``inspect.getattr_static``: about 15 µs each, 74 on the bundled sqlite provider), and a
    :class:`memhost.MemoryHub` registers each user's providers again whenever it opens that
    user's manager: a fifth of opening one. What a class defines is the same for each of its
    instances, so only the first instance pays. An attribute the instance holds itself (in its
    ``__dict__`` or a slot) can differ between instances and is always examined, as is every
    attribute of a module or a class registered as a plugin.
    """

    _not_hooks: ClassVar[dict[type, frozenset[str]]] = {}  # shared by every manager
    _not_hooks_lock = threading.Lock()

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._registering = threading.Lock()  # the attributes below belong to one register

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        kind = type(plugin)
        if isinstance(plugin, (type, types.ModuleType)):
            return super().register(plugin, name)
        with self._registering:
            self._own = set(getattr(plugin, "__dict__", ())) | _slot_names(kind)
            self._skip = self._not_hooks.get(kind, frozenset())
            self._seen: set[str] = set()
            try:
                registered = super().register(plugin, name)
            finally:
                skipped, seen = self._skip, self._seen
                del self._own, self._skip, self._seen
        if not seen <= skipped:
            with self._not_hooks_lock:
                self._not_hooks[kind] = skipped | seen
        return registered

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        skip = getattr(self, "_skip", None)
        if skip is None:  # a module or a class: examined in full
            return super().parse_hookimpl_opts(plugin, name)
        if name in skip and name not in self._own:
            return None
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name not in self._own:
            self._seen.add(name)
        return opts


def _release_thread(provider: Provider) -> None:
    executor, provider.executor = provider.executor, None
    if executor is not None:
        executor.shutdown()


def _slot_names(kind: type) -> set[str]:
    names: set[str] = set()
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    return names


class ProviderSet:
    """The registered providers, in registration order (builtin first)."""

    def __init__(self) -> None:
        self.pm = _PluginManager("memhost")
        self.pm.add_hookspecs(hookspecs)
        self._providers: dict[str, Provider] = {}
        self._callers: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        if os.environ.get(TRACE_ENV, "").strip() not in ("", "0", "false", "no"):
            self.pm.add_hookcall_monitoring(_trace_before, _trace_after)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._providers.values()))

    def get(self, name: str) -> Provider | None:
        return self._providers.get(name)

    def register(self, plugin: Any, name: str, *, call_timeout: float | None = None) -> Provider:
        """Validate ``plugin`` against the spec and add it; :class:`ProviderError` names it.
        ``call_timeout`` bounds the host's wait for its :data:`BOUNDED_HOOKS`."""
        if name in self._providers:
            raise ProviderError(f"a provider named {name!r} is already registered")
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise ProviderError(f"provider {name!r} does not match the memhost hook spec: {exc}") from None
        except ValueError as exc:
            raise ProviderError(f"provider {name!r} could not be registered: {exc}") from None
        callers = self.pm.get_hookcallers(plugin) or []
        unknown = [c.name for c in callers if not c.has_spec()]
        if unknown:
            self.pm.unregister(plugin)
            hints = [f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, HOOK_NAMES, 1))
                     else repr(u) for u in unknown]
            raise ProviderError(f"provider {name!r} implements unknown hook(s) {', '.join(hints)}; "
                                f"memhost hooks are: {', '.join(HOOK_NAMES)}")
        problems = [problem for caller in callers for impl in caller.get_hookimpls()
                    if impl.plugin is plugin and (problem := signature_problem(caller, impl))]
        if not callers:
            problems.append("implements no memhost hook; mark its hook methods with "
                            "@memhost.hookimpl")
        if problems:
            self.pm.unregister(plugin)
            raise ProviderError(f"provider {name!r} " + "; ".join(problems))
        provider = Provider(name, plugin, frozenset(c.name for c in callers),
                            call_timeout=call_timeout)
        with self._lock:
            self._providers[name] = provider
            self._callers.clear()
        return provider

    def unregister(self, name: str) -> None:
        provider = self._providers.pop(name, None)
        if provider is not None:
            self.pm.unregister(provider.plugin)
            with self._lock:
                self._callers.clear()
            _release_thread(provider)

    def release_threads(self) -> None:
        """Let each provider's call thread end (after a call it is still running, if any).

        A manager that has shut its providers down calls this: a host that opens and closes a
        manager per user (:class:`memhost.MemoryHub`) would otherwise keep one idle thread per
        closed manager for the life of the process. A later bounded call starts a new thread.
        """
        for provider in self._providers.values():
            _release_thread(provider)

    def call(self, provider: Provider, hook: str, *, retryable: bool = False,
             **kwargs: Any) -> Any:
        """Call one provider's ``hook``; ``None`` if it does not implement it, :data:`FAILED` if
        it raised or returned the wrong type. With ``retryable``, a :class:`RetryableError`
        propagates so the caller can keep the work for later."""
        if hook not in provider.hooks:
            return None
        if provider.health.unavailable and hook not in ("initialize", "shutdown"):
            # Resting until it starts again (memhost.health, memhost.revival). A write queued
            # before it became unavailable waits in the outbox rather than count as delivered.
            if retryable:
                raise RetryableError(f"provider {provider.name!r} is unavailable this session")
            return None
        if provider.call_timeout is not None and hook in BOUNDED_HOOKS:
            return self._bounded(provider, hook, kwargs)
        return self._call(provider, hook, retryable, kwargs)

    def _bounded(self, provider: Provider, hook: str, kwargs: dict[str, Any]) -> Any:
        """The call on the provider's own daemon thread; the host waits ``call_timeout``."""
        stats = provider.stats.setdefault(hook, HookStats())
        if provider.stuck is not None and not provider.stuck.done():
            self._fault(provider, hook, stats, "skipped: an earlier call of this provider has "
                                               "not returned yet")
            return FAILED
        if provider.executor is None:
            provider.executor = DaemonExecutor(f"memhost-call-{provider.name}")
        try:
            future = provider.executor.submit(self._call, provider, hook, False, kwargs)
        except RuntimeError:  # no thread can start: call it here, unbounded, rather than not
            return self._call(provider, hook, False, kwargs)
        try:
            return future.result(timeout=provider.call_timeout)
        except FutureTimeout:
            provider.stuck = future
            self._fault(provider, hook, stats, f"gave no answer within {provider.call_timeout:g}s "
                                               "(memory.hook_timeout); later calls are skipped "
                                               "until it returns")
            return FAILED

    def _call(self, provider: Provider, hook: str, retryable: bool,
              kwargs: dict[str, Any]) -> Any:
        stats = provider.stats.get(hook)
        if stats is None:
            stats = provider.stats.setdefault(hook, HookStats())
        stats.calls += 1
        start = time.perf_counter()
        try:
            results = self._caller(provider, hook)(**kwargs)
        except KeyboardInterrupt:
            raise
        except RetryableError as exc:
            self._fault(provider, hook, stats, f"retryable: {exc}")
            if retryable:
                raise
            return FAILED
        except BaseException as exc:  # SystemExit from provider code must not end the host
            self._fault(provider, hook, stats, f"{type(exc).__name__}: {exc}", exc)
            return FAILED
        finally:
            elapsed = time.perf_counter() - start
            stats.seconds += elapsed
            stats.max_seconds = max(stats.max_seconds, elapsed)
        value = results[0] if results else None
        problem = wrong_type(hook, value)
        if problem is not None:
            self._fault(provider, hook, stats, problem)
            return FAILED
        provider.health.succeeded(hook)
        return value

    def _caller(self, provider: Provider, hook: str) -> Any:
        key = (provider.name, hook)
        caller = self._callers.get(key)
        if caller is None:
            others = [p.plugin for p in self._providers.values() if p is not provider]
            caller = self.pm.subset_hook_caller(hook, remove_plugins=others)
            with self._lock:
                self._callers[key] = caller
        return caller

    @staticmethod
    def _fault(provider: Provider, hook: str, stats: HookStats, message: str,
               exc: BaseException | None = None) -> None:
        stats.errors += 1
        # Where a provider's exception becomes text (status, problems, doctor, the API, a tool's
        # answer): its secrets are masked once, here.
        message = scrub(message)
        stats.last_error = provider.last_error = f"{hook}: {message}"
        provider.health.failed(hook, provider.last_error)
        faults.report(provider.name, hook, message, exc)


# -- MEMHOST_TRACE_HOOKS ---------------------------------------------------------------------------

_trace_starts = threading.local()


def _trace_before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    stack = getattr(_trace_starts, "stack", None)
    if stack is None:
        stack = _trace_starts.stack = []
    stack.append(time.perf_counter())


def _trace_after(outcome: Any, hook_name: str, impls: Sequence[Any],
                 kwargs: Mapping[str, Any]) -> None:
    elapsed = (time.perf_counter() - _trace_starts.stack.pop()) * 1000
    names = ",".join(impl.plugin_name for impl in impls) or "-"
    # Masked before shortening: a value cut in half would no longer be recognised.
    shown = {k: _short(scrub(v if isinstance(v, str) else repr(v)))
             for k, v in redact(dict(kwargs)).items()}
    failed = " FAILED" if outcome.exception is not None else ""
    print(f"memhost trace: {names}.{hook_name} {elapsed:.2f}ms{failed} {shown}", file=sys.stderr)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
