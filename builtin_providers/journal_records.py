"""One journal record as bytes, and back: ``<crc32 as 8 hex digits> <json>\\n``.

:mod:`memhost.builtin_providers.journal` appends and reads them; this module only encodes and
decodes. A record that carries the memory file's text holds it whole, so reading one costs about
what its text does: a process catching up on records other writers appended (every write under
contention, a session start in another process) needs the metadata and archive records of each,
but the text of the newest only. :func:`decode` therefore leaves a record's text as the JSON it
was written as and decodes it when it is first asked for (:class:`Record`).
"""

from __future__ import annotations

import json
import operator
import zlib
from typing import Any


class Record(dict):  # type: ignore[type-arg]
    """A decoded record whose ``"text"``, when it has one, is decoded on first use."""

    __slots__ = ("_text",)

    def __init__(self, fields: dict[str, Any], text: bytes | None = None) -> None:
        super().__init__(fields)
        self._text = text  # the text's JSON string literal, quotes included

    def __missing__(self, key: str) -> Any:
        if key != "text" or self._text is None:
            raise KeyError(key)
        text = self["text"] = json.loads(self._text)
        self._text = None
        return text


def has_text(record: dict[str, Any]) -> bool:
    """Whether ``record`` carries the memory file's text (decoded or not yet)."""
    return isinstance(record.get("text"), str) or getattr(record, "_text", None) is not None


#: What comes just before a record's text, ``{"g":N,"t":T,"text":"``, and just after it, its
#: ``"before"`` (:meth:`StoreFile.commit` writes them in this order). Inside a JSON string every
#: ``"`` is escaped, so neither can occur within the text: the first ``,"text":"`` is the
#: record's own key, and the first ``","before":`` after it ends the text. Cutting at a key of a
#: nested object instead leaves brackets unclosed or no ``"before"`` at the top: then the record
#: is decoded whole.
_TEXT_KEY = b',"text":"'
_AFTER_TEXT = b'","before":'


def intact(data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` (a line without its newline) is a record as written: its
    checksum holds. Positions, so a reader checking every line of a journal copies none."""
    end = len(data) if end is None else end
    try:
        return end - start >= 10 and data[start + 8] == 0x20 and int(
            data[start:start + 8], 16) == zlib.crc32(memoryview(data)[start + 9:end])
    except ValueError:
        return False


_GENERATION_KEY = b'{"g":'


def generation_of(data: bytes, start: int = 0) -> int | None:
    """The generation the line at ``start`` names, read from its first bytes as :func:`to_line`
    writes them (``{"g":N,`` or ``{"g":N}``), without its checksum or any decoding; -1 when no
    record can start there (no space after the checksum: :func:`intact` would refuse it), None
    for a line shaped otherwise. A reader that meets an older generation's record, or a piece
    of one, left behind the current one's (a checkpoint starts the journal over in place)
    stops there at once."""
    if len(data) < start + 10 or data[start + 8] != 0x20:
        return -1
    at = start + 9 + len(_GENERATION_KEY)
    if not data.startswith(_GENERATION_KEY, start + 9):
        return None
    end = at
    while end < len(data) and 0x30 <= data[end] <= 0x39:
        end += 1
    if end == at or end >= len(data) or data[end] not in b",}":
        return None
    return int(data[at:end])


def decode(line: bytes) -> Record | None:
    """The record on ``line`` (without its newline); None when torn or not a record."""
    if not intact(line):
        return None
    body = line[9:]
    at = body.find(_TEXT_KEY)
    end = body.find(_AFTER_TEXT, at + len(_TEXT_KEY)) if at > 0 else -1
    if end > 0:
        try:  # the record without its text: the two cuts are at its top level, or it is not JSON
            fields = json.loads(body[:at] + body[end + 1:])
        except ValueError:
            fields = None
        if isinstance(fields, dict) and "before" in fields and "text" not in fields:
            return Record(fields, body[at + len(_TEXT_KEY) - 1:end + 1])
    try:
        record = json.loads(body)  # any other shape: decoded whole
    except ValueError:
        return None
    return Record(record) if isinstance(record, dict) else None


def encode(gen: int, record: dict[str, Any]) -> bytes:
    return to_line({"g": gen, **record})


#: Built once (``json.dumps`` with any option builds an encoder per call). ASCII output, each
#: non-ASCII character escaped (``§`` as ``\u00a7``): its C escaping runs at ~1.6x the speed of
#: the UTF-8 one, for a record a few percent longer (each delimiter takes six bytes, not two).
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def to_line(record: dict[str, Any], encoded_text: str | None = None) -> bytes:
    if encoded_text is None:
        body = _ENCODE(record).encode("ascii")
    else:  # the same bytes, "text" taken as already encoded: the keys around it encoded as two
        keys = list(record)  # dicts (an encoder call costs a few µs), the text spliced between
        at = keys.index("text")
        head = _ENCODE({key: record[key] for key in keys[:at]})[:-1]
        tail = _ENCODE({key: record[key] for key in keys[at + 1:]})[1:]
        body = "".join((head, "," if at else "", '"text":', encoded_text,
                        "," if at + 1 < len(keys) else "", tail)).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(body), body)


#: What ``_ENCODE`` does to a string, as a function of its own (the C one where there is one).
_ESCAPE = json.encoder.encode_basestring_ascii
#: Each entry's escaped form (quotes left off) and its UTF-8 bytes, kept from one record to the
#: next; replaced (not cleared) when full, so a thread that holds the pair still finds its keys.
_ENCODED: tuple[dict[str, str], dict[str, bytes]] = ({}, {})
_ENCODED_ENTRIES = 4096
_ENCODED_CHARS = 16_384  # a longer entry (a store with a huge budget) is not kept


def encode_grown(pieces: list[str], delimiter: str,
                 previous: tuple[list[str], str, bytes] | None) -> tuple[str, bytes]:
    """:func:`encode_text` of ``pieces``, given ``previous``: an earlier call's pieces and its
    two encodings. When ``pieces`` starts with all of those (an add, which appends), only the
    new pieces are encoded and the rest is the earlier result extended: at 300 entries that is
    ~15 µs of an add instead of ~50 (a set of 300 pieces, their lookups and two whole joins).
    The same bytes either way (``tests/test_journal.py``)."""
    if previous is not None:
        before, escaped, utf8 = previous
        kept = len(before)
        if 0 < kept < len(pieces) and pieces[:kept] == before:
            tail_escaped, tail_utf8 = encode_text(pieces[kept:], delimiter)
            return (escaped[:-1] + _ESCAPE(delimiter)[1:-1] + tail_escaped[1:],
                    utf8 + delimiter.encode("utf-8") + tail_utf8)
    return encode_text(pieces, delimiter)


def encode_text(pieces: list[str], delimiter: str) -> tuple[str, bytes]:
    """``(_ENCODE(text), text.encode("utf-8"))`` for ``text = delimiter.join(pieces)``, built
    from each piece's encodings.

    Every record holds the file's whole text, and encoding it twice (the record's JSON, the
    file's bytes) was the part of a write that grew with the number of entries (~70 µs for the
    JSON alone at 300 entries). Both encodings work one character at a time, so the text's are
    its pieces' joined by the delimiter's; a write changes an entry or two, so the others' are
    kept from earlier writes, and the rest runs at C speed (a set difference, two joins). Byte
    for byte what encoding the text whole gives (``tests/test_journal.py``); a piece UTF-8
    cannot encode (a lone surrogate) raises the same ``UnicodeEncodeError``."""
    global _ENCODED
    escaped, utf8 = _ENCODED
    missing = set(pieces).difference(escaped)
    if any(len(piece) > _ENCODED_CHARS for piece in missing):
        text = delimiter.join(pieces)
        return _ESCAPE(text), text.encode("utf-8")
    if len(escaped) + len(missing) > _ENCODED_ENTRIES:
        escaped, utf8 = _ENCODED = ({}, {})  # entries long gone from the file
        missing = set(pieces)
    for piece in missing:
        utf8[piece] = piece.encode("utf-8")
        escaped[piece] = _ESCAPE(piece)[1:-1]
    if len(pieces) < 2:  # itemgetter of one key gives the value, not a tuple of it
        return _ESCAPE(delimiter.join(pieces)), delimiter.join(pieces).encode("utf-8")
    each = operator.itemgetter(*pieces)  # looks every piece up in one C call
    return ('"' + _ESCAPE(delimiter)[1:-1].join(each(escaped)) + '"',
            delimiter.encode("utf-8").join(each(utf8)))
