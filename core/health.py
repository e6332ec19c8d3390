"""Whether a provider can be trusted right now: ``ok``, ``degraded`` or ``unavailable``.

- **unavailable**: the provider could not start this session (its ``initialize`` failed or gave no
  answer in time: usually a service it cannot reach). The manager stops calling it, keeps its
  writes in the outbox for later, and says so in ``status()``; it starts it again at the next
  session start, and every :data:`RETRY_SECONDS` while turns go on (:mod:`memhost.revival`).
- **degraded**: it runs, but one of its hooks failed several calls in a row, or writes it could
  not take were parked in the outbox's ``failed/`` folder. ``last_error`` says why.
- **ok**: neither.

:class:`Health` is updated by every provider call (:mod:`memhost.providers`) and by the
background worker when it parks a write; ``status()`` and ``memhost doctor`` read it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("memhost")

#: Consecutive failures of one hook after which a provider counts as degraded.
DEGRADED_AFTER = 3
#: Seconds between two tries to start an unavailable provider again (:mod:`memhost.revival`).
RETRY_SECONDS = 60.0


class Health:
    def __init__(self) -> None:
        self.unavailable = ""  # why, while the provider is unavailable this session
        self.unavailable_since = 0.0  # time.monotonic() when it became so
        self.last_error = ""
        self.failed_writes = 0  # writes this manager parked in failed/
        self._streaks: dict[str, int] = {}
        self._lock = threading.Lock()
        #: Told of every change of :attr:`state` (a :class:`memhost.healthrecord.HealthRecorder`
        #: keeps it for doctor), starting from :attr:`_told`, the state it last recorded.
        self._on_change: Callable[[Health], None] | None = None
        self._told = "ok"

    def watch(self, on_change: Callable[[Health], None], recorded: str = "ok") -> None:
        """Call ``on_change`` whenever the state changes; ``recorded`` is the state it last
        saw (a record left by an earlier process is cleared by the first call that succeeds)."""
        self._on_change, self._told = on_change, recorded

    def _changed(self) -> None:
        if self._on_change is None:
            return
        state = self.state
        if state != self._told:
            self._told = state
            self._on_change(self)

    def succeeded(self, hook: str) -> None:
        if self._streaks.get(hook):
            with self._lock:
                self._streaks[hook] = 0
        if self._told != "ok":
            self._changed()

    def failed(self, hook: str, error: str) -> None:
        with self._lock:
            self._streaks[hook] = self._streaks.get(hook, 0) + 1
            self.last_error = error
        self._changed()

    def parked_write(self, error: str) -> None:
        with self._lock:
            self.failed_writes += 1
            self.last_error = error
        self._changed()

    def mark_unavailable(self, provider: Any, session_id: str) -> None:
        """``provider``'s ``initialize`` failed: say so, loudly, once for the session."""
        stats = provider.stats.get("initialize")
        self.unavailable = (stats.last_error if stats else "") or "initialize failed"
        self.unavailable_since = time.monotonic()
        log.warning("memory provider %r is unavailable for session %r: %s. Recall and its tools "
                    "are off, and its writes wait in the outbox, until it starts: memhost tries "
                    "again every %.0f s while turns go on, and at the next session start.",
                    provider.name, session_id, self.unavailable, RETRY_SECONDS)
        self._changed()

    def mark_available(self) -> None:
        if self.unavailable:
            self.unavailable = ""
            self._changed()

    @property
    def failing_hooks(self) -> dict[str, int]:
        return {hook: n for hook, n in sorted(self._streaks.items()) if n >= DEGRADED_AFTER}

    @property
    def state(self) -> str:
        if self.unavailable:
            return "unavailable"
        if self.failing_hooks or self.failed_writes:
            return "degraded"
        return "ok"

    def problem(self) -> str | None:
        """One sentence for ``status()["problems"]``, or ``None`` when the provider is ok."""
        state = self.state
        if state == "unavailable":
            return (f"unavailable this session, until it starts again: {self.unavailable}. Its "
                    "writes wait in the outbox until then (it is tried again every "
                    f"{RETRY_SECONDS:.0f} s while turns go on, and at the next session start); "
                    "recall and its tools are off meanwhile")
        if state == "degraded":
            failing = ", ".join(f"{hook} failed {n} calls in a row"
                                for hook, n in self.failing_hooks.items())
            parked = (f"{self.failed_writes} write(s) parked in the outbox's failed/ folder "
                      "(`memhost outbox list`)") if self.failed_writes else ""
            what = "; ".join(part for part in (failing, parked) if part)
            return f"degraded: {what}; last error: {self.last_error}"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.unavailable, "last_error": self.last_error,
                "failing_hooks": self.failing_hooks, "failed_writes": self.failed_writes}


def health_problems(providers: Any, dead: Any) -> list[dict[str, Any]]:
    """``status()["problems"]`` entries for providers that are not ok, and for failed writes
    kept in ``dead`` (the external provider's :class:`memhost.deadletter.DeadLetters`)."""
    found: list[dict[str, Any]] = []
    for provider in providers:
        problem = provider.health.problem()
        if problem:
            found.append({"provider": provider.name, "problem": problem})
    count = dead.count() if dead is not None else 0
    if count:
        found.append({"provider": dead.provider, "failed_writes": count,
                      "problem": f"{count} write(s) could not be delivered and are kept in "
                                 f"{dead.folder}: `memhost outbox list` shows them, `memhost "
                                 "outbox retry` hands them back once the provider is fixed, "
                                 "`memhost outbox drop` discards them"})
    return found


def probe(candidate: Any, home: Path, table: dict[str, Any] | None,
          timeout: float) -> tuple[str, str]:
    """Start ``candidate`` as a session would (context ``cron``, so it writes nothing), ask it one
    recall as a turn would, then shut it down: ``("unavailable", why)`` when it cannot start (a
    service it cannot reach), ``("degraded", why)`` when it starts but its recall fails, else
    ``("ok", "")``. ``memhost doctor`` asks this of the configured provider; ``check_available``
    alone never touches the network. Each hook is waited for at most ``timeout`` seconds."""
    from memhost import discovery
    from memhost.providers import FAILED, ProviderSet

    providers = ProviderSet()
    provider = providers.register(discovery.load_candidate(candidate), candidate.name,
                                  call_timeout=timeout)
    session = "memhost-doctor"
    verdict = ("ok", "")
    done = providers.call(provider, "initialize", session_id=session, home=home,
                          config=discovery.runtime_config(candidate.name, home, table),
                          context="cron", user_id="")
    if done is FAILED:
        verdict = ("unavailable", provider.stats["initialize"].last_error)
    elif providers.call(provider, "prefetch", query="memhost doctor: is recall working?",
                        session_id=session) is FAILED:
        verdict = ("degraded", provider.stats["prefetch"].last_error)
    closing = threading.Thread(target=providers.call, args=(provider, "shutdown"),
                               name="memhost-probe-shutdown", daemon=True)
    closing.start()
    closing.join(timeout)
    return verdict
