"""Whether a provider is usable right now: the light probe behind ``providers list --check``,
the settings page's provider list and ``memhost doctor`` (load it, register it against the
spec, ask ``check_available`` within its bound)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memhost.authoring.checks import BOUNDS
from memhost.authoring.hookrunner import HookRunner, error_text
from memhost.errors import ProviderError
from memhost.providers import wrong_type


def availability(candidate: Any, home: Path, table: dict[str, Any] | None = None
                 ) -> tuple[str, str]:
    """Load ``candidate`` and ask it whether it is usable: ``("available", "")``,
    ``("unavailable", reason)`` or ``("failed", error)``. Blocked, broken and shadowed
    candidates keep their discovery status."""
    from memhost import discovery
    from memhost.providers import ProviderSet

    if candidate.status != "available":
        return candidate.status, candidate.reason
    try:
        provider = discovery.load_candidate(candidate, timeout=discovery.import_timeout(home))
        ProviderSet().register(provider, candidate.name)
        runner = HookRunner(provider)
    except ProviderError as exc:
        return "failed", str(exc)
    if not runner.implements("check_available"):
        return "available", ""
    config = discovery.runtime_config(candidate.name, home, table)
    try:
        reason = runner.call("check_available", BOUNDS["check_available"], config=config)
    except Exception as exc:
        return "failed", f"check_available() failed: {error_text(exc)}"
    if (problem := wrong_type("check_available", reason)) is not None:
        return "failed", f"check_available() {problem}"
    return ("unavailable", reason) if reason else ("available", "")
