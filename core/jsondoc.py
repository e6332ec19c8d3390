"""JSON that comes from outside memhost, read so that nesting too deep is bad JSON like any other.

Python's parser recurses once per level and raises ``RecursionError``, which is not a
``ValueError``, past about a thousand levels: ``"[" * 100_000`` as a model's tool arguments
escaped the code that answers bad arguments and broke the host's turn, and the same text as a
settings request, an imported file or a model server's answer ended in an internal error. Every
reader of such JSON goes through :func:`loads`, which raises a ``ValueError`` for it instead; so
do the readers of memhost's own JSON files (the archive, metadata, verdicts, outbox journals,
dead letters, health records, provider settings), where a damaged line is skipped or reported
like any other that is not JSON.
"""

from __future__ import annotations

import json
from typing import Any

#: What :func:`loads` says of a document nested too deeply to read.
TOO_DEEP = "it nests too deeply"


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``; ``ValueError`` for what is not JSON, nesting too deep included."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def reason(exc: ValueError) -> str:
    """Why :func:`loads` refused a document, in a few words: the parser's message without the
    position it appends (``JSONDecodeError.msg``), else the error's text."""
    return exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
