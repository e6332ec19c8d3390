"""Recall: the database-independent part of the bundled recall providers.

:mod:`~memhost.recall.ranking` turns a message into search words, scores and ranks stored items,
formats the hits and holds the ``recall_search`` / ``recall_forget`` tool schemas and item keys;
:mod:`~memhost.recall.provider` holds :class:`RecallProvider`, the hooks written once for every
database. The ``sqlite`` and ``postgres`` folders build on both and never import each other; a
third-party recall backend subclasses ``from memhost.recall import RecallProvider``.
"""

from __future__ import annotations

from memhost.recall.provider import RecallProvider

__all__ = ["RecallProvider"]
