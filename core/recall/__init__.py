"""Recall: what the bundled recall providers (``sqlite``, ``postgres``) share, independent of any
database, and the hooks written once for all of them.

- :mod:`~memhost.recall.items`: kinds and states of stored items, keys, labels (a turn is two
  items, the user's message and the reply).
- :mod:`~memhost.recall.terms`: text into search terms (folded, stemmed), the same for every
  database.
- :mod:`~memhost.recall.ranking`: BM25 weighed by coverage, floors relative to the query, the
  neighbours' lift and dates; :mod:`~memhost.recall.when` reads time in a query.
- :mod:`~memhost.recall.retrieval`: :func:`search` over a database's :class:`Backend`.
- :mod:`~memhost.recall.render`: a turn's recall packed into its character budget.
- :mod:`~memhost.recall.tools`: the ``recall_search`` / ``recall_forget`` tools.
- :mod:`~memhost.recall.exchange`: items to and from files (``memhost recall export|import``).
- :mod:`~memhost.recall.provider`: :class:`RecallProvider`, the hooks. A third-party recall
  backend subclasses ``from memhost.recall import RecallProvider``.

The ``sqlite`` and ``postgres`` folders build on these and never import each other. docs/recall.md
explains the ranking and its settings.
"""

from __future__ import annotations

from memhost.recall import exchange
from memhost.recall.items import (
    ACTIVE,
    ASSISTANT,
    FACT,
    FORGOTTEN,
    KINDS,
    PART_SEPARATOR,
    PREFETCH_KINDS,
    RETIRED,
    SESSION,
    STATES,
    SUBTASK,
    SUPERSEDED,
    TURN,
    USER,
    Hit,
    date_text,
    display,
    item_key,
    newest_exchange,
    one_line,
    subtask_body,
    transcript,
    turn_items,
    turn_key,
    user_text,
)
from memhost.recall.ranking import QueryPlan, Ranking, idf, plan_query
from memhost.recall.render import DEFAULT_MAX_CHARS, DEFAULT_MAX_ITEMS, pack, snippet
from memhost.recall.retrieval import Backend, Filters, rank, search
from memhost.recall.terms import index_text, query_words
from memhost.recall.tools import (
    FORGET_TOOL,
    SEARCH_TOOL,
    SearchArgs,
    ToolArgumentError,
    answer,
    error,
    float_setting,
    forget_id,
    int_setting,
    search_args,
    tool_schemas,
)
from memhost.recall.provider import RecallProvider  # noqa: E402  (uses the names above)

__all__ = [
    "ACTIVE", "ASSISTANT", "Backend", "exchange", "DEFAULT_MAX_CHARS", "DEFAULT_MAX_ITEMS", "FACT",
    "FORGET_TOOL", "FORGOTTEN", "Filters", "Hit", "KINDS", "PART_SEPARATOR", "PREFETCH_KINDS",
    "QueryPlan", "RETIRED", "Ranking", "RecallProvider", "SEARCH_TOOL", "SESSION", "STATES",
    "SUBTASK", "SUPERSEDED", "SearchArgs", "TURN", "ToolArgumentError", "USER", "answer",
    "date_text", "display", "error", "float_setting", "forget_id", "idf", "index_text",
    "int_setting", "item_key", "newest_exchange", "one_line", "pack", "plan_query", "query_words",
    "rank", "search",
    "search_args", "snippet", "subtask_body", "tool_schemas", "transcript", "turn_items",
    "turn_key", "user_text",
]
