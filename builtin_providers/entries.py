"""The on-disk format of a memory file: entries joined by a line holding only ``§``.

Parsing splits on the whole delimiter (a ``§`` inside an entry survives), normalises newlines,
strips each entry and drops empty ones and exact duplicates. Serialising joins with the delimiter
and adds nothing else, so a file the tool wrote reads back identically.
"""

from __future__ import annotations

import contextlib
import re
from collections import OrderedDict
from collections.abc import Collection, Iterable

from memhost.security.text import half_character, half_described

#: The two stores: ``memory`` (the agent's notes) and ``user`` (who the user is), and their files.
TARGETS = ("memory", "user")
FILENAMES = {"memory": "MEMORY.md", "user": "USER.md"}
DELIMITER = "\n§\n"
#: A line that strips to ``§`` but is not exactly ``§`` (in normalised text, only leading
#: whitespace can be left).
_PADDED_DELIMITER = re.compile(r"^[^\S\n]+§$", re.MULTILINE)


def normalise(text: str) -> str:
    """LF newlines and no trailing whitespace on any line: formatting that must not matter.

    Each line is stripped by ``str.rstrip`` at C speed (~20 µs for a 300-entry file, where
    searching the text for trailing space with a regular expression took ~140); a line with
    nothing to strip comes back as the same object, so finding the text already normal (what
    the store writes always is) is one identity comparison a line."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    stripped = list(map(str.rstrip, lines))
    return text if stripped == lines else "\n".join(stripped)


def _pieces(text: str) -> list[str]:
    """Split normalised text at every line that is exactly ``§``.

    Splitting the string on ``DELIMITER`` alone misses a delimiter line at the very start or end
    of the file ("A\n§" from a hand edit): that ``§`` stayed glued to an entry, and the next
    rewrite turned it into "§\nB", corrupting the entry after it. A line holding only ``§`` is
    the delimiter wherever it sits; for text the tool wrote this is the same split.
    """
    pieces: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line == "§":
            pieces.append("\n".join(current))
            current = []
        else:
            current.append(line)
    pieces.append("\n".join(current))
    return pieces


def parse(raw: str) -> list[str]:
    if len(raw) > _CACHED_CHARS:
        return _parse(raw)
    found = _PARSED.get(raw)
    if found is None:
        found = _keep(raw, tuple(_parse(raw)), written=False)
    else:
        with contextlib.suppress(KeyError):  # another thread may have dropped it meanwhile
            _PARSED.move_to_end(raw)
    return list(found[0])


# Parsing is pure and most texts are parsed more than once: a session start finds both files as
# the previous one left them, a replace or remove parses the same text twice (drift guard, then
# the edit), and each write reads back the text the previous write made. Parsing once per
# distinct text halves a warm session start; a text the store serialised itself is never parsed
# at all (:func:`remember`). Callers get a fresh list each time, so nothing is shared; very large
# (drifted) files are not kept.
_CACHED_CHARS = 65_536
_CACHED_TEXTS = 32
#: text -> (its entries, whether the store wrote it: then it is known to be clean)
_PARSED: OrderedDict[str, tuple[tuple[str, ...], bool]] = OrderedDict()


def _keep(raw: str, entries: tuple[str, ...], *, written: bool) -> tuple[tuple[str, ...], bool]:
    found = _PARSED[raw] = (entries, written)
    with contextlib.suppress(KeyError):  # threads share the cache; losing a text is harmless
        _PARSED.move_to_end(raw)
        while len(_PARSED) > _CACHED_TEXTS:
            _PARSED.popitem(last=False)
    return found


def remember(entries: list[str]) -> str:
    """``serialize(entries)`` for distinct canonical entries (what a write stores), noted as
    parsing back to exactly them: the next read of that text costs a lookup, not a parse, and
    the drift guard knows it is clean (formatting included) without looking."""
    text = serialize(entries)
    if len(text) <= _CACHED_CHARS:
        _keep(text, tuple(entries), written=True)
    return text


def remember_committed(text: str, entries: list[str] | None = None) -> None:
    """Note ``text`` as a memory file a memhost writer committed (any process: the journal's last
    record holds it, :meth:`~memhost.builtin_providers.commit.StoreFile.settle`). Every such text
    is what :func:`remember` made of canonical entries, so its entries are its pieces between
    delimiters and the drift guard knows it clean: a writer that finds another process's write
    splits the file instead of parsing it line by line (~1.3 µs an entry), or takes the
    ``entries`` the journal already has for it."""
    if len(text) <= _CACHED_CHARS and text not in _PARSED:
        if entries is None:
            entries = text.split(DELIMITER) if text else []
        _keep(text, tuple(entries), written=True)


def _written(raw: str) -> bool:
    found = _PARSED.get(raw)
    return found is not None and found[1]


def _split(text: str) -> list[str]:
    """:func:`_pieces` of normalised ``text``, at C speed when its delimiters are all in the
    middle and never back to back (what the store writes): then splitting on the whole
    delimiter is the same split as line by line."""
    if text.startswith("§\n") or text.endswith("\n§") or text == "§" or "\n§\n§\n" in text:
        return _pieces(text)
    return text.split(DELIMITER)


def _parse(raw: str) -> list[str]:
    # Stripped, empty ones dropped, each kept once where it first appears: in C (dict keys keep
    # their first position), ~3x faster than a Python loop over the entries.
    entries = dict.fromkeys(map(str.strip, _split(normalise(raw))))
    entries.pop("", None)
    return list(entries)


def serialize(entries: Iterable[str]) -> str:
    return DELIMITER.join(entries)


def with_replaced(entries: list[str], previous: str, entry: str) -> list[str]:
    """A copy of ``entries`` (distinct, as :func:`parse` gives them) with ``previous`` replaced
    by ``entry`` in its place; an entry equal to ``entry`` elsewhere is dropped, so they stay
    distinct. (In C: a write's own work runs cold after the last write's sync.)"""
    after = list(entries)
    if entry != previous and entry in after:
        after.remove(entry)
    after[after.index(previous)] = entry
    return after


def joined_length(entries: list[str]) -> int:
    """What the budget counts: characters of the joined text, delimiters included. Joining and
    measuring is a copy in C; summing the lengths calls ``len`` once an entry, ~3x slower at a
    few hundred entries."""
    return len(DELIMITER.join(entries))


def drift_reason(raw: str, limit: int, known: Collection[str] = ()) -> str | None:
    """Why ``raw`` is not a clean entry list the tool could rewrite safely, or ``None``.

    Formatting never counts: CRLF newlines, trailing spaces, blank padding around delimiters and
    exact duplicates all round-trip. What counts is content a rewrite could mangle: a single
    entry longer than the whole budget (an unstructured blob, e.g. a shell append of a log), a
    line that looks like a delimiter but is not one, or binary bytes.

    ``known`` holds entries the tool itself wrote (they have sidecar metadata). Such an entry is
    never a blob, however long: it outgrew the budget because the limit was lowered later, and
    the store must still let it be removed or shortened. Text appended to it changes the entry,
    so an appended blob is still caught.
    """
    if not raw.strip():
        return None
    text = raw
    if not _written(raw):  # what the store wrote has neither: only the blob rule applies
        text = normalise(raw)
        if "\x00" in text:
            return "the file contains NUL bytes (binary or corrupted content)"
        if _padded_delimiter(text):
            return "a line holds '§' with leading spaces, so it is not read as a delimiter"
    entries = parse(text)
    if max(map(len, entries), default=0) <= limit:  # the usual case, found in C
        return None
    for entry in entries:
        if len(entry) > limit and entry not in known:
            return (f"one entry is {len(entry):,} characters, longer than the whole "
                    f"{limit:,}-character budget (an unstructured blob)")
    return None


def _padded_delimiter(text: str) -> bool:
    """Whether a line of normalised ``text`` strips to ``§`` without being exactly ``§``. Only
    a ``§`` outside the delimiters can be one: the search runs when there is such a ``§``."""
    count = text.count("§")
    return bool(count and count != text.count(DELIMITER) and _PADDED_DELIMITER.search(text))


def canonical_entry(text: str) -> str:
    """The form ``text`` takes once stored: normalised and stripped.

    Raises ``ValueError`` when the text holds a line that is only ``§``, since that line would
    split it into several entries on the next read.
    """
    entry = normalise(text).strip()
    if any(line.strip() == "§" for line in entry.split("\n")):
        raise ValueError("content holds a line with only '§', which separates entries in the "
                         "memory file; save the parts as separate entries instead")
    # The drift guard treats NUL as a sign of a corrupted file; storing one would make every
    # later replace/remove on this file refuse.
    if "\x00" in entry:
        raise ValueError("content holds a NUL character; remove it and retry")
    # Half of a character (JSON's "\ud83d" without its pair decodes to one): no UTF-8 file can
    # hold it, so the write could not be saved.
    if (half := half_character(entry)) is not None:
        raise ValueError(f"content holds {half_described(half)}, which the memory file "
                         "cannot hold; send the text as UTF-8 (whole characters), or leave it "
                         "out, and retry")
    return entry


_KINDS = {bool: "true or false", int: "a number", float: "a number", list: "a list",
          dict: "an object"}
#: What :func:`text_problem` says of a field that was not given, or given blank.
REQUIRED = "is required"


def text_problem(value: object) -> str | None:
    """Why ``value`` cannot be an entry's text or an ``old_text`` ("is required", "must be a
    string, not a list"); ``None`` when it can. A model that sends a number or a list for a
    field is told which it sent, not that the field is missing."""
    if isinstance(value, str):
        return None if value.strip() else REQUIRED
    if value is None:
        return REQUIRED
    return f"must be a string, not {_KINDS.get(type(value), type(value).__name__)}"
