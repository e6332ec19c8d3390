"""``RecallProvider``: the hooks of a recall provider, written once for every database.

The bundled ``sqlite`` and ``postgres`` providers subclass it, and a third-party recall backend
may too. The hooks here turn their arguments into calls on ``self.store``; a subclass supplies
what differs from one database to the next:

- ``defaults`` (its ``CONFIG_SCHEMA.defaults()``), ``store_label`` (how the tools name the store)
  and ``not_open`` (the tool answer while there is no store);
- :meth:`open_store`, a store for a config (``memhost recall stats|vacuum`` uses it too), and
  :meth:`start`, which ``initialize`` calls with the home once ``config``, ``session_id``
  and ``writes`` are set;
- :meth:`store_for_writing`, the store a write goes to (open it, or raise
  :class:`memhost.RetryableError` so the write waits in the outbox);
- its own ``check_available`` and ``prompt_fragment`` hooks.

The store offers ``add``, ``add_many``, ``note``, ``forget``, ``search``, ``recent``,
``prefetch`` (a search that leaves out the newest turn of the given sessions), ``put_vectors``,
``stats``, ``vacuum`` and ``close``, as the bundled stores do; ``search`` and ``prefetch`` take a
:class:`memhost.recall.Ranking` and, for semantic recall, a :class:`memhost.recall.hybrid.Semantic`.
A subclass that overrides one of the hooks below marks the override with
``@memhost.hookimpl`` again: pluggy reads the mark from the method the object ends up with, so an
unmarked override is no hook at all.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from memhost import hookimpl
from memhost.recall import embedding, items, render, tools
from memhost.recall.hybrid import Semantic
from memhost.recall.ranking import Ranking
from memhost.recall.retrieval import Filters
from memhost.recall.terms import query_words, stem

#: A session transcript is stored up to this many characters (its most recent part).
SESSION_MAX_CHARS = 50_000
#: How many rotations back the current session's conversation is followed.
MAX_LINEAGE = 32

log = logging.getLogger("memhost.recall")


class RecallProvider(ABC):
    """Stores every turn, note, subtask and transcript; recalls the most relevant items."""

    defaults: dict[str, Any] = {}
    store_label = "the recall store"
    not_open = "The recall store is not open; try again in a moment."

    def __init__(self) -> None:
        self.store: Any = None
        self.config: dict[str, Any] = dict(self.defaults)
        self.home: Path | None = None
        self.session_id = ""
        self.writes = True
        # Session ids that continue one conversation (rotate for compress, branch, resume...):
        # the newest turn of any of them is still in the host's context.
        self._previous: dict[str, str] = {}
        self._lock = threading.Lock()
        self._embedder: Any = None
        self._embedder_for: tuple[Any, ...] | None = None

    # -- what a subclass supplies ---------------------------------------------------------------

    @abstractmethod
    def open_store(self, home: Path, config: dict[str, Any]) -> Any:
        """A store for ``config`` under ``home``."""
        ...

    @abstractmethod
    def start(self, home: Path) -> None:
        """Open (or keep) ``self.store`` for the settings ``initialize`` has just set."""
        ...

    @abstractmethod
    def store_for_writing(self) -> Any:
        """The store a write goes to: open it now, or raise ``RetryableError``."""
        ...

    def recall_options(self) -> dict[str, Any]:
        """Extra keyword arguments for the store's ``prefetch`` and ``search`` on a turn's
        behalf (``prefetch``, ``pre_compress``); none by default."""
        return {}

    # -- settings -------------------------------------------------------------------------------

    def settings(self, config: dict[str, Any] | None) -> dict[str, Any]:
        """``config`` over the defaults (``None`` values ignored)."""
        return {**self.defaults, **{k: v for k, v in (config or {}).items() if v is not None}}

    def _int(self, key: str, low: int, high: int) -> int:
        return tools.int_setting(self.config, key, int(self.defaults.get(key, low)), low=low,
                                 high=high)

    def _float(self, key: str, low: float, high: float) -> float:
        return tools.float_setting(self.config, key, float(self.defaults.get(key, low)),
                                   low=low, high=high)

    def ranking(self, **overrides: float) -> Ranking:
        """The relevance settings (``min_coverage``, ``min_relative``, ``min_score``,
        ``neighbour_weight``, ``session_share``); :class:`Ranking`'s defaults for those a
        provider lacks."""
        made = Ranking()
        bounds = {"min_coverage": 1.0, "min_relative": 1.0, "min_score": 50.0,
                  "neighbour_weight": 2.0, "session_share": 1.0}
        values = {key: self._float(key, 0.0, high) if key in self.defaults else getattr(made, key)
                  for key, high in bounds.items()}
        return Ranking(**{**values, **overrides})

    def _pack(self, hits: list[items.Hit], query: str, header: str = "") -> str | None:
        return render.pack(hits, max_chars=self._int("max_chars", 200, 20000),
                           max_items=self._int("max_items", 1, 50),
                           session_share=max(0.1, self.ranking().session_share),
                           terms={stem(w) for w in query_words(query)}, header=header)

    def store_exists(self, home: Path, config: dict[str, Any]) -> bool:
        """Whether there is a store to look at (``memhost recall list`` and friends do not
        create one); a shared database server always has one."""
        return True

    def maintenance(self, home: Path, config: dict[str, Any], action: str) -> dict[str, Any]:
        """``memhost recall stats|vacuum``."""
        store = self.open_store(home, config)
        try:
            return store.vacuum() if action == "vacuum" else store.stats()
        finally:
            store.close()

    # -- lifecycle ------------------------------------------------------------------------------

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any],
                   context: str) -> None:
        self.config = self.settings(config)
        self.session_id = session_id
        self.writes = context == "primary"
        self.home = Path(home)
        self.start(self.home)

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        with self._lock:
            if reason != "new" and old_session_id and old_session_id != new_session_id:
                self._previous[new_session_id] = old_session_id
            self.session_id = new_session_id

    @hookimpl
    def shutdown(self) -> None:
        with self._lock:
            store, self.store = self.store, None
            self.home = None
            embedder, self._embedder, self._embedder_for = self._embedder, None, None
        if store is not None:
            store.close()
        if embedder is not None:
            embedder.close()

    # -- semantic recall ------------------------------------------------------------------------

    def embedder(self) -> Any:
        """The configured embedder (made on first use, again when its settings change), or
        ``None``: ``embedder = "none"``, or one that cannot be made (said once in the log)."""
        wanted = tuple(self.config.get(k) for k in ("embedder", "embedder_model",
                                                      "embedder_url", "embedder_key"))
        with self._lock:
            if self._embedder_for != wanted:
                if self._embedder is not None:
                    self._embedder.close()
                self._embedder, self._embedder_for = None, wanted
                try:
                    self._embedder = embedding.from_settings(self.config)
                except embedding.EmbedderError as exc:
                    log.warning("semantic recall is off: %s", exc)
            return self._embedder

    def semantic(self, query: str) -> Semantic | None:
        """The query's vector for a hybrid search, or ``None`` (recall stays lexical when the
        embedder is off or fails)."""
        made = self.embedder()
        if made is None:
            return None
        try:
            vector = made.embed([query])[0]
        except embedding.EmbedderError as exc:
            log.warning("semantic recall skipped for this turn: %s", exc)
            return None
        return Semantic(vector, made.name, self._float("semantic_weight", 0.0, 1.0)
                        if "semantic_weight" in self.defaults else 0.5)

    def embed_items(self, store: Any, ids: list[int], texts: list[str]) -> None:
        """Store the vectors of newly stored items; an item the embedder fails on keeps only
        its words (it is still found lexically)."""
        made = self.embedder()
        if made is None or not ids or len(ids) != len(texts):
            return
        try:
            vectors = made.embed(texts)
        except embedding.EmbedderError as exc:
            log.warning("%d new item(s) stored without vectors: %s", len(ids), exc)
            return
        store.put_vectors(made.name, list(zip(ids, vectors, strict=True)))

    # -- recall ---------------------------------------------------------------------------------

    def _lineage(self, session_id: str) -> list[str]:
        chain, seen = [], set()
        current: str | None = session_id
        while current and current not in seen and len(chain) < MAX_LINEAGE:
            chain.append(current)
            seen.add(current)
            current = self._previous.get(current)
        return chain

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        store = self.store
        if store is None or not query.strip():
            return None
        hits = store.prefetch(query, sessions=self._lineage(session_id or self.session_id),
                              filters=Filters(items.PREFETCH_KINDS),
                              limit=self._int("max_items", 1, 50), options=self.ranking(),
                              semantic=self.semantic(query), **self.recall_options())
        return self._pack(hits, query)

    @hookimpl
    def pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        store = self.store
        text = items.user_text(messages)
        if store is None or not text.strip():
            return None
        # A whole conversation is a long query: the coverage floor would ask too much of it.
        hits = store.search(text, filters=Filters((items.FACT,)),
                            limit=self._int("max_items", 1, 50),
                            options=self.ranking(min_coverage=0.0), **self.recall_options())
        return self._pack(hits, text, header="Stored facts relevant to this conversation:")

    # -- writes ---------------------------------------------------------------------------------

    def _writable(self) -> Any:
        """The store to write to, or ``None`` when this session does not write."""
        return self.store_for_writing() if self.writes else None

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        store = self._writable()
        if store is None or not self.config.get("store_turns", True):
            return
        if not user_content.strip() or not assistant_content.strip():
            return
        key = items.turn_key(session_id, user_content, assistant_content, messages)
        made = items.turn_items(key, user_content, assistant_content, session_id)
        new: list[int] = []
        store.add_many(made, new_ids=new)
        self.embed_items(store, new, [item["body"] for item in made])

    @hookimpl
    def session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        store = self._writable()
        if store is None or not self.config.get("store_sessions", True):
            return
        text = items.transcript(messages, max_chars=SESSION_MAX_CHARS)
        if text:
            store.add(key=items.item_key("session", session_id, text), kind=items.SESSION,
                      body=text, session_id=session_id)

    @hookimpl
    def on_subtask(self, task: str, result: str, child_session_id: str, session_id: str) -> None:
        store = self._writable()
        if store is None or not (task.strip() or result.strip()):
            return
        body = items.subtask_body(task, result)
        added = store.add(key=items.item_key("subtask", session_id, child_session_id, task,
                                             result),
                          kind=items.SUBTASK, body=body, session_id=session_id)
        if added is not None:
            self.embed_items(store, [added], [items.display(items.SUBTASK, body)])

    @hookimpl
    def on_builtin_write(self, action: str, target: str, content: str,
                         previous_content: str | None, session_id: str, origin: str) -> None:
        store = self._writable()
        if store is None:
            return
        added = store.note(action=action, target=target, content=content,
                           previous=previous_content, session_id=session_id, origin=origin)
        if added is not None:
            self.embed_items(store, [added], [content])

    # -- tools ----------------------------------------------------------------------------------

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        return tools.tool_schemas(self.store_label)

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        store = self.store
        if store is None:
            return tools.error(self.not_open)
        try:
            if tool_name == tools.SEARCH_TOOL:
                args = tools.search_args(arguments)
                if query_words(args.query):
                    hits = store.search(args.query, limit=args.limit, filters=Filters(
                        since=args.since, until=args.until), options=self.ranking(),
                        semantic=self.semantic(args.query))
                else:
                    hits = store.recent(since=args.since, until=args.until, limit=args.limit)
                found = hits[: args.limit]
                return tools.answer(count=len(found), results=[h.as_dict() for h in found])
            if tool_name == tools.FORGET_TOOL:
                item_id = tools.forget_id(arguments)
                if not self.writes:
                    return tools.error("This session cannot change the recall store.")
                forgotten = store.forget(item_id)
                if forgotten is None:
                    return tools.error(f"No stored item has id {item_id} (or it was forgotten "
                                        "already); recall_search shows the ids.")
                return tools.answer(forgotten=forgotten)
        except tools.ToolArgumentError as exc:
            return tools.error(str(exc))
        return tools.error(f"Unknown tool {tool_name!r}.")


__all__ = ["RecallProvider", "SESSION_MAX_CHARS"]
