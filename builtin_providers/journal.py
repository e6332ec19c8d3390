"""The write-ahead journal of one memory file: ``<home>/memories/MEMORY.md.journal``.

Every write to ``MEMORY.md`` is committed by one record appended here under the file's lock
and made durable by one ``fdatasync``: the file's new text (a splice of what the records before
it add up to, or whole), the archive records of what the write took out and the metadata it set
(:mod:`memhost.builtin_providers.commit` says how a crash at any point loses none of them).

The file is preallocated with zeros, so an append overwrites blocks the filesystem already
holds: the sync writes them and flushes the disk, with no filesystem-journal commit. When a
record no longer fits, a checkpoint folds the journal into the long-lived files and starts a new
generation at offset 0.

Format: one record per line, ``<crc32 as 8 hex digits> <json>\\n``. A generation starts with the
record ``{"g": N}``; every later record carries the same ``"g"``. Reading stops at the first NUL
byte (the unused, preallocated rest), at a line whose checksum fails (a torn write, or what an
older generation left behind a shorter new one) and at a record of another generation. JSON
escapes NUL, so a record never holds one.

Readers need no lock on the memory file: each process keeps, per journal, the offset it has read
to and what the records it read add up to (its threads under a lock of their own), and reads
only what was appended since. A session start needs only the newest committed text
(:func:`newest`), and decodes only the newest whole text and the splices after it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memhost.builtin_providers.journal_records import (CommittedText, decode, encode,
                                                      generation_of, has_text, intact, to_line)
from memhost.files import atomic_write_bytes

SUFFIX = ".journal"
#: The journal's size when created; a checkpoint grows it so ~128 of its largest records fit.
INITIAL_BYTES = 64 << 10  # small for a new home (tests make many); grown at checkpoints
MAX_BYTES = 16 << 20
_HEAD_BYTES = 64
_FIRST_READ = 4096


# Positional reads and writes, so threads of one process can share a descriptor; where the
# platform has none (Windows), a seek and a read or write under one process-wide lock.
_POSITIONED = threading.Lock()


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    with _POSITIONED:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


def _pwrite(fd: int, data: bytes, offset: int) -> int:
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    with _POSITIONED:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.write(fd, data)


#: ``fdatasync`` where there is one (not on macOS or Windows): the data, not the timestamps.
_datasync = getattr(os, "fdatasync", os.fsync)


class Full(Exception):
    """The record does not fit in what is left of the journal: checkpoint first."""


def path_for(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + SUFFIX)


@dataclass
class State:
    """What the records of the journal's current generation add up to."""

    gen: int = 0  # 0: no usable journal
    end: int = 0  # the offset just after the last valid record
    size: int = 0  # bytes preallocated
    #: Metadata events folded in order: entry key -> its whole record, or None (dropped).
    meta: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    archive: list[dict[str, Any]] = field(default_factory=list)
    #: What the memory file must hold: the newest whole text and the splices after it.
    committed: CommittedText = field(default_factory=CommittedText)
    largest: int = 0  # the longest record of this generation, in bytes
    records: int = 0
    head: bytes = b""  # the first bytes of the file when last read


class _Handle:
    __slots__ = ("fd", "ident", "lock", "name", "path", "state", "writable")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = os.fspath(path)  # for the os calls on every write
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None
        self.writable = False
        self.state = State()
        #: Held to read on or append: a thread reading without the memory file's lock while
        #: another appends would fold the record being synced in twice (the next one then
        #: written past a gap).
        self.lock = threading.RLock()

    def close(self) -> None:
        fd, self.fd, self.ident = self.fd, None, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.state = State()


_HANDLES: dict[Path, _Handle] = {}


def _handle(path: Path) -> _Handle:
    handle = _HANDLES.get(path)
    if handle is None:  # one handle, even for two threads asking at once
        handle = _HANDLES.setdefault(path, _Handle(path))
    return handle


def state(path: Path, *, writable: bool = False, reread: bool = True) -> State:
    """The journal as it is on disk now (an empty :class:`State` when there is none).

    ``reread=False`` trusts what this process read last (for a lock holder that just read it).
    """
    handle = _handle(path)
    with handle.lock:  # see _Handle.lock
        if not reread and handle.fd is not None and (handle.writable or not writable):
            return handle.state
        try:
            found = os.stat(handle.name)
        except FileNotFoundError:
            handle.close()
            return handle.state
        ident = (found.st_dev, found.st_ino)
        if handle.fd is None or handle.ident != ident or (writable and not handle.writable):
            handle.close()
            try:
                handle.fd = os.open(handle.name, (os.O_RDWR if writable else os.O_RDONLY)
                                    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                if writable:
                    raise
                return handle.state
            handle.ident, handle.writable = ident, writable
        fd = handle.fd
        current = handle.state
        try:
            head = _pread(fd, _HEAD_BYTES, 0)
            gen = current.gen if head == current.head and current.gen else _generation(head)
            if gen != current.gen or gen == 0:
                current = handle.state = State(gen=gen)
            current.head = head
            current.size = found.st_size
            if gen:
                _read_on(fd, current)
        except OSError as exc:
            handle.close()
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        return current


def newest(path: Path) -> str | None:
    """``state(path).committed.text()`` (the text the memory file must hold), for a session
    start. A process not following the journal checks the records as :func:`state` does, but
    decodes only the newest whole text and the splices after it (at most SPLICES_PER_TEXT)."""
    handle = _HANDLES.get(path)
    if handle is not None and handle.fd is not None:
        return state(path).committed.text()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return state(path).committed.text()  # as the full read would: it says what is wrong
    try:
        return _newest(fd)
    finally:
        os.close(fd)


def _newest(fd: int) -> str | None:
    gen = _generation(_pread(fd, _HEAD_BYTES, 0))
    if not gen:
        return None
    valid = []
    for data, start, end in _lines(fd, 0, gen):
        if not intact(data, start, end):
            break
        if generation_of(data, start) is None:  # not as to_line writes it: as state() reads it
            record = decode(data[start:end])
            if record is None or record.get("g") != gen:
                break
        valid.append((data, start, end))
    chain = []  # back to the newest whole text (or cancel), newest first
    for data, start, end in reversed(valid):
        record = decode(data[start:end])
        if record is None:
            continue
        if "splice" in record or has_text(record) or record.get("cancel"):
            chain.append(record)
            if "splice" not in record:
                break
    committed = CommittedText()
    for record in reversed(chain):
        committed.fold(record)
    return committed.text()


#: Read at a time by :func:`_lines` once the first read held a whole line.
_CHUNK = 32 << 10


def _lines(fd: int, offset: int, gen: int) -> Iterator[tuple[bytes, int, int]]:
    """The journal's complete lines from ``offset``, as ``(chunk, start, end)`` (the line is
    ``chunk[start:end]``: none is copied to be checked), up to its zeroed rest or to a line of
    another generation than ``gen`` (what an older one left behind is not even decoded)."""
    want = _FIRST_READ
    ours = b'{"g":%d,' % gen  # how every record of this generation but its header starts
    while True:
        chunk = _pread(fd, want, offset)
        stop = chunk.find(b"\0")
        data = chunk if stop < 0 else chunk[:stop]
        pos = 0
        while (end := data.find(b"\n", pos)) >= 0:
            # The usual line is found ours in C; any other is read the slow way.
            if not data.startswith(ours, pos + 9) and generation_of(data, pos) not in (None, gen):
                return
            yield data, pos, end
            pos = end + 1
        if stop >= 0 or len(chunk) < want:
            return  # the rest is unused space, or a torn last line
        if pos == 0 and generation_of(data) not in (None, gen):
            return  # a line longer than what was read, of another generation
        offset += pos
        want = _CHUNK if pos else want * 2  # a line longer than what was read: read more


def _generation(head: bytes) -> int:
    # The generation the first line starts, {"g":N} as start() writes it, read without JSON.
    line, newline, _ = head.partition(b"\n")
    gen = generation_of(line) if newline else None
    ok = gen is not None and gen > 0 and line[9:] == b'{"g":%d}' % gen and intact(line)
    return gen if ok else 0


def _read_on(fd: int, current: State) -> None:
    """Fold in the records appended after ``current.end``."""
    for data, start, end in _lines(fd, current.end, current.gen):
        record = decode(data[start:end])
        if record is None or record.get("g") != current.gen:
            return
        _fold(current, record, end + 1 - start)
        current.end += end + 1 - start


def _fold(current: State, record: dict[str, Any], length: int,
          made: list[str] | None = None) -> None:
    current.records += 1
    if length > current.largest:
        current.largest = length
    meta = record.get("meta")
    if isinstance(meta, dict):
        for key, value in meta.items():
            current.meta[key] = value if isinstance(value, dict) else None
    archived = record.get("archive")
    if isinstance(archived, list):
        current.archive.extend(a for a in archived if isinstance(a, dict))
    current.committed.fold(record, made)


def append(path: Path, record: dict[str, Any], *, on_written: Any = None,
           wrote: tuple[str, list[str]] | None = None) -> State:
    """Append ``record`` and sync it (the caller holds the memory file's lock).

    ``wrote``: the text and entries a text-bearing record sets, as the writer has them.
    Raises :class:`Full` when it does not fit (nothing written) and ``OSError`` when it cannot
    be written; returns the state with the record folded in.
    """
    with _handle(path).lock:
        current = state(path, writable=True, reread=False)
        handle = _HANDLES[path]
        assert handle.fd is not None and current.gen
        record = {"g": current.gen, **record}
        line = to_line(record)
        if current.end + len(line) > current.size:
            raise Full(f"{path.name}: {len(line):,} bytes do not fit in the "
                       f"{current.size - current.end:,} left")
        view, offset = memoryview(line), current.end
        while view:  # a regular file takes it whole; a short write (a signal) goes on where it left
            written = _pwrite(handle.fd, view, offset)
            view, offset = view[written:], offset + written
        if on_written is not None:
            on_written()
        _datasync(handle.fd)
        current.end += len(line)
        _fold(current, record, len(line), None if wrote is None else wrote[1])
        if wrote is not None and current.committed.record is record:
            current.committed.wrote(*wrote)
        return current


def start(path: Path, *, size: int, gen: int) -> State:
    """Begin generation ``gen`` in a journal of at least ``size`` bytes (the caller holds the
    lock). An existing journal is reused in place: its header is overwritten and synced, and
    what follows it no longer reads as this generation."""
    with _handle(path).lock:  # no reader of this process reads it half rewritten
        header = encode(gen, {})
        size = max(size, 2 * len(header))
        try:
            found = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            found = None
        if found is not None and os.path.islink(path):
            raise OSError(errno.ELOOP, "the journal is a symbolic link; memhost never writes "
                          "through one", str(path))
        if found is None or not os.path.isfile(path):
            _create(path, size, header)
        else:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
            try:
                if found.st_size < size:
                    _zero_fill(fd, found.st_size, size)
                    _pwrite(fd, header, 0)
                    os.fsync(fd)  # the size changed: the inode must be synced too
                else:
                    _pwrite(fd, header, 0)
                    _datasync(fd)
            finally:
                os.close(fd)
        return state(path, writable=True)


def _create(path: Path, size: int, header: bytes) -> None:
    # Written zeros, not a sparse file or fallocate's unwritten extents: overwriting those
    # later would need a filesystem-journal commit on each sync, which is what this avoids.
    atomic_write_bytes(path, header + bytes(size - len(header)))


def _zero_fill(fd: int, start: int, end: int) -> None:
    block = b"\0" * (1 << 16)
    offset = start
    while offset < end:
        offset += _pwrite(fd, block[:min(len(block), end - offset)], offset)


def forget(path: Path) -> None:
    """Drop this process's view of the journal (it was removed or replaced)."""
    handle = _HANDLES.pop(path, None)
    if handle is not None:
        with handle.lock:
            handle.close()


# Open stores per journal: a descriptor kept open between writes would otherwise stay open for
# every user a process ever served, until it ran out.
_USERS: dict[Path, int] = {}
_users_lock = threading.Lock()


def retain(path: Path) -> None:
    """A store writing through the journal at ``path`` was opened."""
    with _users_lock:
        _USERS[path] = _USERS.get(path, 0) + 1


def release(path: Path) -> None:
    """A store opened with :func:`retain` was closed: the last one closes the descriptor."""
    with _users_lock:
        left = _USERS.pop(path, 0) - 1
        if left > 0:
            _USERS[path] = left
        else:
            forget(path)


def _after_fork() -> None:
    # Descriptors stay valid in a child, but a child must re-read what it has not seen.
    for handle in _HANDLES.values():
        handle.state = State()
        handle.lock = threading.RLock()  # a thread of the parent may have held it


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
