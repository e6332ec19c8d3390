"""The frozen snapshot: both stores rendered once, at session start, for the system prompt.

Writes during a session land on disk at once but never change this text; keeping the system
prompt byte-stable keeps the host's prompt cache warm. The next session sees the writes.

Every entry shown to a model, here or echoed in an error, goes through :func:`display_entries`.
Each entry is scored by the risk scorer (:mod:`memhost.security.scorer`), and so is each pair
of adjacent entries (an instruction split over two entries reads as one). An entry is withheld,
shown as a ``[BLOCKED: …]`` placeholder while the live entry stays on disk where the user can
see and remove it, when

* its score reaches ``injection.refuse_at``; or
* it holds the value of a secret this process holds (a configured secret's), checked at every
  session start, since a score kept from before the value became a secret cannot know it; or
* its score reaches ``injection.stage_at`` and the store did not write it (no sidecar record:
  it was planted in the file by hand or by another program, so no screen and no person saw it;
  an entry a person approved was written by the store); or
* it and its neighbour, read together, reach ``injection.stage_at`` when neither does alone.

Every entry that is shown is rendered inert first (:func:`memhost.security.neutralise.for_prompt`):
invisible characters removed, memhost's frames and role-line shapes escaped, data-carrying
markdown images and links written as text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from memhost.builtin_providers.entries import DELIMITER, joined_length
from memhost.security import detector, neutralise, scorer
from memhost.security.masking import mask_known
from memhost.security.redact import holds_known_value, known_values
from memhost.security.scorer import Policy

log = logging.getLogger(__name__)

TITLES = {"memory": "MEMORY (your personal notes)", "user": "USER PROFILE (who the user is)"}
RULE = "═" * 46
DEFAULT_POLICY = Policy()
TOO_LARGE = float("inf")
HOLDS_SECRET = "it holds the value of a configured secret"

# Scores by text (an entry, or two adjacent entries as a pair: their key is the tuple, which
# costs no copy of either text and hashes with their own cached hashes): a session start
# re-renders mostly unchanged entries, and scores a new one once.
# memhost.builtin_providers.verdicts keeps them for the next process. They leave out the values
# of secrets this process holds, which change while it runs: withheld() looks for those itself.
Key = str | tuple[str, str]
_SCORES: dict[Key, float] = {}
_SCORES_KEPT = 16384
_generation = 0  # counts the times the scores were dropped


def _keep(text: Key, score: float) -> None:
    global _generation
    if len(_SCORES) >= _SCORES_KEPT:
        _SCORES.clear()
        _generation += 1
    _SCORES[text] = score


def generation() -> int:
    """Changes whenever scores this process held were dropped."""
    return _generation


def pair_key(first: str, second: str) -> tuple[str, str]:
    return (first, second)


def score(text: str) -> float:
    """The risk score of one entry (scoring it when this process has none yet)."""
    value = _SCORES.get(text)
    if value is None:
        value = (TOO_LARGE if len(text) > scorer.MAX_SCAN_CHARS
                 else scorer.assess(text, held_secrets=False).score)
        _keep(text, value)
    return value


def pair_score(first: str, second: str) -> float:
    """What two adjacent entries score together beyond what each does alone (0 when nothing)."""
    key = pair_key(first, second)
    value = _SCORES.get(key)
    if value is None:
        together = None
        if max(len(first), len(second)) <= scorer.MAX_SCAN_CHARS:
            together = scorer.assess_together(first, second, score(first) + score(second))
        value = together.score if together is not None else 0.0
        _keep(key, value)
    return value


def pairs(entries: list[str]) -> list[tuple[str, str]]:
    """The keys of the adjacent pairs of ``entries``."""
    return list(zip(entries, entries[1:]))


def unscored(keys: Iterable[Key]) -> list[Key]:
    """The entries (or pair keys) this process has no score for."""
    return [k for k in keys if k not in _SCORES]


def prepare(files: list[list[str]], policy: Policy = DEFAULT_POLICY) -> None:
    """Score the entries of ``files`` (each file's shown entries) and their adjacent pairs, as
    :func:`withheld` will ask for them, in the order that costs a session start least.

    A text that reaches the secret detector's engine needs its rule set built first (a few
    hundred milliseconds, in Go, outside Python's lock). :func:`memhost.security.detector.prepare`
    starts that build on another thread, and everything that needs no engine is scored
    meanwhile; what does is scored afterwards, when it is shown, by which time the build has run
    beside the rest on a second core."""
    todo = [e for entries in files for e in unscored(entries) if len(e) <= scorer.MAX_SCAN_CHARS]
    if not todo:
        return  # the usual start: every entry scored (a write's new neighbours are a pair or two)
    joined = {(a, b): scorer.joined(a, b) for entries in files for a, b in zip(entries, entries[1:])
              if pair_key(a, b) not in _SCORES and max(len(a), len(b)) <= scorer.MAX_SCAN_CHARS}
    later = detector.prepare([*todo, *joined.values()])
    if not later:
        return  # nothing waits for the engine: the order does not matter
    for text in todo:
        if text not in later:
            score(text)
    for (first, second), text in joined.items():
        if not {first, second, text} & later and max(score(first), score(second)) < policy.stage_at:
            pair_score(first, second)


def remember(scores: dict[Key, float]) -> None:
    """Record scores computed elsewhere (a write that scored its entry, a saved verdict file)."""
    global _generation
    if len(_SCORES) + len(scores) > _SCORES_KEPT:
        _SCORES.clear()
        _generation += 1
    _SCORES.update(scores)


def known(text: Key) -> float | None:
    return _SCORES.get(text)


def withheld(entries: list[str], policy: Policy = DEFAULT_POLICY,
             reviewed: frozenset[str] = frozenset()) -> dict[int, str]:
    """The index of each entry to withhold, with the reason (see the module docs).

    ``reviewed`` holds the entries the store wrote itself (screened, or approved by a person).
    """
    reasons: dict[int, str] = {}
    if known_values():
        for index, entry in enumerate(entries):
            if holds_known_value(entry):
                reasons[index] = HOLDS_SECRET
    known = _SCORES.get
    scores = [known(e) for e in entries]
    if None in scores:
        scores = [score(e) for e in entries]
    for index, (entry, value) in enumerate(zip(entries, scores)):
        if index in reasons:
            continue
        if value == TOO_LARGE:
            reasons[index] = "it is too large to scan"
        elif value >= policy.refuse_at:
            reasons[index] = _why(entry, value)
        elif value >= policy.stage_at and entry not in reviewed:
            reasons[index] = _why(entry, value) + "; it was not written through the memory tool"
    for index in range(len(entries) - 1):
        if index in reasons or index + 1 in reasons:
            continue
        if max(scores[index], scores[index + 1]) >= policy.stage_at:
            continue  # a reviewed entry beside another: each was judged on its own
        together = known(pair_key(entries[index], entries[index + 1]))
        if together is None:
            together = pair_score(entries[index], entries[index + 1])
        if together >= policy.stage_at:
            why = f"read together with its neighbour it scores {together:g} ({_pair_reasons(entries, index)})"
            reasons[index] = reasons[index + 1] = why
    return reasons


def _why(entry: str, value: float) -> str:
    return f"risk {value:g}: {scorer.assess(entry).describe()}"


def _pair_reasons(entries: list[str], index: int) -> str:
    first, second = entries[index], entries[index + 1]
    together = scorer.assess_together(first, second, score(first) + score(second))
    return together.describe() if together is not None else "split instruction"


def placeholder(filename: str, reason: str) -> str:
    return (f"[BLOCKED: an entry of {filename} is withheld from the prompt ({reason}). Remove it "
            "with the memory tool (action 'remove') if the user did not write it.]")


def display_entries(entries: list[str], filename: str, policy: Policy = DEFAULT_POLICY,
                    reviewed: frozenset[str] = frozenset()) -> list[str]:
    """Each entry as a model may see it: withheld, or rendered inert.

    Every entry is scored, including one that already starts with "[BLOCKED:": skipping those
    let a hand-planted "[BLOCKED: x] <injection>" reach the prompt unscored.
    """
    blocked = withheld(entries, policy, reviewed)
    return [placeholder(filename, blocked[i]) if i in blocked else neutralise.for_prompt(e)
            for i, e in enumerate(entries)]


def display_entry(text: str, filename: str, policy: Policy = DEFAULT_POLICY) -> str:
    return display_entries([text], filename, policy)[0]


def usage_text(used: int, limit: int) -> str:
    if used > limit:  # a percentage would read 100%, or 0% for a limit of 0
        return f"over budget — {used:,}/{limit:,} chars"
    percent = int(used / limit * 100) if limit > 0 else 0
    return f"{percent}% — {used:,}/{limit:,} chars"


def render_block(target: str, entries: list[str], limit: int, filename: str,
                 policy: Policy = DEFAULT_POLICY, reviewed: frozenset[str] = frozenset()) -> str:
    """The framed block for one store, or ``""`` when it has no entries."""
    if not entries:
        return ""
    block, reasons = _render(target, tuple(entries), limit, filename, policy, reviewed,
                             known_values())
    for reason in reasons:
        log.warning("%s: an entry was withheld from the prompt (%s)", filename, reason)
    return block


# Rendering is pure given its arguments, so a session start that finds the entries of the last
# one (the common case) reuses its block; the warnings above are still logged every time.
# ``secret_values`` (the values held, which withheld() reads) is there to key the cache: a block
# rendered before a value became a secret is not reused after.
@lru_cache(maxsize=16)
def _render(target: str, entries: tuple[str, ...], limit: int, filename: str, policy: Policy,
            reviewed: frozenset[str], secret_values: tuple[str, ...],
            ) -> tuple[str, tuple[str, ...]]:
    listed = list(entries)
    blocked = withheld(listed, policy, reviewed)
    shown = [placeholder(filename, blocked[i]) if i in blocked else neutralise.for_prompt(e)
             for i, e in enumerate(listed)]
    header = f"{TITLES[target]} [{usage_text(joined_length(listed), limit)}]"
    return "\n".join([RULE, header, RULE, DELIMITER.join(shown)]), tuple(blocked.values())


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
        """Both blocks for a prompt. A secret value this process holds is masked in them, whatever
        an entry's saved score says: it may have been scored before the value became a secret."""
        return mask_known("\n\n".join(b for b in (self.memory, self.user) if b))
