"""What the bundled recall providers (``sqlite``, ``postgres``) share, independent of any database.

- **Query cleanup**: :func:`query_words` turns a user message into search words (lowercased, stop
  words and conversational filler dropped, repeats removed).
- **Relevance**: each backend stems the words and looks up, per stem, how many live items contain
  it (``df``) and how many live items there are (``n``). :func:`plan_query` weighs each stem by
  its inverse document frequency and picks the informative ones to search for; a candidate's
  score is the summed weight of the query stems it contains (:meth:`QueryPlan.score`). An item is
  recalled only when its score reaches ``min_score`` *and* covers at least ``min_coverage`` of the
  query's total weight (:meth:`QueryPlan.relevant`): a long message that shares one word with a
  stored item is not a reason to recall it. Ties are broken by recency (:func:`rank`).
- **Formatting**: one line per item, ``- [2024-05-01 · fact #12] text``, best first, within a
  character budget (:func:`format_hits`).
- **Tools**: the ``recall_search`` / ``recall_forget`` schemas, argument checks and JSON answers.
- **Keys**: :func:`item_key` derives the unique key that makes a replayed write a no-op.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from memhost.turns import flatten_content

#: Kinds of stored items.
TURN, FACT, SESSION, SUBTASK = "turn", "fact", "session", "subtask"
KINDS = (TURN, FACT, SESSION, SUBTASK)
#: What ``prefetch`` recalls by default: whole-session transcripts repeat the turns, so they are
#: left to explicit ``recall_search`` look-ups.
PREFETCH_KINDS = (FACT, TURN, SUBTASK)
#: Item states. Only ``active`` items are searchable; the others are kept, and marked.
ACTIVE, SUPERSEDED, RETIRED, FORGOTTEN = "active", "superseded", "retired", "forgotten"

#: Below this many live items document frequencies say little, so weights are computed as if the
#: store held this many (a word in one of three items is not "common").
MIN_CORPUS = 100
#: Stems in more than this share of the live items are not searched for on their own: they
#: match too much to mean anything, and their long posting lists make the search slow.
COMMON_SHARE = 0.5
#: At most this many of a query's stems (the rarest) are searched for.
MAX_SEARCH_STEMS = 8
MAX_QUERY_WORDS = 32
MAX_WORD_LEN = 40

DEFAULT_MAX_CHARS = 1500
DEFAULT_MAX_ITEMS = 8
DEFAULT_MIN_SCORE = 2.0
DEFAULT_MIN_COVERAGE = 0.15

# English function words plus the filler of a chat message ("can you remember what I said...").
STOP_WORDS = frozenset("""
a about above after again against all almost also am an and any anyone anything are aren as at
be because been before being below between both but by can cannot could couldn did didn do does
doesn doing don done down during each either else ever every few for from further had hadn has
hasn have haven having he her here hers herself him himself his how however i if in into is isn
it its itself just let lets me might more most must mustn my myself no nor not now of off on once
one only or other ought our ours ourselves out over own quite rather same shan she should shouldn
so some such than that the their theirs them themselves then there these they this those though
through to too under until up upon us very was wasn we were weren what when where whether which
while who whom whose why will with within without won would wouldn yet you your yours yourself
yourselves
ok okay yes yeah yep nope hi hello hey thanks thank please pls sure well oh ah hmm like just really
actually basically maybe perhaps probably anyway also still even much many lot lots bit thing
things stuff something somebody someone anything everything nothing kind sort way get gets got
getting go goes going gone make makes made making know knows knew think thinks thought want wants
wanted need needs needed tell tells told say says said ask asks asked mean means meant let remember
remembers remembered recall recalled again back here there today now right new good great nice
decide decided discuss discussed talk talked mention mentioned
could would should shall may might will can did does do ll ve re
""".split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def query_words(text: str, *, limit: int = MAX_QUERY_WORDS) -> list[str]:
    """The search words of ``text``: lowercased, in order, without stop words, filler or repeats.

    A possessive or contraction keeps its stem (``user's`` → ``user``); one-letter words are
    dropped, digits are kept (``v2``, ``2024``).
    """
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        word = re.split(r"['’]", match.group())[0]
        if len(word) < 2 and not word.isdigit():
            continue
        if word in STOP_WORDS or len(word) > MAX_WORD_LEN or word in seen:
            continue
        seen[word] = None
        if len(seen) >= limit:
            break
    return list(seen)


def idf(df: int, n: int) -> float:
    """The weight of a stem found in ``df`` of ``n`` live items (BM25's smoothed IDF, never
    negative; a stem no item has weighs the most)."""
    n_eff = max(n, MIN_CORPUS)
    df = max(0, min(df, n_eff))
    return math.log(1.0 + (n_eff - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class QueryPlan:
    """A query, ready to search: which words to look for and what each stem weighs."""

    #: stem -> weight, for every stem of the query (those no item has included).
    weights: dict[str, float]
    #: The query words to search for (those of the informative stems), rarest first.
    search_words: tuple[str, ...]
    #: The stems those words stand for.
    search_stems: tuple[str, ...]

    @property
    def total(self) -> float:
        return sum(self.weights.values())

    @property
    def empty(self) -> bool:
        return not self.search_words

    def score(self, matched: Iterable[str]) -> float:
        """The summed weight of the query stems an item contains."""
        return sum(self.weights.get(stem, 0.0) for stem in set(matched))

    def relevant(self, score: float, *, min_score: float, min_coverage: float) -> bool:
        return score > 0 and score >= min_score and score >= min_coverage * self.total


def plan_query(stems: dict[str, Sequence[str]], df: dict[str, int], n: int,
               *, max_stems: int = MAX_SEARCH_STEMS) -> QueryPlan:
    """Weigh the stems of a query and choose what to search for.

    ``stems`` maps each query word to the stems the backend's tokenizer made of it, ``df`` each
    stem to the number of live items that contain it, ``n`` is the number of live items.
    Stems no item contains are not searched for (they still weigh in the query's total); nor are
    those in more than :data:`COMMON_SHARE` of the items once the store holds
    :data:`MIN_CORPUS` of them.
    """
    weights: dict[str, float] = {}
    words_for: dict[str, list[str]] = {}
    for word, made in stems.items():
        for stem in made:
            weights.setdefault(stem, idf(df.get(stem, 0), n))
            words_for.setdefault(stem, []).append(word)
    usable = [s for s in weights if df.get(s, 0) > 0
              and not (n >= MIN_CORPUS and df.get(s, 0) > COMMON_SHARE * n)]
    usable.sort(key=lambda s: (-weights[s], s))
    chosen = usable[:max_stems]
    words: dict[str, None] = {}
    for stem in chosen:
        for word in words_for[stem]:
            words[word] = None
    return QueryPlan(weights, tuple(words), tuple(chosen))


@dataclass
class Hit:
    """One stored item found by a search."""

    id: int
    kind: str
    body: str
    created_at: float  # Unix time
    session_id: str = ""
    matched: frozenset[str] = frozenset()
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "date": date_text(self.created_at),
                "time": datetime.fromtimestamp(self.created_at, UTC).isoformat(timespec="seconds"),
                "session_id": self.session_id, "score": round(self.score, 3),
                "text": display(self.kind, self.body), **self.extra}


def rank(hits: Iterable[Hit]) -> list[Hit]:
    """Best first: by score, ties (to a thousandth) broken by recency, then by id."""
    return sorted(hits, key=lambda h: (-round(h.score, 3), -h.created_at, -h.id))


def select(plan: QueryPlan, hits: Iterable[Hit], *, min_score: float,
           min_coverage: float) -> list[Hit]:
    """Score ``hits`` against ``plan``, keep the relevant ones, best first."""
    kept = []
    for hit in hits:
        hit.score = plan.score(hit.matched)
        if plan.relevant(hit.score, min_score=min_score, min_coverage=min_coverage):
            kept.append(hit)
    return rank(kept)


# -- searching ----------------------------------------------------------------------------------

#: Newest items per searched stem that are considered (a rarer stem's items are all considered).
WINDOW = 1000
#: Items whose exact score is computed, per recalled item wanted.
VERIFY_FACTOR = 3


@dataclass(frozen=True)
class Filters:
    """Which items a search may return (besides being active)."""

    kinds: tuple[str, ...] = KINDS
    exclude: tuple[int, ...] = ()
    since: float | None = None  # Unix time, inclusive
    until: float | None = None  # Unix time, exclusive

    @property
    def by_time(self) -> bool:
        return self.since is not None or self.until is not None


class Backend(Protocol):
    """What a database offers :func:`search`: its tokenizer's stems with their document
    frequencies, cheap candidates, and an exact look at a few items."""

    def analyse(self, words: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, int], int]:
        """``(word -> stems, stem -> live items containing it, live items)``."""

    def candidates(self, plan: QueryPlan, words_of: dict[str, list[str]], *, window: int,
                   every_limit: int, filters: Filters) -> dict[int, set[str]]:
        """Active items worth scoring, each with the searched stems it is known to contain
        (an underestimate is fine): at least the newest ``window`` items containing each
        searched stem (``words_of`` maps a stem to its query words) and the newest
        ``every_limit`` items containing all of them (unless the others cover those),
        honouring the time filters."""

    def fetch(self, ids: Sequence[int], stems: Sequence[str], filters: Filters) -> list[Hit]:
        """The active items among ``ids`` that pass ``filters``, each with the ``stems`` it
        contains in ``matched``."""


def search(backend: Backend, query: str, *, filters: Filters = Filters(), limit: int = 10,
           min_score: float = 0.0, min_coverage: float = 0.0,
           window: int = WINDOW) -> list[Hit]:
    """The items most relevant to ``query``, best first, at most ``limit``.

    Ranking every item that shares a word with the query does not scale (a common word is in
    tens of thousands of them), so candidates come from cheap newest-first walks of the index:
    for each searched stem its newest ``window`` items (all of a rare stem's items), plus the
    newest items holding every searched stem. The best of those by estimated score are then
    scored exactly, filtered by the relevance floor and ranked (score, then recency).
    """
    words = query_words(query)
    if not words:
        return []
    stems, df, n = backend.analyse(words)
    plan = plan_query(stems, df, n)
    if plan.empty:
        return []
    words_of: dict[str, list[str]] = {}
    for word, made in stems.items():
        for stem in made:
            if stem in plan.search_stems:
                words_of.setdefault(stem, []).append(word)
    found = backend.candidates(plan, words_of, window=window, every_limit=max(limit, 1) * 2,
                               filters=filters)
    for item in filters.exclude:
        found.pop(item, None)
    # Estimates can only fall short (a stem outside its window is not counted), so nothing is
    # dropped on them: they only choose which items get an exact score.
    wanted = heapq.nlargest(max(limit, 1) * VERIFY_FACTOR, found,
                            key=lambda i: (plan.score(found[i]), i))
    if not wanted:
        return []
    scored = [s for s in plan.weights if df.get(s, 0) > 0]
    hits = backend.fetch(wanted, scored, filters)
    return select(plan, hits, min_score=min_score, min_coverage=min_coverage)[:limit]


# -- formatting ---------------------------------------------------------------------------------


def date_text(timestamp: float) -> str:
    """The local date of a Unix time, ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", time.localtime(timestamp))


def one_line(text: str) -> str:
    """``text`` on one line: runs of whitespace become one space, line breaks ``⏎``."""
    lines = [" ".join(part.split()) for part in text.splitlines()]
    return " ⏎ ".join(line for line in lines if line)


def item_line(hit: Hit, width: int | None = None) -> str:
    """``- [2024-05-01 · fact #12] text``, cut to ``width`` characters with an ellipsis."""
    text = one_line(display(hit.kind, hit.body))
    line = f"- [{date_text(hit.created_at)} · {hit.kind} #{hit.id}] {text}"
    if width is not None and len(line) > width:
        line = line[: max(0, width - 1)].rstrip() + "…"
    return line


#: An item cut shorter than this is left out rather than shown as a stub.
MIN_LINE = 60


def format_hits(hits: Sequence[Hit], *, max_chars: int = DEFAULT_MAX_CHARS,
                max_items: int = DEFAULT_MAX_ITEMS, header: str = "") -> str | None:
    """The lines of ``hits`` in order, as many as fit in ``max_chars`` (the last one cut to fit
    when there is room for a useful part of it); ``None`` when nothing fits."""
    lines: list[str] = []
    used = len(header) + 1 if header else 0
    for hit in hits[:max_items]:
        room = max_chars - used - (1 if lines else 0)
        if room < MIN_LINE:
            break
        line = item_line(hit, room)
        lines.append(line)
        used += len(line) + (1 if len(lines) > 1 else 0)
    if not lines:
        return None
    return "\n".join([header, *lines] if header else lines)


# -- what gets stored ---------------------------------------------------------------------------


#: Between the parts of an item (a turn's user and assistant text, a subtask's task and result,
#: a transcript's messages). Labels such as "User:" are added only when an item is shown, so the
#: full-text index never holds them: otherwise every turn would match the word "user".
PART_SEPARATOR = "\n\x1e\n"
_LABELS = {TURN: ("User", "Assistant"), SUBTASK: ("Task", "Result")}


def turn_body(user: str, assistant: str) -> str:
    return f"{user.strip()}{PART_SEPARATOR}{assistant.strip()}"


def subtask_body(task: str, result: str) -> str:
    return f"{task.strip()}{PART_SEPARATOR}{result.strip()}"


def display(kind: str, body: str) -> str:
    """An item's text as shown: a turn as ``User: ...`` / ``Assistant: ...`` lines."""
    parts = body.split(PART_SEPARATOR)
    labels = _LABELS.get(kind)
    if labels and len(parts) == 2:
        return "\n".join(f"{label}: {part}" for label, part in zip(labels, parts, strict=True))
    return "\n".join(parts)


def transcript(messages: Iterable[Any], *, max_chars: int) -> str:
    """The user and assistant text of ``messages`` (tool calls and results left out), the most
    recent part when it is longer than ``max_chars``."""
    parts = []
    for message in messages or ():
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        text = flatten_content(message.get("content")).strip()
        if text:
            parts.append(text)
    text = PART_SEPARATOR.join(parts)
    return text if len(text) <= max_chars else "…" + text[-(max_chars - 1):]


def user_text(messages: Iterable[Any], *, max_chars: int = 4000) -> str:
    """The user messages of a transcript, most recent last, within ``max_chars``."""
    parts = [flatten_content(m.get("content")) for m in messages or ()
             if isinstance(m, dict) and m.get("role") == "user"]
    text = "\n".join(p for p in parts if p.strip())
    return text[-max_chars:]


def item_key(*parts: Any) -> str:
    """A stable key for a write, from what the write carries: a replay of the same write (the
    outbox retrying it, or a restart replaying it) yields the same key and so stores nothing."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str("" if part is None else part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()


def turn_key(session_id: str, user: str, assistant: str, messages: Sequence[Any] | None) -> str:
    """The key of a synced turn: the session, the turn's text, and where it sits in the
    transcript (its length), so a turn said twice in one session is stored twice, and a replay
    of one turn once. A host that passes no transcript gets one item per distinct exchange."""
    return item_key("turn", session_id, len(messages or ()), user, assistant)


# -- tools --------------------------------------------------------------------------------------

SEARCH_TOOL = "recall_search"
FORGET_TOOL = "recall_forget"
MAX_SEARCH_LIMIT = 50


def tool_schemas(store_label: str) -> list[dict[str, Any]]:
    return [
        {"name": SEARCH_TOOL,
         "description": (f"Search {store_label}: past conversation turns, saved notes (facts), "
                         "subtask results and session transcripts. Use it to look up what was "
                         "said or decided before. Results are best first, each with its id, "
                         "date and kind."),
         "parameters": {"type": "object", "properties": {
             "query": {"type": "string", "description": "what to look for, in plain words"},
             "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                       "description": "at most this many results (default 10)"},
             "since": {"type": "string", "description": "only items from this date on "
                                                        "(YYYY-MM-DD or an ISO date-time)"},
             "until": {"type": "string", "description": "only items before the end of this "
                                                        "date (YYYY-MM-DD or an ISO date-time)"},
         }, "required": ["query"]}},
        {"name": FORGET_TOOL,
         "description": ("Forget one stored item for good, by the id recall_search or the "
                         "recalled context showed (#12 → 12). Its text is erased."),
         "parameters": {"type": "object", "properties": {
             "id": {"type": "integer", "description": "the item's id"},
         }, "required": ["id"]}},
    ]


class ToolArgumentError(ValueError):
    """A tool was called with arguments it cannot use; the message says what to send."""


@dataclass(frozen=True)
class SearchArgs:
    query: str
    limit: int
    since: float | None
    until: float | None


def _moment(value: Any, name: str, *, end: bool) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"{name} must be a date like 2024-05-01 or an ISO date-time")
    text = value.strip()
    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d")  # noqa: DTZ007 - a local calendar day
            moment = day + timedelta(days=1) if end else day
            return moment.timestamp()
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolArgumentError(f"{name} = {value!r} is not a date like 2024-05-01 or an ISO "
                                "date-time like 2024-05-01T14:30") from None
    return parsed.timestamp()


def search_args(arguments: dict[str, Any]) -> SearchArgs:
    query = arguments.get("query", "")
    if not isinstance(query, str):
        raise ToolArgumentError("query must be a string")
    limit = arguments.get("limit", 10)
    if isinstance(limit, str) and limit.strip().isdigit():
        limit = int(limit)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ToolArgumentError(f"limit must be a whole number from 1 to {MAX_SEARCH_LIMIT}")
    since = _moment(arguments.get("since"), "since", end=False)
    until = _moment(arguments.get("until"), "until", end=True)
    if since is not None and until is not None and since >= until:
        raise ToolArgumentError("since must be before until")
    return SearchArgs(query, min(limit, MAX_SEARCH_LIMIT), since, until)


def forget_id(arguments: dict[str, Any]) -> int:
    value = arguments.get("id")
    if isinstance(value, str):
        value = value.strip().lstrip("#")
        value = int(value) if value.isdigit() else value
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolArgumentError("id must be the whole-number id of a stored item (as shown by "
                                "recall_search, e.g. 12)")
    return value


def answer(**data: Any) -> str:
    return json.dumps({"success": True, **data}, ensure_ascii=False)


def error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def int_setting(config: dict[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    """A whole-number setting from a provider's config, clamped to ``[low, high]``."""
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return max(low, min(high, int(value)))


def float_setting(config: dict[str, Any], key: str, default: float, *, low: float,
                  high: float) -> float:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return max(low, min(high, float(value)))


__all__ = [
    "ACTIVE", "Backend", "FACT", "FORGOTTEN", "Filters", "Hit", "KINDS", "PREFETCH_KINDS", "QueryPlan", "RETIRED",
    "SESSION", "SUBTASK", "SUPERSEDED", "SearchArgs", "TURN", "ToolArgumentError", "answer",
    "display", "error", "forget_id", "format_hits", "idf", "item_key", "item_line", "plan_query",
    "query_words", "rank", "search", "search_args", "select", "subtask_body", "tool_schemas", "transcript",
    "turn_body",
    "turn_key", "user_text",
]
