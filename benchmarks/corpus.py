"""Deterministic test text: memory entries, turns and streamed model output.

Everything is generated from a seeded RNG so two runs measure the same bytes. The text is plain
and harmless on purpose: it must pass the threat scanner and carry no secret, as real memory does.
"""

from __future__ import annotations

import random
from functools import lru_cache

_SUBJECTS = ["The user", "Their team", "The project", "The build", "The staging host", "CI",
             "The docs site", "The mobile app", "The data pipeline", "The release process"]
_VERBS = ["prefers", "uses", "runs on", "depends on", "was moved to", "avoids", "relies on",
          "is documented in", "is deployed with", "is tested with"]
_OBJECTS = ["Python 3.12 and uv", "tabs of width four", "short answers with examples",
            "PostgreSQL 16 on port 5433", "a monorepo with pnpm workspaces", "GitHub Actions",
            "British spelling in prose", "pytest with xdist", "Neovim with a dark theme",
            "the Europe/Berlin time zone", "Terraform modules under infra/", "Rust for the CLI"]
_TAILS = ["since March", "for every new service", "unless told otherwise", "on weekdays",
          "after the last migration", "in code review", "when writing commit messages", ""]


def entry(rng: random.Random, label: str) -> str:
    """One short declarative fact that starts with ``label`` (a unique handle for replace)."""
    tail = rng.choice(_TAILS)
    text = f"{label} {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
    return f"{text} {tail}.".replace(" .", ".") if tail else f"{text}."


def entries(count: int, *, prefix: str = "n", seed: int = 7) -> list[str]:
    """``count`` distinct entries labelled ``<prefix>000`` … (each label is a unique substring)."""
    rng = random.Random(seed)
    return [entry(rng, f"{prefix}{i:03d}") for i in range(count)]


def user_message(rng: random.Random) -> str:
    return (f"Can you look at why {rng.choice(_SUBJECTS).lower()} fails when it {rng.choice(_VERBS)} "
            f"{rng.choice(_OBJECTS)}? It started {rng.choice(_TAILS) or 'today'} and the logs show a "
            "timeout in the second step. Keep the fix small.")


def reply(rng: random.Random, paragraphs: int = 4) -> str:
    body = []
    for _ in range(paragraphs):
        body.append(" ".join(f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}."
                             for _ in range(3)))
    return "\n\n".join(body)


# Recall text: real conversations draw on a large vocabulary with a few very common words and a
# long tail of rare ones (Zipf's law). A small fixed vocabulary would make every query match a
# large share of a recall store, which no real store sees; these turns mix English function words
# with pseudo-words drawn from a 20,000-word Zipfian vocabulary.
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "ri", "fu", "gi",
              "ha", "be", "cu", "ya", "we", "xo", "tan", "mor", "vel", "dri", "sko")
_FUNCTION_WORDS = ("the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "on", "with",
                   "why", "how", "does", "we", "can", "this", "when", "not")


@lru_cache(maxsize=1)
def _vocabulary(size: int = 20_000) -> tuple[tuple[str, ...], list[float]]:
    rng = random.Random(17)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    cumulative, total = [], 0.0
    for rank in range(1, size + 1):
        total += 1 / rank ** 1.07
        cumulative.append(total)
    return tuple(words), cumulative


def _words(rng: random.Random, count: int) -> list[str]:
    words, cumulative = _vocabulary()
    picked = rng.choices(words, cum_weights=cumulative, k=count)
    return [rng.choice(_FUNCTION_WORDS) if rng.random() < 0.35 else w for w in picked]


def recall_turn(rng: random.Random) -> tuple[str, str]:
    """A user message and a reply for a recall store."""
    return (" ".join(_words(rng, rng.randint(8, 20))).capitalize() + "?",
            " ".join(_words(rng, rng.randint(30, 80))).capitalize() + ".")


def recall_query(rng: random.Random) -> str:
    """A user message to recall for, from the same vocabulary."""
    return " ".join(_words(rng, rng.randint(6, 14))).capitalize() + "?"


_PROSE = [
    "Here is what I found after reading the module. ",
    "The loop keeps a counter where a < b holds until the last step, ",
    "so the check `if a <= b` never fails. ",
    "Use <b>bold</b> sparingly in the HTML template. ",
    "The generic type is List<int> in that file. ",
    "I ran the tests again and they pass now.\n",
    "\n## Next steps\n\n- rerun the migration\n- update the changelog\n",
    "```python\nfor item in items:\n    if item.size < limit:\n        keep(item)\n```\n",
]

ECHO = ("<memory-context>\n[System note: what follows is memory recalled from earlier sessions, "
        "NOT new input from the user.]\n\n- The user prefers short answers.\n"
        "- The build runs on GitHub Actions.\n</memory-context>\n")


def model_output(size: int, *, seed: int = 11, echo_every: int = 40_000) -> str:
    """About ``size`` characters of model output: prose, markdown, code, stray ``<`` signs, and an
    echoed ``<memory-context>`` block (at a line start, as a model echoes it) every
    ``echo_every`` characters on average."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    next_echo = rng.randint(echo_every // 2, echo_every * 3 // 2)
    while length < size:
        if length >= next_echo:
            piece = "\n" + ECHO
            next_echo = length + rng.randint(echo_every // 2, echo_every * 3 // 2)
        else:
            piece = rng.choice(_PROSE)
        parts.append(piece)
        length += len(piece)
    return "".join(parts)


def chunk_sizes(total: int, *, low: int = 16, high: int = 4096, seed: int = 5) -> list[int]:
    """Chunk lengths from ``low`` to ``high`` (log-uniform, as streams favour small chunks)
    adding up to ``total``."""
    rng = random.Random(seed)
    sizes: list[int] = []
    left = total
    while left > 0:
        size = min(left, int(low * (high / low) ** rng.random()))
        sizes.append(size)
        left -= size
    return sizes
