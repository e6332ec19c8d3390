"""The curator: how old each memory entry is, which ones are stale, and moving those out.

This module holds the marks (pin, unpin, confirm, review-after) and the archiving pass; ages and
staleness are in :mod:`memhost.review.staleness`, the model-assisted merge pass in
:mod:`memhost.review.merge` and the usage history in :mod:`memhost.review.usage`, and their names
are importable from here too.

An entry's age counts from the last time it was *kept alive*: written (added or replaced) or
explicitly confirmed. Being shown in a session's snapshot, or read by any command, never counts.

* **Stale** (:func:`assess`): an entry with a review date is stale from that date on and not
  before, whatever its age (a person chose the date, so it replaces the age window); updating
  or confirming it once the date has come answers the review and clears the date. Otherwise an
  entry is stale when its last update or confirmation is older than the window (``[curator]
  stale_after_days``). A pinned entry is never stale by age, only by a review date set on it.
  An entry without metadata (written by hand, or its sidecar was lost) has an unknown age: it
  is never stale by age and never archived; confirm or pin it to start tracking it.
* **Curate** (:func:`curate`): archives stale, unpinned entries older than the archive window
  (``[curator] archive_after_days``), oldest first, at most ``max_per_run`` per run, through the
  store's ``remove`` with origin ``curator`` (so each lands in ``archive.jsonl`` and ``memhost
  memory restore`` brings it back). A review date in the future keeps an entry; a passed review
  date alone never archives one (review dates are not expiry). Under write approval every
  archive is staged as a pending write instead.
* **Merge pass** (:func:`propose_changes`, ``[curator] merge``): a chat model proposes merges of
  overlapping entries and rewrites of stale ones; every proposal is staged for approval, never
  applied, and a proposal that touches a pinned entry is refused before it is staged.
* **Usage history** (:func:`record_usage`, :func:`usage_trend`): one sample a day of each store's
  fullness (after its first write of the day), kept by writes in
  ``memories/usage-history.json``, for ``memhost doctor``'s trend.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import CURATOR_ORIGIN, FILENAMES, TARGETS, MemoryStore

# The curator's vocabulary lives in three smaller modules; their names are the curator's too.
from memhost.review.merge import PROPOSE_SCHEMA, PROPOSE_TOOL, MergeReport, propose_changes
from memhost.review.staleness import (
    DAY,
    EntryState,
    _targets,
    assess,
    days,
    entry_states,
    last_touch,
    oldest_first,
    parse_duration,
    review_date,
    review_time,
    stale_entries,
)
from memhost.review.usage import (
    HISTORY_DAYS,
    HISTORY_NAME,
    TREND_DAYS,
    Trend,
    history_path,
    load_history,
    record_usage,
    usage_trend,
)

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.tool import WriteGate

ORIGIN = CURATOR_ORIGIN

# -- marks: pin, unpin, confirm, review-after -------------------------------------------------


def mark(store: MemoryStore, target: str, match: str, action: str, **fields: Any) -> dict[str, Any]:
    """Find the entry ``match`` designates (the ``memory`` tool's rules) and set sidecar fields.

    Returns a JSON-ready answer like the tool's: ``success``, ``target``, ``entry`` and a
    ``message``, or ``success: false`` with an ``error`` (and ``matches`` when several entries
    contain ``match``). Only the sidecar changes; the memory file is never rewritten.
    """
    from memhost.builtin_providers.store import Unreadable

    if target not in FILENAMES:
        return {"success": False, "error": f"Unknown memory target {target!r}; use 'memory' or "
                                           "'user'."}
    outcome = store.resolve(target, match, action)
    if not outcome.ok:
        return dict(outcome.response)
    entry = outcome.response["matched_entry"]
    try:
        store.update_metadata(target, entry, **fields)
    except ValueError:
        return {"success": False, "target": target,
                "error": "That entry changed while it was being marked; nothing was changed. "
                         "Try again."}
    except Unreadable as exc:
        return {"success": False, "target": target,
                "error": f"{FILENAMES[target]} cannot be read ({exc}); nothing was changed."}
    return {"success": True, "target": target, "entry": entry, "action": action, **fields}


def confirm(store: MemoryStore, target: str, match: str, *, by: str = "cli",
            now: float | None = None) -> dict[str, Any]:
    """Record that the entry is still true: it counts as fresh from now (see :func:`assess`)."""
    when = store.clock() if now is None else now
    fields: dict[str, Any] = {"confirmed": when, "confirmed_by": by}
    resolved = store.resolve(target, match, "confirm") if target in FILENAMES else None
    if resolved is not None and resolved.ok:
        record = entrymeta.for_entry(entrymeta.load(store.path(target)),
                                     resolved.response["matched_entry"])
        if entrymeta.review_passed(record, when):
            fields["review_after"] = None  # this confirmation is the review that was due
    answer = mark(store, target, match, "confirm", **fields)
    if answer.get("success"):
        answer["message"] = "Confirmed: the entry counts as fresh from now."
    return answer


# The background review's own small tool (see memhost.review.background): confirming an entry the
# conversation showed to be still true. It only touches the sidecar.
CONFIRM_TOOL = "memory_confirm"
CONFIRM_SCHEMA: dict[str, Any] = {
    "name": CONFIRM_TOOL,
    "description": (
        "Mark a memory entry as still true, so it is no longer reported as stale. Use it only "
        "when the conversation shows that the fact still holds. It changes no text."),
    "parameters": {
        "type": "object",
        "properties": {
            "target": {"type": "string", "enum": list(TARGETS),
                       "description": "'user' for the user profile, 'memory' for the notes."},
            "old_text": {"type": "string",
                         "description": "A short unique part of the entry to confirm."},
        },
        "required": ["target", "old_text"],
    },
}


# -- curate -----------------------------------------------------------------------------------


@dataclass
class CurateReport:
    """What one :func:`curate` run did (or, in a dry run, would do)."""

    dry_run: bool
    now: float
    archive_older_than: float
    max_per_run: int
    #: Entries moved to the archive: ``{target, text, age_days, origin, archive_id}``.
    archived: list[dict[str, Any]] = field(default_factory=list)
    #: Archives staged for approval: ``{target, text, age_days, origin, pending_id}``.
    staged: list[dict[str, Any]] = field(default_factory=list)
    #: Dry run only: what a real run would archive (or stage).
    would_archive: list[dict[str, Any]] = field(default_factory=list)
    #: Old enough, but pinned: kept.
    pinned_kept: list[dict[str, Any]] = field(default_factory=list)
    #: Candidates beyond ``max_per_run``, left for a later run.
    left_for_later: list[dict[str, Any]] = field(default_factory=list)
    #: Candidates that already have a curator archive waiting for approval.
    already_pending: list[dict[str, Any]] = field(default_factory=list)
    #: ``{target, text?, error}`` for what could not be done.
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: The merge pass's report, when it ran.
    merge: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and not (self.merge and self.merge.get("error"))

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["archive_older_than_days"] = days(self.archive_older_than)
        data["success"] = self.ok
        return data


def _item(state: EntryState, **extra: Any) -> dict[str, Any]:
    return {"target": state.target, "text": state.text,
            "age_days": days(state.age) if state.age is not None else None,
            "origin": state.origin, **extra}


def archivable(state: EntryState, *, now: float, older_than: float) -> bool:
    """Whether curate may archive this entry: unpinned, age known and older than the archive
    window, and no review date still ahead of it."""
    if state.pinned or state.touched is None or state.age is None:
        return False
    review_at = review_time(state.review_after)
    if review_at is not None and review_at > now:
        return False
    return state.age > older_than


def _pending_archives(home: Path) -> set[tuple[str, str]]:
    from memhost.review.approval import PendingStore

    waiting = set()
    for record in PendingStore(home).list():
        if record.origin != ORIGIN or record.action != "remove":
            continue
        for matched in record.matched:
            if isinstance(matched.get("entry"), str):
                waiting.add((record.target, matched["entry"]))
    return waiting


def curate(store: MemoryStore, *, dry_run: bool = False, archive_older_than: float = 180 * DAY,
           max_per_run: int = 10, gate: WriteGate | None = None, now: float | None = None,
           targets: Iterable[str] | None = None) -> CurateReport:
    """Archive stale, unpinned entries older than ``archive_older_than`` seconds, oldest first,
    at most ``max_per_run`` of them. ``gate`` is the write gate
    (:class:`memhost.review.approval.ApprovalGate`): with write approval on, each archive is staged
    as a pending write instead of applied. A dry run reads only."""
    from memhost.builtin_providers.store import Unreadable

    now = store.clock() if now is None else now
    report = CurateReport(dry_run, now, archive_older_than, max(0, max_per_run))
    candidates: list[EntryState] = []
    for target in _targets(store, targets):
        try:
            states = entry_states(store, target, now=now, window=archive_older_than)
            drift = store.drift(target)
        except Unreadable as exc:
            report.errors.append({"target": target, "error": f"{FILENAMES[target]} cannot be read "
                                  f"({exc}); nothing in it was curated"})
            continue
        if drift:  # every remove would be refused (and leave a backup); say so once instead
            report.errors.append({"target": target, "error": f"{FILENAMES[target]} has drifted "
                                  f"({drift}); nothing in it was curated. `memhost doctor` "
                                  "says how to fix it."})
            continue
        for state in states:
            if state.pinned and state.touched is not None and state.age is not None \
                    and state.age > archive_older_than:
                report.pinned_kept.append(_item(state))
            elif archivable(state, now=now, older_than=archive_older_than):
                candidates.append(state)
    waiting = _pending_archives(store.home)
    queue = []
    for state in oldest_first(candidates):
        if (state.target, state.text) in waiting:
            report.already_pending.append(_item(state))
        else:
            queue.append(state)
    chosen, report.left_for_later = queue[:report.max_per_run], [
        _item(s) for s in queue[report.max_per_run:]]
    if dry_run:
        report.would_archive = [_item(s) for s in chosen]
        return report
    for state in chosen:
        _archive_one(store, state, report, gate)
    _fill_archive_ids(store, report)
    return report


def _archive_one(store: MemoryStore, state: EntryState, report: CurateReport,
                 gate: WriteGate | None) -> None:
    proposal: dict[str, Any] = {"action": "remove", "target": state.target, "old_text": state.text}
    if gate is not None:
        answer = gate.decide(proposal, origin=ORIGIN, session_id="")
        if answer is not None:
            if answer.get("staged"):
                report.staged.append(_item(state, pending_id=answer.get("pending_id")))
            else:
                report.errors.append(_item(state, error=answer.get("error", "refused")))
            return
    try:
        outcome = store.remove(state.target, state.text, matched_entry=state.text, origin=ORIGIN)
    except OSError as exc:
        report.errors.append(_item(state, error=f"could not save: {exc.strerror or exc}"))
        return
    if outcome.ok:
        report.archived.append(_item(state, archive_id=None))
    else:
        report.errors.append(_item(state, error=outcome.response.get("error", "the write failed")))


def _fill_archive_ids(store: MemoryStore, report: CurateReport) -> None:
    if not report.archived:
        return
    ids: dict[tuple[str, str], str] = {}
    try:
        for record in store.archive.entries():
            if record.origin == ORIGIN:
                ids[(record.target, record.text)] = record.id  # the latest wins
    except OSError:
        return
    for item in report.archived:
        item["archive_id"] = ids.get((item["target"], item["text"]))


__all__ = [
    "CONFIRM_SCHEMA",
    "CONFIRM_TOOL",
    "DAY",
    "HISTORY_DAYS",
    "HISTORY_NAME",
    "ORIGIN",
    "PROPOSE_SCHEMA",
    "PROPOSE_TOOL",
    "TREND_DAYS",
    "assess",
    "confirm",
    "curate",
    "days",
    "entry_states",
    "history_path",
    "last_touch",
    "load_history",
    "mark",
    "parse_duration",
    "propose_changes",
    "record_usage",
    "review_date",
    "stale_entries",
    "usage_trend",
    "CurateReport",
    "EntryState",
    "MergeReport",
    "Trend",
]
