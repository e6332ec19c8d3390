"""``MemoryManager.status()``: a JSON-serialisable picture of a manager, its providers and their
faults, scrubbed of secrets (a provider's fault text may quote its config)."""

from __future__ import annotations

from typing import Any

from memhost.builtin_providers.provider import NAME as BUILTIN
from memhost.health import health_problems
from memhost.registration import BUILTIN_ONLY
from memhost.review.approval import PendingStore
from memhost.security.masking import scrub_value


def manager_status(manager: Any) -> dict[str, Any]:
    external = manager._external
    providers = []
    for provider in manager._providers:
        entry = provider.status()
        if provider is external:
            entry["prefetch"] = manager._recall.status()
        providers.append(entry)
    configured = manager.config.memory.provider.strip()
    delivery = manager._delivery
    dead = delivery.dead if delivery else None
    usable = external is not None and not external.health.unavailable
    report = manager._shutdown_report
    reviewer = manager.reviewer
    return scrub_value({
        "home": str(manager.home),
        "user_id": manager.user_id or None,
        "session_id": manager.session_id,
        "context": manager.context,
        "turns": manager._turns,
        "configured_provider": configured,
        "external_provider": external.name if external else None,
        "builtin_only": not usable,
        "configured_provider_active": configured.lower() in BUILTIN_ONLY
        or (usable and external.name == configured),
        "providers": providers,
        "tools": manager._router.owners(),
        "problems": [*manager.problems, *health_problems(manager._providers, dead),
                     *({"provider": BUILTIN, "problem": problem}
                       for problem in manager.store.metadata_problems()),
                     *({"provider": BUILTIN, "problem": problem}
                       for problem in manager.builtin.snapshot.problems)],
        "background": manager._worker.status(),
        "outbox_pending": delivery.outbox.pending_count() if delivery else 0,
        "failed_writes": dead.count() if dead else 0,
        "shutdown": report.as_dict() if report else None,
        "review": reviewer.status() if hasattr(reviewer, "status") else None,
        "pending_writes": PendingStore(manager.home).count(),
    })
