"""The curator: how old each memory entry is, which ones are stale, and moving those out.

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

import datetime as _dt
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import CURATOR_ORIGIN, FILENAMES, TARGETS, MemoryStore
from memhost.files import atomic_write_bytes, locked, read_json_or

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.tool import WriteGate
    from memhost.review.llm import ChatModel

log = logging.getLogger(__name__)

DAY = 86_400.0
ORIGIN = CURATOR_ORIGIN
HISTORY_NAME = "usage-history.json"
HISTORY_DAYS = 90  # samples kept (one a day)
TREND_DAYS = 30  # how far back doctor's trend looks

# -- durations and dates ----------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([dwy]?)\s*$", re.IGNORECASE)
_UNITS = {"": DAY, "d": DAY, "w": 7 * DAY, "y": 365 * DAY}


def parse_duration(text: str) -> float:
    """``"90d"``, ``"12w"``, ``"1y"`` or a bare number of days, in seconds."""
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a duration; use a number of days with d, w or y, "
                         "for example 90d, 12w or 1y")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


def review_date(text: str, now: float) -> str:
    """A review date given as ``YYYY-MM-DD`` or as a duration from now (``30d``, ``+6w``)."""
    value = str(text).strip()
    try:
        return _dt.date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    try:
        seconds = parse_duration(value.lstrip("+"))
    except ValueError:
        raise ValueError(f"{text!r} is not a date; use YYYY-MM-DD (for example 2026-03-01) or a "
                         "time from now such as 30d, 6w or 1y") from None
    return _dt.date.fromtimestamp(now + seconds).isoformat()


review_time = entrymeta.review_time


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def last_touch(record: dict[str, Any]) -> float | None:
    """When the entry was last written or confirmed (its creation counts as a write)."""
    times = [t for t in (_number(record.get(k)) for k in ("created", "updated", "confirmed"))
             if t is not None]
    return max(times) if times else None


def days(seconds: float) -> int:
    return int(seconds // DAY)


# -- staleness --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryState:
    """One entry as the curator sees it."""

    target: str
    text: str
    created: float | None
    updated: float | None
    confirmed: float | None
    origin: str | None
    pinned: bool
    review_after: str | None
    #: Last update or confirmation (``None``: age unknown, the entry has no metadata).
    touched: float | None
    #: Seconds since ``touched``.
    age: float | None
    stale: bool
    #: Why it is stale, or why its age is unknown; ``""`` for a fresh entry.
    reason: str

    @property
    def age_known(self) -> bool:
        return self.touched is not None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["age_days"] = days(self.age) if self.age is not None else None
        return data


def assess(target: str, text: str, record: dict[str, Any], *, now: float,
           window: float) -> EntryState:
    """Apply the staleness rule (module docstring) to one entry and its sidecar record."""
    touched = last_touch(record)
    pinned = bool(record.get("pinned"))
    review = record.get("review_after") if isinstance(record.get("review_after"), str) else None
    review_at = review_time(review)
    age = max(0.0, now - touched) if touched is not None else None
    if review_at is not None:  # a person chose the date: it replaces the age window
        stale = now >= review_at
        reason = f"review date {review} has come" if stale else ""
    elif touched is None:
        stale, reason = False, "age unknown (no metadata)"
    elif pinned:
        stale, reason = False, ""
    else:
        stale = age is not None and age > window
        reason = f"not updated or confirmed for {days(age or 0)} days" if stale else ""
    return EntryState(target, text, _number(record.get("created")), _number(record.get("updated")),
                      _number(record.get("confirmed")), record.get("origin") or None, pinned,
                      review, touched, age, stale, reason)


def entry_states(store: MemoryStore, target: str, *, now: float | None = None,
                 window: float = 90 * DAY) -> list[EntryState]:
    """Every entry of ``target`` with its state; raises ``Unreadable`` for an unreadable file."""
    now = store.clock() if now is None else now
    return [assess(target, text, record, now=now, window=window)
            for text, record in store.metadata(target)]


def _targets(store: MemoryStore, targets: Iterable[str] | None) -> list[str]:
    wanted = list(targets) if targets is not None else list(TARGETS)
    return [t for t in wanted if store.enabled.get(t, False)]


def oldest_first(states: Iterable[EntryState]) -> list[EntryState]:
    def key(state: EntryState) -> float:
        if state.touched is not None:
            return state.touched
        return review_time(state.review_after) or 0.0

    return sorted(states, key=key)


def stale_entries(store: MemoryStore, older_than: float = 90 * DAY, now: float | None = None, *,
                  targets: Iterable[str] | None = None) -> list[EntryState]:
    """The stale entries of the enabled stores, oldest first (``older_than`` in seconds)."""
    now = store.clock() if now is None else now
    found = [s for t in _targets(store, targets)
             for s in entry_states(store, t, now=now, window=older_than) if s.stale]
    return oldest_first(found)


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


# -- the model-assisted pass ------------------------------------------------------------------

PROPOSE_TOOL = "propose_change"
PROPOSE_SCHEMA: dict[str, Any] = {
    "name": PROPOSE_TOOL,
    "description": (
        "Propose one change to memory for a person to approve. 'merge' folds two or more "
        "overlapping entries of the same store into one new entry; 'rewrite' replaces one entry "
        "with a shorter or more current wording. Nothing changes until a person approves it."),
    "parameters": {
        "type": "object",
        "properties": {
            "target": {"type": "string", "enum": list(TARGETS)},
            "kind": {"type": "string", "enum": ["merge", "rewrite"]},
            "entries": {"type": "array", "items": {"type": "string"}, "description": (
                "For each entry the change touches, a short unique part of its text (merge: two "
                "or more; rewrite: exactly one).")},
            "content": {"type": "string", "description": "The new entry's full text."},
            "reason": {"type": "string", "description": "One short line: why."},
        },
        "required": ["target", "kind", "entries", "content"],
    },
}

MERGE_PROMPT = """\
You tidy the long-term memory of an assistant. Memory is two small stores of short entries \
('memory': the assistant's notes; 'user': the user profile). Every entry costs space in every \
future conversation, so overlap and outdated wording waste it.

Propose changes with the `propose_change` tool, one call per change:
- merge: two or more entries of the same store that say overlapping things become one entry \
that keeps every fact they hold.
- rewrite: an entry marked stale becomes a shorter wording of what is still likely to hold.
Rules:
- Never invent facts; a merged or rewritten entry holds nothing the old entries did not say.
- Entries marked PINNED must not be changed, merged or removed; leave them alone.
- Propose only clear improvements. Few good proposals beat many small ones.
- A person approves or rejects every proposal; nothing you propose is applied by itself.
- When you have nothing (more) to propose, answer with one short line and stop."""


@dataclass
class MergeReport:
    """What the merge pass proposed."""

    model_calls: int = 0
    #: ``{target, kind, entries, content, reason, pending_id}`` (``pending_id`` is ``None`` when
    #: nothing was staged, in a dry run).
    proposals: list[dict[str, Any]] = field(default_factory=list)
    #: ``{target, kind, entries, reason}`` refused before staging (pinned, no match, ...).
    refused: list[dict[str, Any]] = field(default_factory=list)
    final_text: str = ""
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _listing(store: MemoryStore, now: float, window: float, targets: list[str]) -> str:
    from memhost.builtin_providers.snapshot import display_entry

    blocks = []
    for target in targets:
        states = entry_states(store, target, now=now, window=window)
        lines = [f"{FILENAMES[target]} (target '{target}'), "
                 f"{store.usage(target, [s.text for s in states])}:"]
        if not states:
            lines.append("(no entries)")
        for number, state in enumerate(states, 1):
            tag = ""
            if state.pinned:
                tag = "  [PINNED: never change]"
            elif state.stale:
                tag = f"  [stale: {state.reason}]"
            lines.append(f"[{number}] {display_entry(state.text, FILENAMES[target])}{tag}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def propose_changes(store: MemoryStore, model: ChatModel, *, home: Path | None = None,
                    stage: bool = True, max_proposals: int = 10, max_calls: int = 4,
                    stale_after: float = 90 * DAY, now: float | None = None,
                    targets: Iterable[str] | None = None) -> MergeReport:
    """Ask ``model`` for merges and rewrites and stage each valid one as a pending write
    (origin ``curator``); with ``stage=False`` (a dry run) they are only checked and reported.
    A proposal touching a pinned entry, matching nothing or several entries, or with content the
    store would refuse, is refused and the model is told why. Model failures end the pass and
    are kept in ``error``; nothing is raised for them."""
    from memhost.review.llm import ModelError

    now = store.clock() if now is None else now
    chosen = _targets(store, targets)
    report = MergeReport()
    if not chosen:
        report.error = "both memory stores are disabled"
        return report
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": MERGE_PROMPT},
        {"role": "user", "content": "Memory as it is now:\n\n"
                                    + _listing(store, now, stale_after, chosen)},
    ]
    for _ in range(max(1, max_calls)):
        report.model_calls += 1
        try:
            reply = model.complete(messages, [PROPOSE_SCHEMA])
        except ModelError as exc:
            report.error = str(exc)
            return report
        messages.append(reply.as_message())
        if not reply.tool_calls:
            report.final_text = reply.content.strip()
            return report
        for call in reply.tool_calls:
            answer = _handle_proposal(store, call, report, home=home or store.home, stage=stage,
                                      targets=chosen, limit=max_proposals)
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(answer, ensure_ascii=False)})
        if len(report.proposals) >= max_proposals:
            return report
    return report


def _handle_proposal(store: MemoryStore, call: Any, report: MergeReport, *, home: Path,
                     stage: bool, targets: list[str], limit: int) -> dict[str, Any]:
    from memhost.review import approval

    def refuse(why: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        args = args or {}
        report.refused.append({"target": args.get("target"), "kind": args.get("kind"),
                               "entries": args.get("entries"), "reason": why})
        return {"success": False, "error": why}

    if call.name != PROPOSE_TOOL:
        return refuse(f"Only `{PROPOSE_TOOL}` is available here, not `{call.name}`.")
    if len(report.proposals) >= limit:
        return {"success": False, "done": True,
                "error": f"The limit of {limit} proposals for this run is reached; stop."}
    try:
        args = call.parsed_arguments()
    except ValueError as exc:
        return refuse(f"The arguments are not a JSON object ({exc}).")
    target, kind, content = args.get("target"), args.get("kind"), args.get("content")
    entries = args.get("entries")
    if target not in targets:
        return refuse(f"target must be one of {', '.join(targets)}.", args)
    if kind not in ("merge", "rewrite"):
        return refuse("kind must be 'merge' or 'rewrite'.", args)
    if not isinstance(entries, list) or not all(isinstance(e, str) and e.strip() for e in entries):
        return refuse("entries must be a list of short parts of entries.", args)
    if kind == "merge" and len(entries) < 2:
        return refuse("A merge needs two or more entries.", args)
    if kind == "rewrite" and len(entries) != 1:
        return refuse("A rewrite needs exactly one entry.", args)
    if kind == "rewrite":
        proposal: dict[str, Any] = {"action": "replace", "target": target,
                                    "old_text": entries[0], "content": content}
    else:
        proposal = {"action": "batch", "target": target, "operations": [
            {"action": "replace", "old_text": entries[0], "content": content},
            *({"action": "remove", "old_text": e} for e in entries[1:])]}
    matched = approval.resolve(store, proposal)
    if isinstance(matched, dict):
        return refuse(str(matched.get("error", "it does not apply")), args)
    touched = [m["entry"] for m in matched]
    if len(set(touched)) != len(touched):
        return refuse("Two of the given parts designate the same entry; give one part per "
                      "entry.", args)
    meta = entrymeta.load(store.path(target))
    pinned = [e for e in touched if entrymeta.for_entry(meta, e).get("pinned")]
    if pinned:
        return refuse("Refused: it touches a pinned entry, and pinned entries are never "
                      f"changed by the curator ({pinned[0][:60]!r}).", args)
    if any(set(touched) & set(p["entries"]) for p in report.proposals):
        return refuse("An earlier proposal of this run already touches one of these entries.",
                      args)
    item = {"target": target, "kind": kind, "entries": touched, "content": content,
            "reason": str(args.get("reason") or ""), "pending_id": None}
    if stage:
        summary, detail = approval.describe(proposal, matched)
        short = detail if len(detail) <= 120 else detail[:119] + "…"
        try:
            record = approval.PendingStore(home).stage(
                proposal, summary=f"curator {kind}: {summary}: {short}", detail=detail,
                origin=ORIGIN, matched=matched)
        except OSError as exc:
            return refuse(f"It could not be staged ({exc.strerror or exc}).", args)
        item["pending_id"] = record.id
    report.proposals.append(item)
    return {"success": True, "staged": stage, "pending_id": item["pending_id"],
            "message": "Proposed; a person will review it. Do not propose it again."}


# -- usage history ----------------------------------------------------------------------------


def history_path(folder: Path) -> Path:
    return folder / HISTORY_NAME


def _day(when: float) -> str:
    return _dt.datetime.fromtimestamp(when, _dt.timezone.utc).date().isoformat()


def load_history(folder: Path) -> list[dict[str, Any]]:
    """The samples, oldest first: ``{"day", "time", "memory": [used, limit], "user": [...]}``
    (a store that was not written that day is absent from the day's sample)."""
    data = read_json_or(history_path(folder), {})
    samples = data.get("samples") if isinstance(data, dict) else None
    return [s for s in samples or [] if isinstance(s, dict) and isinstance(s.get("day"), str)]


#: Per (folder, target): the day this process last saw that target's sample in the history,
#: and the history file's identity then. A later write that day costs a stat, not a read.
_SAMPLED: dict[tuple[Path, str], tuple[str, tuple[int, ...]]] = {}


def _sampled(key: tuple[Path, str], day: str, identity: tuple[int, ...]) -> None:
    if len(_SAMPLED) >= 256 and key not in _SAMPLED:
        _SAMPLED.clear()
    _SAMPLED[key] = (day, identity)


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def record_usage(folder: Path, target: str, used: int, limit: int, when: float) -> None:
    """Note ``target``'s fullness after a write: one sample a day, set by the store's first
    write of the day, at most :data:`HISTORY_DAYS` days kept. Later writes that day cost one
    stat of the history file in a process that saw the sample (one small read otherwise)."""
    day = _day(when)
    path = history_path(folder)
    key = (folder, target)
    identity = _identity(path)
    if identity is not None and _SAMPLED.get(key) == (day, identity):
        return

    def noted(samples: list[dict[str, Any]]) -> bool:
        return any(s["day"] == day and target in s for s in samples)

    if noted(load_history(folder)):
        if identity is not None:  # taken before the read: a change since makes it differ
            _sampled(key, day, identity)
        return
    with locked(path, 5.0):
        samples = load_history(folder)
        if noted(samples):
            return
        sample = next((s for s in samples if s["day"] == day), None)
        if sample is None:
            sample = {"day": day, "time": when}
            samples.append(sample)
            samples.sort(key=lambda s: s["day"])
        sample[target] = [used, limit]
        payload = {"version": 1, "samples": samples[-HISTORY_DAYS:]}
        atomic_write_bytes(path, json.dumps(payload, sort_keys=True).encode("utf-8"),
                           durable=False)
        if (written := _identity(path)) is not None:
            _sampled(key, day, written)


@dataclass(frozen=True)
class Trend:
    target: str
    since: float  # time of the oldest sample used
    then_percent: int
    now_percent: int
    #: Days until full at the growth rate seen, when it grows and would fill within a year.
    full_in_days: int | None

    @property
    def change(self) -> int:
        return self.now_percent - self.then_percent


def _percent(used: Any, limit: Any) -> int | None:
    if not isinstance(used, int) or not isinstance(limit, int) or limit <= 0:
        return None
    return min(100, int(used / limit * 100))


def usage_trend(folder: Path, target: str, used: int, limit: int, now: float,
                samples: Sequence[dict[str, Any]] | None = None) -> Trend | None:
    """How ``target``'s fullness moved over the last :data:`TREND_DAYS` days (or since the first
    sample, when younger) to ``used`` now; ``None`` without a sample at least a day old."""
    samples = load_history(folder) if samples is None else samples
    since = now - TREND_DAYS * DAY
    usable = [s for s in samples if isinstance(s.get(target), list) and len(s[target]) == 2
              and isinstance(s.get("time"), int | float) and s["time"] <= now - DAY]
    now_percent = _percent(used, limit)
    if not usable or now_percent is None:
        return None
    # The store as it was when the span began: the last sample before it (nothing was written
    # in between), else the span's first sample.
    before = [s for s in usable if s["time"] <= since]
    first = before[-1] if before else usable[0]
    start = max(float(first["time"]), since)
    then_percent = _percent(*first[target])
    if then_percent is None:
        return None
    elapsed = max(DAY, now - start)
    growth = (used - first[target][0]) / elapsed  # chars per second
    full_in = None
    if growth > 0 and used < limit:
        seconds = (limit - used) / growth
        if seconds < 365 * DAY:
            full_in = max(1, days(seconds))
    return Trend(target, start, then_percent, now_percent, full_in)


__all__ = [
    "CONFIRM_SCHEMA",
    "CONFIRM_TOOL",
    "ORIGIN",
    "CurateReport",
    "EntryState",
    "MergeReport",
    "Trend",
    "assess",
    "confirm",
    "curate",
    "entry_states",
    "mark",
    "parse_duration",
    "propose_changes",
    "record_usage",
    "review_date",
    "stale_entries",
    "usage_trend",
]
