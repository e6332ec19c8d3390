"""The frozen snapshot: both stores rendered once, at session start, for the system prompt.

Writes during a session land on disk at once but never change this text; keeping the system
prompt byte-stable keeps the host's prompt cache warm. The next session sees the writes.

Every entry shown to a model, here or echoed in an error, goes through :func:`display_entry`:
an entry that trips the threat scanner appears as a ``[BLOCKED: …]`` placeholder while the live
entry stays on disk, where the user can see and remove it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

from memhost.builtin_providers.entries import DELIMITER, joined_length
from memhost.security import threats

log = logging.getLogger(__name__)

TITLES = {"memory": "MEMORY (your personal notes)", "user": "USER PROFILE (who the user is)"}
RULE = "═" * 46


# Verdicts by entry text (the reasons an entry is withheld; empty when it passed): a session
# start re-renders mostly unchanged entries, and a write has already scanned what it saved.
# memhost.builtin_providers.verdicts keeps the passes for the next process.
_VERDICTS: dict[str, tuple[str, ...]] = {}
_VERDICTS_KEPT = 8192
_generation = 0  # counts the times the verdicts were dropped


def _keep(text: str, reasons: tuple[str, ...]) -> None:
    global _generation
    if len(_VERDICTS) >= _VERDICTS_KEPT:
        _VERDICTS.clear()
        _generation += 1
    _VERDICTS[text] = reasons


def generation() -> int:
    """Changes whenever verdicts this process held were dropped."""
    return _generation


def _block_reason(text: str) -> tuple[str, ...]:
    reasons = _VERDICTS.get(text)
    if reasons is None:
        if len(text) > threats.MAX_SCAN_CHARS:
            reasons = ("too_large_to_scan",)
        else:
            reasons = tuple(f.id for f in threats.scan(text, "strict"))
        _keep(text, reasons)
    return reasons


def unscanned(entries: list[str]) -> list[str]:
    """The entries this process has no verdict for."""
    return [e for e in entries if e not in _VERDICTS]


def passed(entries: list[str]) -> None:
    """Record that ``entries`` passed the strict scan (the caller scanned them, or knows they
    did); an entry too long to scan is never recorded as passed."""
    for entry in entries:
        if len(entry) <= threats.MAX_SCAN_CHARS:
            _keep(entry, ())


def passed_scan(text: str) -> bool:
    """Whether ``text`` passed the scan (scanning it when this process has no verdict yet)."""
    return not _block_reason(text)


def display_entry(text: str, filename: str) -> str:
    # Every entry is scanned, including one that already starts with "[BLOCKED:": skipping
    # those let a hand-planted "[BLOCKED: x] <injection>" reach the prompt unscanned. A real
    # placeholder is plain text and passes the scan unchanged, so nothing is wrapped twice.
    reasons = _block_reason(text)
    if not reasons:
        return text
    return (f"[BLOCKED: an entry of {filename} matched threat pattern(s) {', '.join(reasons)} and "
            f"is withheld from the prompt. Remove it with the memory tool (action 'remove').]")


def display_entries(entries: list[str], filename: str) -> list[str]:
    return [display_entry(e, filename) for e in entries]


def usage_text(used: int, limit: int) -> str:
    if used > limit:  # a percentage would read 100%, or 0% for a limit of 0
        return f"over budget — {used:,}/{limit:,} chars"
    percent = int(used / limit * 100) if limit > 0 else 0
    return f"{percent}% — {used:,}/{limit:,} chars"


def render_block(target: str, entries: list[str], limit: int, filename: str) -> str:
    """The framed block for one store, or ``""`` when it has no entries."""
    if not entries:
        return ""
    block, withheld = _render(target, tuple(entries), limit, filename)
    for _ in range(withheld):
        log.warning("%s: an entry matched the threat scanner and was withheld from the prompt",
                    filename)
    return block


# Rendering is pure given the entries, so a session start that finds the entries of the last
# one (the common case) reuses its block; the warnings above are still logged every time.
@lru_cache(maxsize=16)
def _render(target: str, entries: tuple[str, ...], limit: int, filename: str) -> tuple[str, int]:
    listed = list(entries)
    shown = display_entries(listed, filename)
    withheld = sum(1 for original, sanitized in zip(listed, shown, strict=True)
                   if sanitized != original)
    header = f"{TITLES[target]} [{usage_text(joined_length(listed), limit)}]"
    return "\n".join([RULE, header, RULE, DELIMITER.join(shown)]), withheld


@dataclass(frozen=True)
class Snapshot:
    """Both blocks as they were when the session started."""

    memory: str = ""
    user: str = ""
    #: What is wrong with the stores, for ``status()`` (an over-budget file, ...).
    problems: tuple[str, ...] = ()

    def block(self, target: str) -> str:
        return self.memory if target == "memory" else self.user

    def render(self) -> str:
        return "\n\n".join(b for b in (self.memory, self.user) if b)
