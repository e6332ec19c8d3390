"""Whether a provider can be trusted right now: ``ok``, ``degraded`` or ``unavailable``.

- **unavailable**: the provider could not start this session (its ``initialize`` failed or gave no
  answer in time: usually a service it cannot reach). The manager stops calling it until the
  next session start, keeps its writes in the outbox for later, and says so in ``status()``.
- **degraded**: it runs, but one of its hooks failed several calls in a row, or writes it could
  not take were parked in the outbox's ``failed/`` folder. ``last_error`` says why.
- **ok**: neither.

:class:`Health` is updated by every provider call (:mod:`memhost.providers`) and by the
background worker when it parks a write; ``status()`` and ``memhost doctor`` read it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

#: Consecutive failures of one hook after which a provider counts as degraded.
DEGRADED_AFTER = 3


class Health:
    def __init__(self) -> None:
        self.unavailable = ""  # why, while the provider is unavailable this session
        self.last_error = ""
        self.failed_writes = 0  # writes this manager parked in failed/
        self._streaks: dict[str, int] = {}
        self._lock = threading.Lock()

    def succeeded(self, hook: str) -> None:
        if self._streaks.get(hook):
            with self._lock:
                self._streaks[hook] = 0

    def failed(self, hook: str, error: str) -> None:
        with self._lock:
            self._streaks[hook] = self._streaks.get(hook, 0) + 1
            self.last_error = error

    def parked_write(self, error: str) -> None:
        with self._lock:
            self.failed_writes += 1
            self.last_error = error

    def mark_unavailable(self, reason: str) -> None:
        self.unavailable = reason or "no reason given"

    def mark_available(self) -> None:
        self.unavailable = ""

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
            return (f"unavailable this session: {self.unavailable}. Its writes wait in the outbox "
                    "until a later session starts it; recall and its tools are off until then")
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


def probe(candidate: Any, home: Path, table: dict[str, Any] | None, timeout: float) -> str | None:
    """Start ``candidate`` as a session would (context ``cron``, so it writes nothing), then shut
    it down: why it cannot start (a service it cannot reach), or ``None``. ``memhost doctor``
    asks this of the configured provider; ``check_available`` alone never touches the network.
    Each hook is waited for at most ``timeout`` seconds."""
    from memhost import discovery
    from memhost.providers import FAILED, ProviderSet

    providers = ProviderSet()
    provider = providers.register(discovery.load_candidate(candidate), candidate.name,
                                  call_timeout=timeout)
    done = providers.call(provider, "initialize", session_id="memhost-doctor", home=home,
                          config=discovery.runtime_config(candidate.name, home, table),
                          context="cron")
    reason = provider.stats["initialize"].last_error if done is FAILED else None
    closing = threading.Thread(target=providers.call, args=(provider, "shutdown"),
                               name="memhost-probe-shutdown", daemon=True)
    closing.start()
    closing.join(timeout)
    return reason
