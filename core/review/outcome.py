"""What one background review did, and the one line a host shows for it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

@dataclass
class ReviewResult:
    """What one review did; kept as :attr:`Reviewer.last` and shown by :meth:`Reviewer.status`."""

    session_id: str
    started_at: float
    #: running, nothing (answered "Nothing to save."), saved, staged, confirmed (only confirmed
    #: stale entries), no_change (wrote nothing), limit (ran out of model calls), cancelled,
    #: failed
    status: str = "running"
    finished_at: float | None = None
    model_calls: int = 0
    chars_sent: int = 0
    transcript_chars: int = 0
    messages_left_out: int = 0
    writes: list[dict[str, Any]] = field(default_factory=list)
    staged: list[str] = field(default_factory=list)
    #: Stale entries the review confirmed as still true ({"target", "entry"}).
    confirmed: list[dict[str, Any]] = field(default_factory=list)
    refused_tools: list[str] = field(default_factory=list)
    final_text: str = ""
    summary: str = ""
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(result: ReviewResult) -> str:
    """"User profile updated · Memory updated" (and staged proposals), or ``""``."""
    parts: list[str] = []
    targets = [w.get("target") for w in result.writes]
    if "user" in targets:
        parts.append("User profile updated")
    if "memory" in targets:
        parts.append("Memory updated")
    if result.staged:
        count = len(result.staged)
        parts.append(f"{count} memory change{'s' if count != 1 else ''} waiting for approval "
                     "(memhost memory pending)")
    if result.confirmed:
        count = len(result.confirmed)
        parts.append(f"{count} stale memory entr{'ies' if count != 1 else 'y'} confirmed")
    return " · ".join(parts)
