"""The checks a write passes before anything changes, and the refusals it answers with.

:class:`WriteChecks` is mixed into :class:`memhost.builtin_providers.store.MemoryStore`: the new
text is cleaned and screened, ``old_text`` must designate exactly one entry, the curator never
touches a pinned entry, the result must fit the budget; a file that cannot be read or has
drifted is refused with what to do about it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memhost.builtin_providers import backups, budget, entrymeta, snapshot
from memhost.builtin_providers.entries import (
    FILENAMES,
    canonical_entry,
    joined_length,
    normalise,
)
from memhost.builtin_providers.outcomes import (
    NOTHING_APPLIED,
    OpError,
    Outcome,
    Unreadable,
    fail,
)
from memhost.builtin_providers.snapshot import display_entries

#: The origin of the curator's writes (see memhost.review.curator); they never change a pinned
#: entry.
CURATOR_ORIGIN = "curator"
#: How many of the entries an ambiguous old_text matched an answer lists.
MATCHES_SHOWN = 10


class WriteChecks:
    """The store's checks; :class:`~memhost.builtin_providers.store.MemoryStore` provides
    ``screen``, ``limits``, ``clock`` and ``path()``."""

    screen: Any
    limits: dict[str, int]
    clock: Any
    path: Callable[[str], Path]
    reviewed: Callable[[str, list[str]], frozenset[str]]

    def clean_content(self, content: Any, label: str, empty_hint: str = "") -> str:
        if not isinstance(content, str) or not content.strip():
            raise OpError(f"{label} cannot be empty.{empty_hint}", counts=False)
        try:
            entry = canonical_entry(content)
        except ValueError as exc:
            raise OpError(f"{label} is not a valid entry: {exc}.", counts=False) from None
        # Only what a refusal rests on (scorer.refusal_reading): the whole assessment is the
        # write gate's and the next snapshot's to make.
        refusal = self.screen.refusal(entry)
        if refusal is not None:
            raise OpError(refusal["error"], counts=False,
                           blocked_pattern=refusal["blocked_pattern"], risk=refusal["risk"])
        return entry

    @staticmethod
    def clean_old_text(old_text: Any) -> str:
        if not isinstance(old_text, str) or not old_text.strip():
            raise OpError("old_text cannot be empty.", counts=False)
        return normalise(old_text).strip()

    def locate(self, target: str, entries: list[str], old: str, action: str,
                matched_entry: str | None, *, where: str = "", batch: bool = False) -> int:
        prefix = f"{where}: " if where else ""
        tail = NOTHING_APPLIED if batch else ""
        if matched_entry is not None:
            # A staged write applies to exactly the entry a person reviewed, or not at all.
            if matched_entry in entries:
                return entries.index(matched_entry)
            raise OpError(
                f"{prefix}the entry changed since this write was staged, so it was not applied: "
                f"{matched_entry[:80]!r} is no longer in memory as reviewed. Reject the pending "
                "write, or stage it again against the current entry." + tail, counts=False)
        exact = [i for i, e in enumerate(entries) if e == old]
        if exact:
            return exact[0]
        hits = [i for i, e in enumerate(entries) if old in e]
        if not hits:
            extra = {} if batch else {"current_entries": self.shown_entries(target, entries)}
            raise OpError(
                f"{prefix}no entry matched {old!r}. Check current_entries and retry with a short, "
                f"exact part of the entry to {action}." + tail,
                usage=self.short_usage(target, entries), **extra)
        if len({entries[i] for i in hits}) > 1:
            matched = [entries[i] for i in hits]
            previews = [p[:80] + ("..." if len(p) > 80 else "")
                        for p in self._displayed(target, matched[:MATCHES_SHOWN])]
            if len(matched) > MATCHES_SHOWN:
                previews.append(f"[and {len(matched) - MATCHES_SHOWN:,} more]")
            raise OpError(f"{prefix}{old!r} matched {len(hits)} different entries; use a longer, "
                           "unique part of the one you mean." + tail, counts=batch, matches=previews)
        return hits[0]

    def refuse_pinned(self, target: str, entry: str, origin: str, *, where: str = "") -> None:
        """The curator never replaces or removes a pinned entry, even when a person approved
        the proposal before the entry was pinned."""
        if origin != CURATOR_ORIGIN:
            return
        if entrymeta.for_entry(entrymeta.view(self.path(target)), entry).get("pinned"):
            prefix = f"{where}: " if where else ""
            raise OpError(f"{prefix}{entry[:80]!r} is pinned, and the curator never changes a "
                           "pinned entry. Nothing was changed; reject this write, or unpin the "
                           "entry first (`memhost memory unpin`).", counts=False)

    def check_budget(self, target: str, before: list[str], after: list[str], advice: str,
                      *, batch: bool = False) -> None:
        limit, new = self.limits[target], joined_length(after)
        if new <= limit:  # most writes: the old length is needed only to allow a shrink
            return
        used = joined_length(before)
        # A store already over budget (its limit was lowered) may still shrink.
        if new <= used:
            return
        extra = {} if batch else {"current_entries": self.shown_entries(target, before)}
        # An add does not check for drift, but the replace and remove the advice asks for
        # would be refused: a file that only a person can fix says so at once.
        drifted = None if batch else self.drift(target)
        if drifted:
            advice = (f"Its entries cannot be merged or removed with the memory tool until a "
                      f"person fixes the file ({drifted}); ask the user to run "
                      f"`{budget.FIX_COMMAND}`, and do not retry this add before then.")
        raise OpError(f"{FILENAMES[target]} would be at {new:,}/{limit:,} chars (now {used:,}). "
                       + advice + (NOTHING_APPLIED if batch else ""),
                       usage=self.short_usage(target, before), **extra)

    def short_usage(self, target: str, entries: list[str]) -> str:
        return f"{joined_length(entries):,}/{self.limits[target]:,}"

    def shown_entries(self, target: str, entries: list[str]) -> list[str]:
        """The entries as an answer to the model shows them: as many as the budget holds, as
        the prompt shows them, then a line saying how many more there are. A file edited by
        hand to many times its budget came back whole in every refusal (5,000 entries, 138 KB
        of the model's context, for one refused add)."""
        fitted = budget.fit(entries, self.limits[target])
        shown = self._displayed(target, list(fitted.shown))
        if fitted.withheld:
            shown.append(budget.withheld_line(fitted, FILENAMES[target]))
        return shown

    def _displayed(self, target: str, entries: list[str]) -> list[str]:
        """``entries`` as a model may see them: withheld or rendered inert."""
        return display_entries(entries, FILENAMES[target], self.screen.policy,
                               self.reviewed(target, entries))

    def reviewed(self, target: str, entries: list[str]) -> frozenset[str]:
        """The entries in the staging zone that the store wrote (screened or approved); the
        sidecar is read only when there is such an entry, which is rare."""
        policy = self.screen.policy
        grey = [e for e in entries if policy.stage_at <= snapshot.score(e) < policy.refuse_at]
        if not grey:
            return frozenset()
        meta = entrymeta.load(self.path(target))
        return frozenset(e for e in grey
                         if entrymeta.written_by_store(entrymeta.for_entry(meta, e)))

    def unreadable(self, target: str, exc: Unreadable) -> Outcome:
        return fail(
            f"Refusing to write {FILENAMES[target]}: the file exists but could not be read ({exc}). "
            "Saving now would replace memory that could not be read, so nothing was changed. "
            f"Check the file at {self.path(target)} (permissions, encoding) and retry.")

    def drift_refusal(self, target: str, raw: str, reason: str) -> Outcome:
        path = self.path(target)
        try:  # one backup per content, however often a write is refused
            shown = str(backups.back_up(path, raw, self.clock))
        except OSError as exc:
            shown = f"a backup beside {path} failed ({exc}); the file is unchanged on disk"
        return fail(
            f"Refusing to change {FILENAMES[target]}: its content would not survive a rewrite "
            f"safely ({reason}). It was probably edited by hand or appended to by another tool. "
            f"A copy was saved to {shown}. Nothing was changed.",
            drift_backup=shown,
            remediation=(
                f"Open {path} and make it a clean list of entries separated by lines holding only "
                "'§'; move long unstructured text out of it (or split it into short entries with "
                "the memory tool's 'add'). Then retry. `memhost doctor` reports when the file is "
                "clean again."))

