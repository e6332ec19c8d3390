"""The LoCoMo conversations and questions, and how recall of them is scored.

LoCoMo (Maharana et al., 2024; github.com/snap-research/locomo) holds ten long conversations
between two people, each over weeks of dated sessions, with questions whose answers rest on named
turns (``evidence``: ``D3:12`` is session 3, turn 12). The data is not shipped with memhost: pass
``--locomo PATH``, where PATH is the repository's ``data/locomo10.json`` or a folder holding it or
the per-conversation ``<number>.json`` files of its ``locomo10.zip``.

Scoring is evidence recall: a question's score is the share of its evidence turns whose whole
text is in the recalled context (whitespace aside), and a category's figure is the mean over its
questions. Categories 1–4 are scored (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop);
category 5 (adversarial: the answer is not in the conversation) has nothing to recall.

Conversations 26, 30, 41, 42 and 43 are the development set (the default); 44, 47, 48, 49 and 50
are held out, to check a change that was tuned on the first five.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

DEVELOPMENT = ("26", "30", "41", "42", "43")
HELD_OUT = ("44", "47", "48", "49", "50")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Turn:
    id: str  # "D3:12"
    speaker: str
    text: str

    @property
    def said(self) -> str:
        """The turn as it is fed to memory and to the baseline: ``Speaker: text``."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # turn ids, each one the conversation has


@dataclass
class Conversation:
    id: str  # "26"
    sessions: list[Session]
    questions: list[Question]
    #: Questions left out because none of their evidence names a turn of the conversation.
    unscorable: int = 0

    @property
    def turns(self) -> dict[str, Turn]:
        return {t.id: t for s in self.sessions for t in s.turns}


def conversation_id(value: str) -> str:
    """``conv-26``, ``26`` and ``26.json`` all name conversation ``26``."""
    text = value.strip().lower().removesuffix(".json").removeprefix("conv-")
    if not text.isdigit():
        raise ValueError(f"{value!r} is not a LoCoMo conversation id (like 26 or conv-26)")
    return text


def _when(text: str | None) -> datetime | None:
    # "1:56 pm on 8 May, 2023"
    try:
        return datetime.strptime(text or "", "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None


def parse(number: str, data: dict) -> Conversation:
    """One conversation from its JSON: the sample's ``conversation`` (or the whole object, as
    in the per-conversation files) plus its ``qa`` list."""
    talk = data.get("conversation", data)
    sessions = []
    for key in talk:
        match = _SESSION.fullmatch(key)
        if not match or not isinstance(talk[key], list):
            continue
        turns = tuple(Turn(t["dia_id"], t["speaker"], t["text"]) for t in talk[key]
                      if t.get("text", "").strip())
        sessions.append(Session(int(match.group(1)), _when(talk.get(f"{key}_date_time")),
                                turns))
    sessions.sort(key=lambda s: s.number)
    known = {t.id for s in sessions for t in s.turns}
    questions, unscorable = [], 0
    for qa in data.get("qa", ()):
        if qa.get("category") not in CATEGORIES:
            continue
        # Some evidence lists are malformed ("D8:6; D9:17", "D:11:26"): take every id in them.
        ids = [f"D{s}:{t}" for s, t in _EVIDENCE.findall(" ".join(map(str, qa["evidence"])))]
        evidence = tuple(dict.fromkeys(i for i in ids if i in known))
        if not evidence:
            unscorable += 1
            continue
        questions.append(Question(qa["question"], qa["category"], evidence))
    return Conversation(number, sessions, questions, unscorable)


def load(path: Path, wanted: Sequence[str] = DEVELOPMENT) -> list[Conversation]:
    """The ``wanted`` conversations from ``path``; only those are read from a folder."""
    path = Path(path)
    wanted = [conversation_id(w) for w in wanted]
    if path.is_dir() and (path / "locomo10.json").is_file():
        path = path / "locomo10.json"
    if path.is_dir():
        missing = [w for w in wanted if not (path / f"{w}.json").is_file()]
        if missing:
            raise FileNotFoundError(f"{path} has no {', '.join(m + '.json' for m in missing)} "
                                    "(nor locomo10.json)")
        return [parse(w, json.loads((path / f"{w}.json").read_text(encoding="utf-8")))
                for w in wanted]
    samples = json.loads(path.read_text(encoding="utf-8"))
    by_id = {conversation_id(str(s.get("sample_id", ""))): s for s in samples}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise ValueError(f"{path} has no conversation {', '.join(missing)}; it has "
                         f"{', '.join(sorted(by_id, key=int))}")
    return [parse(w, by_id[w]) for w in wanted]


# -- scoring --------------------------------------------------------------------------------------


def _flat(text: str) -> str:
    return " ".join(text.split())


def found(evidence: Iterable[str], turns: dict[str, Turn], context: str) -> float:
    """The share of the ``evidence`` turns whose whole text is in ``context``."""
    ids = list(evidence)
    flat = _flat(context)
    return sum(_flat(turns[i].text) in flat for i in ids) / len(ids)


def recall_at(evidence: Iterable[str], ranked: Sequence[str], k: int) -> float:
    """The share of the ``evidence`` turn ids among the first ``k`` of ``ranked``."""
    ids = list(evidence)
    top = set(ranked[:k])
    return sum(i in top for i in ids) / len(ids)


@dataclass
class Tally:
    """Per-question scores, grouped by category."""

    scores: dict[int, list[float]] = field(default_factory=dict)

    def add(self, category: int, score: float) -> None:
        self.scores.setdefault(category, []).append(score)

    def overall(self) -> float:
        every = [s for group in self.scores.values() for s in group]
        return statistics.fmean(every) if every else float("nan")

    def category(self, number: int) -> float:
        group = self.scores.get(number)
        return statistics.fmean(group) if group else float("nan")

    @property
    def count(self) -> int:
        return sum(len(group) for group in self.scores.values())
