"""recall_locomo: how much of LoCoMo's evidence a recall provider brings back, against FTS5.

Each development conversation (``--conversations``, default 26, 30, 41, 42, 43) is fed turn by
turn through ``MemoryManager.finish_turn`` (two consecutive turns make one exchange; each
LoCoMo session is a new session), into a fresh store of the provider. Then each question of
categories 1–4 is asked through ``begin_turn``, and the recalled context is scored: the share of
the question's evidence turns whose whole text is in it (see :mod:`benchmarks.locomo`). The
provider's recall budget is its default, 1,500 characters.

The baseline is plain SQLite FTS5 in this process over the same turns, one row per turn, with
the porter tokenizer: the question's words OR-ed, ranked by FTS5's bm25, whole turns packed
best first into the same 1,500 characters. R@k rows compare the two rankings alone (the share of
evidence turns among the first k turns found, without any budget).

``--embedder NAME`` adds hybrid rows (sqlite): the provider's ``openai`` embedder pointed at a
local ``/v1/embeddings`` server (tests/fake_embeddings.py) that serves ``wordllama`` (a small
static embedding model whose weights ship inside its PyPI package: ``pip install wordllama``) or
``hashed`` (a hashed bag of words, no model at all).
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks import locomo
from benchmarks.bench_recall import Unavailable, _discovered, cleanup, open_manager
from benchmarks.harness import (
    NOT_INSTALLED,
    ROOT,
    UNAVAILABLE,
    Context,
    Row,
    Target,
    benchmark,
    percentile,
    unavailable,
)

BUDGET = 1500
RECALL_TARGET = 0.65
MULTI_HOP_TARGET = 0.35
KS = (1, 5, 10)
NAME = "recall_locomo"


class Fts5Baseline:
    """One conversation's turns in an in-memory FTS5 table (porter), searched with OR."""

    def __init__(self, conversation: locomo.Conversation) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, id UNINDEXED, "
                        "tokenize = 'porter')")
        self.db.executemany("INSERT INTO t (body, id) VALUES (?, ?)",
                            [(turn.said, turn.id) for s in conversation.sessions
                             for turn in s.turns])

    def ranked(self, question: str, limit: int = 50) -> list[tuple[str, str]]:
        words = re.findall(r"\w+", question.lower())
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        return self.db.execute("SELECT id, body FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?",
                               (match, limit)).fetchall()

    def recall(self, question: str, budget: int = BUDGET) -> tuple[str, list[str]]:
        """The packed context and the ranked turn ids."""
        ranked = self.ranked(question)
        lines, used = [], 0
        for _, body in ranked:
            cost = len(body) + (1 if lines else 0)
            if used + cost <= budget:
                lines.append(body)
                used += cost
        return "\n".join(lines), [turn_id for turn_id, _ in ranked]


def _ranked_ids(hits: list[dict[str, Any]], by_text: dict[str, list[str]]) -> list[str]:
    """Turn ids in the order the provider's search found them (an item holding two turns
    yields both)."""
    ids: list[str] = []
    for hit in hits:
        flat = " ".join(str(hit.get("text", "")).split())
        for said, turn_ids in by_text.items():
            if said in flat:
                ids.extend(t for t in turn_ids if t not in ids)
    return ids


def feed(manager: Any, conversation: locomo.Conversation) -> int:
    """Every turn of ``conversation`` through ``finish_turn``, a new session per LoCoMo
    session; returns how many turns went in. An exchange needs two sides: a session's odd last
    turn goes in with the reply ``(no reply)``."""
    fed = 0
    for number, session in enumerate(conversation.sessions):
        name = f"conv-{conversation.id}-s{session.number}"
        if number == 0:
            manager.start_session(name)
        else:
            manager.rotate(name, "new")
        turns = list(session.turns)
        for i in range(0, len(turns), 2):
            pair = turns[i:i + 2]
            reply = pair[1].said if len(pair) > 1 else "(no reply)"
            manager.finish_turn(pair[0].said, reply)
            fed += len(pair)
    return fed


def measure(ctx: Context, provider: str, conversations: list[locomo.Conversation],
            root: Path, *, label: str = "", settings: dict[str, Any] | None = None) -> list[Row]:
    memhost, baseline = locomo.Tally(), locomo.Tally()
    at_k = {k: (locomo.Tally(), locomo.Tally()) for k in KS}
    latencies, bare_latencies = [], []
    fed = 0
    ingest_seconds = 0.0
    longest = 0
    for conversation in conversations:
        home = root / f"{provider}{label}-{conversation.id}"
        home.mkdir()
        manager, used = open_manager(provider, home, **(settings or {}))
        try:
            started = time.perf_counter()
            fed += feed(manager, conversation)
            if not manager.flush(600):
                raise RuntimeError("the provider did not take the turns within 10 minutes")
            ingest_seconds += time.perf_counter() - started
            ctx.log(f"{provider}: conversation {conversation.id} fed")
            manager.rotate(f"conv-{conversation.id}-questions", "new")
            manager.flush(60)
            turns = conversation.turns
            by_text: dict[str, list[str]] = {}
            for turn in turns.values():
                by_text.setdefault(" ".join(turn.said.split()), []).append(turn.id)
            fts = Fts5Baseline(conversation)
            questions = conversation.questions[: ctx.size(40, None)]
            for question in questions:
                start = time.perf_counter()
                turn = manager.begin_turn(question.text)
                latencies.append(time.perf_counter() - start)
                longest = max(longest, _recalled_chars(turn.context))
                memhost.add(question.category,
                            locomo.found(question.evidence, turns, turn.context))
                start = time.perf_counter()
                context, bare_ranked = fts.recall(question.text)
                bare_latencies.append(time.perf_counter() - start)
                baseline.add(question.category, locomo.found(question.evidence, turns, context))
                answer = json.loads(manager.call_tool("recall_search", {
                    "query": question.text, "limit": max(KS)}))
                ranked = _ranked_ids([h for h in answer.get("results", [])
                                      if h.get("kind") != "session"], by_text)
                for k, (ours, theirs) in at_k.items():
                    ours.add(question.category, locomo.recall_at(question.evidence, ranked, k))
                    theirs.add(question.category,
                               locomo.recall_at(question.evidence, bare_ranked, k))
        finally:
            manager.shutdown(30)
            cleanup(provider, home, used)
    return _rows(provider + label, memhost, baseline, at_k, latencies, bare_latencies, fed,
                 ingest_seconds, longest, conversations)


def _recalled_chars(context: str) -> int:
    """The provider's part of a fenced block (the fence and its note are memhost's)."""
    lines = context.splitlines()
    return len("\n".join(lines[3:-1])) if len(lines) > 4 else 0


def _rows(provider: str, memhost: locomo.Tally, baseline: locomo.Tally,
          at_k: dict[int, tuple[locomo.Tally, locomo.Tally]], latencies: list[float],
          bare_latencies: list[float], fed: int, ingest_seconds: float, longest: int,
          conversations: list[locomo.Conversation]) -> list[Row]:
    names = ",".join(c.id for c in conversations)
    count = memhost.count

    def pair(case: str, ours: float, theirs: float, **extra: Any) -> Row:
        return Row(NAME, f"{provider} {case}", ours, theirs, ours / theirs if theirs else None,
                   "recall", count, extra=dict(extra))

    overall = pair("evidence@1500", memhost.overall(), baseline.overall(),
                   conversations=names, longest_recall_chars=longest)
    overall.note = (f"{count} questions of conversations {names}; "
                    + ", ".join(f"{label} {memhost.category(n):.3f}/{baseline.category(n):.3f}"
                                for n, label in locomo.CATEGORIES.items()))
    rows = [overall.judge(Target("memhost", ">=", RECALL_TARGET))]
    for number, label in locomo.CATEGORIES.items():
        row = pair(label, memhost.category(number), baseline.category(number),
                   questions=len(memhost.scores.get(number, ())))
        row.rounds = len(memhost.scores.get(number, ()))
        if number == 1:
            row.judge(Target("memhost", ">=", MULTI_HOP_TARGET))
        rows.append(row)
    for k, (ours, theirs) in at_k.items():
        rows.append(pair(f"R@{k}", ours.overall(), theirs.overall()))
    p50, p95 = statistics.median(latencies) * 1e3, percentile(latencies, 95) * 1e3
    b50 = statistics.median(bare_latencies) * 1e3
    rows.append(Row(NAME, f"{provider} prefetch p50", p50, b50, p50 / b50 if b50 else None, "ms",
                    len(latencies), note=f"p95 {p95:.2f} ms (begin_turn; baseline: the FTS5 "
                    "query and packing)", extra={"p95_ms": p95}))
    rows.append(Row(NAME, f"{provider} ingest", fed / ingest_seconds, None, None, "turns/s", 1,
                    note=f"{fed} turns through finish_turn, until flushed"))
    return rows


def _conversations(ctx: Context) -> list[locomo.Conversation] | str:
    path = ctx.options.get("locomo")
    if not path:
        return ("no data: pass --locomo PATH (data/locomo10.json of snap-research/locomo, or a "
                "folder of its per-conversation files)")
    wanted = ctx.options.get("conversations") or locomo.DEVELOPMENT
    if ctx.quick:
        wanted = wanted[:1]
    return locomo.load(Path(path), wanted)


@contextmanager
def embeddings_server(kind: str) -> Iterator[str]:
    """A local OpenAI-compatible embeddings server for ``kind``; yields its base URL."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_embeddings import FakeEmbeddings, hashed_bag_of_words

    if kind == "hashed":
        vectorize = hashed_bag_of_words
    elif kind == "wordllama":
        vectorize = _wordllama()
    else:
        raise ValueError(f"--embedder {kind!r}: use wordllama or hashed")
    with FakeEmbeddings(vectorize) as server:
        yield server.url


def _wordllama() -> Any:
    """wordllama's packaged 256-dimension model, loaded from the package's own files (its loader
    looks for the tokenizer in a folder the wheel names differently; it is pointed there, so
    nothing is downloaded)."""
    import tempfile

    import wordllama
    from wordllama import WordLlama

    package = Path(wordllama.__file__).parent
    cache = Path(tempfile.mkdtemp(prefix="wordllama-"))
    for folder in ("tokenizer", "tokenizers"):
        (cache / folder).mkdir()
        for shipped in (package / "tokenizers").glob("*.json"):
            (cache / folder / shipped.name).symlink_to(shipped)
    model = WordLlama.load(cache_dir=cache, disable_download=True)
    return lambda texts: model.embed(list(texts), norm=True).tolist()


@benchmark(NAME, "LoCoMo evidence recall in 1,500 chars (sqlite, postgres) against FTS5; "
                 "needs --locomo PATH")
def recall_locomo(ctx: Context) -> list[Row]:
    loaded = _conversations(ctx)
    if isinstance(loaded, str):
        return [unavailable(NAME, "skipped", loaded)]
    rows: list[Row] = []
    for provider in ("sqlite", "postgres"):
        with ctx.folder(f"{NAME}-{provider}") as root:
            if not _discovered(provider, root):
                rows.append(unavailable(NAME, NOT_INSTALLED, f"no provider {provider!r}",
                                        case=provider))
                continue
            try:
                rows += measure(ctx, provider, loaded, root)
            except Unavailable as exc:
                rows.append(unavailable(NAME, UNAVAILABLE, str(exc)[:300], case=provider))
    kind = ctx.options.get("embedder")
    if kind:
        with ctx.folder(f"{NAME}-hybrid") as root, embeddings_server(kind) as url:
            rows += measure(ctx, "sqlite", loaded, root, label=f" hybrid-{kind}", settings={
                "embedder": "openai", "embedder_model": kind, "embedder_url": url})
    return rows
