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
import zlib
from typing import Any

import orjson

from memhost.builtin_providers.entries import DELIMITER


class Record(dict):  # type: ignore[type-arg]
    """A decoded record whose ``"text"``, when it has one, is decoded on first use."""

    __slots__ = ("_text",)

    def __init__(self, fields: dict[str, Any], text: bytes | None = None) -> None:
        super().__init__(fields)
        self._text = text  # the text's JSON string literal, quotes included

    def __missing__(self, key: str) -> Any:
        if key != "text" or self._text is None:
            raise KeyError(key)
        text = self["text"] = _loads(self._text)
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
            fields = _loads(body[:at] + body[end + 1:])
        except ValueError:
            fields = None
        if isinstance(fields, dict) and "before" in fields and "text" not in fields:
            return Record(fields, body[at + len(_TEXT_KEY) - 1:end + 1])
    try:
        record = _loads(body)  # any other shape: decoded whole
    except ValueError:
        return None
    return Record(record) if isinstance(record, dict) else None


def encode(gen: int, record: dict[str, Any]) -> bytes:
    return to_line({"g": gen, **record})


#: For what orjson refuses (a lone surrogate in a session id, an integer past 64 bits): the
#: standard library's encoder, non-ASCII escaped. Built once (``json.dumps`` with any option
#: builds an encoder per call).
_ENCODE_ANY = json.JSONEncoder(separators=(",", ":")).encode


def to_line(record: dict[str, Any]) -> bytes:
    """``record`` as a journal line. orjson (compact UTF-8, keys in order, as the readers
    expect) encodes a record ~10x faster than the standard library and :func:`decode` reads it
    ~4x faster: a write encodes its record under the lock, and a writer reads every record the
    others appended since its last write, also under the lock."""
    try:
        body = orjson.dumps(record)
    except TypeError:  # orjson.JSONEncodeError
        body = _ENCODE_ANY(record).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except ValueError:  # also what orjson refuses and json reads (an escaped lone surrogate)
        return json.loads(data)


# -- a write as the change it makes ------------------------------------------------------------

#: A splice inserting more characters than this share of the new text is not worth it: the
#: record holds the whole text instead.
_SPLICE_SHARE = 0.5


def splice_of(before: list[str], after: list[str], *,
              chars: int | None = None) -> list[Any] | None:
    """``after`` as ranges of ``before`` (``[start, stop]``) and the entries that are new
    (strings), in order: what :func:`apply_splice` turns back into ``after``. None when the new
    entries would hold more than about half of ``after``'s text (a record then holds the text
    whole); ``chars``, when the caller knows it, is the length of ``after``'s entries together
    (counting it costs an add ~6 µs at 300 entries).

    A write changes an entry or a few: an add appends one (``[[0, n], "new"]``), a replace or
    a remove touches one, a batch a handful, anywhere. Its record then holds those entries,
    not the whole file (~200 bytes against ~25 KB at 300 entries), so the record's bytes, its
    sync and every other process's reading of it stop growing with the file."""
    size = len(before)
    if len(after) >= size and after[:size] == before:  # an add: the common case, in C
        parts: list[Any] = [[0, size], *after[size:]] if size else list(after)
    else:
        # Each entry's place in ``before`` (None: new), looked up in C; then runs of kept
        # entries become ranges.
        indexes = map(dict(zip(before, range(size))).get, after)
        parts = []
        run: list[int] | None = None  # the range being extended
        for entry, index in zip(after, indexes):
            if index is None:
                parts.append(entry)
                run = None
            elif run is not None and run[1] == index:
                run[1] = index + 1
            else:
                run = [index, index + 1]
                parts.append(run)
    new = sum(len(part) for part in parts if isinstance(part, str))
    if new and new > _SPLICE_SHARE * (sum(map(len, after)) if chars is None else chars):
        return None
    return parts


def apply_splice(entries: list[str], splice: Any) -> list[str] | None:
    """The entries ``splice`` (:func:`splice_of`) makes of ``entries``; None when it does not
    fit them (a record that is not a splice, or one meant for other entries)."""
    if not isinstance(splice, list):
        return None
    rebuilt: list[str] = []
    for part in splice:
        if isinstance(part, str):
            rebuilt.append(part)
        elif (isinstance(part, list) and len(part) == 2 and all(type(i) is int for i in part)
              and 0 <= part[0] <= part[1] <= len(entries)):
            rebuilt.extend(entries[part[0]:part[1]])
        else:
            return None
    return rebuilt


#: A text-bearing record holds the whole text at least once in this many: a reader that starts
#: cold (a session start) decodes at most this many splices after it.
SPLICES_PER_TEXT = 32


class CommittedText:
    """The text the memory file must hold, as the journal's records since its last checkpoint
    say: the newest record holding the text whole, then the splices after it (a record that
    cancels a write leaves nothing owed). Joined or split only when asked."""

    __slots__ = ("_entries", "_lent", "_text", "record", "splices")

    def __init__(self) -> None:
        #: The newest text-bearing record (its ``before`` and ``ino`` say what it replaced).
        self.record: dict[str, Any] | None = None
        self.splices = 0  # since the last whole text
        self._entries: list[str] | None = None
        #: Whether ``_entries`` was handed out (:meth:`entries`): then a splice copies it.
        self._lent = False
        self._text: str | None = None

    def fold(self, record: dict[str, Any], made: list[str] | None = None) -> None:
        """Take ``record`` in; ``made``: the entries a splice makes, when the writer folding its
        own record has them (it made the splice from them), so it is not applied again."""
        if has_text(record):
            self.record, self.splices, self._entries, self._text = record, 0, None, None
        elif "splice" in record:
            entries = list(made) if made is not None else self._spliced(record["splice"])
            # A splice with nothing to apply to, or that does not fit, leaves nothing known.
            self.record = None if entries is None else record
            self.splices, self._entries, self._lent, self._text = (
                self.splices + 1, entries, False, None)
        elif record.get("cancel"):
            self.record, self.splices, self._entries, self._text = None, 0, None, None

    def _spliced(self, splice: Any) -> list[str] | None:
        """The entries ``splice`` makes of the known ones. A splice that only appends (an
        add's, ``[[0, n], "new"]``) extends the list this object holds, unless it was handed
        out: a writer catching up on the adds of seven others copied every entry seven times
        (in a large store, each copy a few microseconds of cache misses) where one is enough."""
        base = self._entries if self._entries is not None else self._split()
        if base is None:
            return None
        if not self._lent and _appends_to(splice, len(base)):
            base.extend(splice[1:])
            return base
        return apply_splice(base, splice)

    def wrote(self, text: str, entries: list[str]) -> None:
        """The writer's own record: it knows the text, and its entries (a splice has just
        made them, equal: only a whole text leaves them to be split)."""
        self._text = text
        if self._entries is None:
            self._entries, self._lent = list(entries), False

    def text(self) -> str | None:
        record, entries, text = self.record, self._entries, self._text
        if record is None or text is not None:
            return text if record is not None else None
        if entries is None:
            text = record["text"]
        else:
            text = DELIMITER.join(entries)
            if len(text) != record.get("chars"):  # replayed wrong: trust none of it
                self.record = self._entries = None
                return None
        # Not folded on meanwhile (a fold may extend the same list, but it always changes
        # the record).
        if self.record is record and self._entries is entries:
            self._text = text
        return text

    def entries(self) -> list[str] | None:
        """The entries of :meth:`text` (a text memhost committed is its entries joined). The
        list is this object's own: read it, do not change it."""
        entries = self._entries if self._entries is not None else self._split()
        if entries is not None:
            self._lent = True
        return entries

    def _split(self) -> list[str] | None:
        text = self.text()
        if text is None:
            return None
        self._entries, self._lent = (text.split(DELIMITER) if text else []), False
        return self._entries


def _appends_to(splice: Any, size: int) -> bool:
    """Whether ``splice`` keeps all ``size`` entries in place and adds strings after them."""
    if type(splice) is not list or not splice:
        return False
    kept = splice[0]
    if not (type(kept) is list and len(kept) == 2 and type(kept[0]) is int
            and type(kept[1]) is int and kept[0] == 0 and kept[1] == size):
        return False
    for index in range(1, len(splice)):  # an add's one new entry, most often: no generator
        if type(splice[index]) is not str:
            return False
    return True


def with_text(record: dict[str, Any], committed: CommittedText | None, entries: list[str],
              wrote: tuple[str, list[str]] | None) -> dict[str, Any]:
    """``record`` with what it sets the file to (``wrote``: the new text and its entries): a
    splice (:func:`splice_of`) when this write read exactly the entries the journal says the
    file holds (``committed``), else the whole text. A whole text is written at least once in
    :data:`SPLICES_PER_TEXT` records, and first in each generation, so a reader starting cold
    decodes a few records, not all since the last checkpoint."""
    if wrote is None:
        return record
    text, pieces = wrote
    if committed is not None and committed.splices < SPLICES_PER_TEXT:
        known = committed.entries()
        # The text is its entries joined: their length together is the text's, less the
        # delimiters'.
        chars = len(text) - len(DELIMITER) * (len(pieces) - 1) if pieces else 0
        splice = splice_of(known, pieces, chars=chars) if known == entries else None
        if splice is not None:
            return {**record, "splice": splice, "chars": len(text)}
    # "text" right before "before": what lets a reader leave it undecoded (see Record)
    return {"t": record["t"], "text": text, **{k: v for k, v in record.items() if k != "t"}}
