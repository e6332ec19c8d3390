"""The curator's model-assisted pass (``[curator] merge``): a chat model proposes merges of
overlapping entries and rewrites of stale ones.

Every proposal is staged for approval (origin ``curator``), never applied, and a proposal that
touches a pinned entry, matches nothing or several entries, or holds content the store would
refuse, is refused before it is staged and the model is told why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import CURATOR_ORIGIN as ORIGIN
from memhost.builtin_providers.store import FILENAMES, TARGETS, MemoryStore
from memhost.review.staleness import DAY, _targets, entry_states

if TYPE_CHECKING:  # pragma: no cover
    from memhost.review.llm import ChatModel

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


