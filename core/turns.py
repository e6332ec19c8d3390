"""Per-turn bookkeeping: which prompts are too trivial to recall for, and the review nudge."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_TRIVIAL_WORDS = (
    "yes", "no", "ok", "okay", "sure", "thanks", "thank you", "thx", "ty", "y", "n", "yep", "nope",
    "yeah", "nah", "hi", "hey", "hello", "yo", "sup", "continue", "go ahead", "go on", "do it",
    "proceed", "got it", "cool", "nice", "great", "done", "next", "lgtm", "k", "kk",
)
_TRIVIAL = re.compile(
    r"^\s*(?:" + "|".join(re.escape(w) for w in _TRIVIAL_WORDS) + r")"
    r"[\s\W]*$", re.IGNORECASE)


def is_trivial(text: str | None) -> bool:
    """True for prompts that carry nothing to recall for: empty, a slash command, or a bare
    acknowledgement ("ok", "thanks!", "go ahead..."). "ok so what's next" is not trivial."""
    if text is None or not text.strip():
        return True
    if text.lstrip().startswith("/"):
        return True
    return bool(_TRIVIAL.match(text))


def count_user_turns(history: Iterable[dict[str, Any]] | None) -> int:
    return sum(1 for m in history or () if isinstance(m, dict) and m.get("role") == "user")


class NudgeCounter:
    """Every ``interval`` user turns, a background review is due; 0 turns it off."""

    def __init__(self, interval: int) -> None:
        self.interval = interval
        self.since_review = 0

    def resume(self, prior_user_turns: int) -> None:
        """A resumed session continues its cadence instead of starting over."""
        if self.interval > 0:
            self.since_review = prior_user_turns % self.interval

    def tick(self) -> bool:
        if self.interval <= 0:
            return False
        self.since_review += 1
        if self.since_review >= self.interval:
            self.since_review = 0
            return True
        return False


def flatten_content(content: Any) -> str:
    """Message content as plain text: multimodal parts become their text, other parts a marker."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'attachment')}]")
        return "\n".join(p for p in parts if p)
    return str(content)
