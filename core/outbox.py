"""A durable outbox for provider writes, so none is lost to a shutdown bound or a dead process.

Each manager appends every write it queues for the external provider to its own journal,
``<home>/outbox/<provider>/<pid>-<token>.jsonl``, before the write is queued, and appends an
acknowledgement once the provider took it. The journal's sidecar lock is held for the manager's
whole life, so a journal whose lock can be taken belongs to a manager that is gone: the next
manager started with that provider replays its unacknowledged writes, in order, acknowledging
each one in the same journal, and deletes the journal once every write is through.

A write is delivered once, except in one narrow window: a process killed after the provider
returned but before the acknowledgement reached the file delivers that write again on replay,
as does an acknowledgement the disk had no room for. Journals are flushed to the OS on every
append (a killed process loses nothing) but not fsynced. A write the journal has no room for
is delivered from memory (:mod:`memhost.delivery`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from memhost import jsondoc, locking
from memhost.faultlog import FaultLog
from memhost.files import (
    atomic_write_bytes,
    ensure_private_dir,
    open_append_private,
    sweep_orphaned_temp_files,
    write_all,
)
from memhost.locking import ProcessLock, process_lock

log = logging.getLogger(__name__)
_ACK_FAULTS = FaultLog(log)

#: A journal with nothing owed is emptied once it holds this many bytes. A manager lives as long
#: as its host (a gateway runs for weeks) and journals every turn it syncs, acknowledged or not:
#: kept whole, the file would grow by every turn ever synced, and be read whole at shutdown.
COMPACT_BYTES = 1 << 20

#: orjson writes a turn's line (its texts twice: as arguments and in ``messages``) about ten
#: times faster than the standard library's encoder, on the host's thread: see
#: docs/performance.md, "turn_overhead". ``default=str`` writes what JSON has no type for as its
#: text, as a replay would read it; NaN and the infinities, which JSON lacks, are written null.
_ORJSON_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
#: For what orjson refuses (an integer past 64 bits, a lone surrogate, nesting past 255
#: levels): the standard library writes those, surrogates escaped.
_ENCODE_ANY = json.JSONEncoder(default=str).encode


def encode_line(data: dict[str, Any]) -> bytes:
    """``data`` as one journal line (UTF-8, newline included), read back by ``json.loads``."""
    try:
        return orjson.dumps(data, default=str, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        return (_ENCODE_ANY(data) + "\n").encode("ascii")


@dataclass(frozen=True)
class Record:
    """One queued write: the hook calls it stands for (a session boundary is two)."""

    journal: Path
    seq: int
    #: The journal line it was read from (text) or written as (bytes). Decoded on first use,
    #: by whoever delivers it: the host's thread only writes the line.
    line: str | bytes

    @cached_property
    def calls(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        return tuple((hook, kwargs) for hook, kwargs in json.loads(self.line).get("calls", []))


class Journal:
    """One manager's (or one replayed) journal file, held under its lock."""

    def __init__(self, path: Path, lock: ProcessLock) -> None:
        self.path = path
        self._lock = lock
        self._mutex = threading.Lock()
        # One os.write per line, no buffer in between: a line is in the OS's hands (and survives
        # the process being killed) as soon as the write returns.
        self._fd = open_append_private(path)
        #: The writes appended and not yet acknowledged: none left, the file can be emptied.
        self._owed = {record.seq for record in self.pending()}
        self._next_seq = 1 + max(self._owed, default=0)
        self._bytes = os.fstat(self._fd).st_size
        self._torn = False  # a write failed part way: the next line starts on a line of its own
        self._pid = os.getpid()
        self.closed = False

    def append(self, calls: list[tuple[str, dict[str, Any]]]) -> Record | None:
        """Journal a write; ``None`` once the journal is closed (the manager shut down).

        The record carries the calls as read back from the journal line, not the caller's
        objects: the provider then gets a snapshot the host can no longer change (a host
        appending to its transcript list must not alter a queued sync) and cannot change the
        host's objects in turn, and a live delivery is the same payload a replay would be.
        Reading it back is left to the delivering thread (:attr:`Record.calls`).
        """
        with self._mutex:
            if self.closed:
                return None
            seq = self._next_seq
            self._next_seq += 1
            line = self._write({"seq": seq, "calls": [[hook, kwargs] for hook, kwargs in calls]})
            self._owed.add(seq)
        return Record(self.path, seq, line)

    def ack(self, seq: int) -> None:
        """Record that write ``seq`` was delivered. If that cannot be written (a full disk),
        the write is delivered again by the manager that replays this journal, which a
        WARNING says: better twice than never."""
        with self._mutex:
            if self.closed:
                return
            self._owed.discard(seq)
            try:
                self._write({"ack": seq})
            except OSError as exc:
                _ACK_FAULTS.repeated(self.path.parent.name, "ack", (
                    f"could not record a delivered write in {self.path} ({exc}); a later "
                    "replay of this journal delivers it again"))
                return
            if not self._owed and self._bytes >= COMPACT_BYTES:
                # Every line is a delivered write or its acknowledgement: an empty journal says
                # the same, and a crash either side of the truncation leaves nothing owed.
                os.ftruncate(self._fd, 0)
                self._bytes = 0

    def _write(self, data: dict[str, Any]) -> bytes:
        line = encode_line(data)
        # After a write that failed part way (a full disk), a newline first: the torn line is
        # then skipped on its own, instead of taking this one with it.
        out = b"\n" + line if self._torn else line
        try:
            write_all(self._fd, out)
        except OSError:
            self._torn = True
            raise
        self._torn = False
        self._bytes += len(out)
        return line

    def pending(self) -> list[Record]:
        """Unacknowledged writes, oldest first."""
        return _unacknowledged(self.path)

    def close(self) -> None:
        """Release the journal; delete it when nothing in it is still owed. In a process forked
        from the one that opened it, only this process's descriptor is closed: the lock and
        the file are the parent's, in use (an atexit handler of a forked worker ends here)."""
        with self._mutex:
            if self.closed:
                return
            self.closed = True
            os.close(self._fd)
            if os.getpid() != self._pid:
                return
        finished = not self.pending()
        if finished:
            self.path.unlink(missing_ok=True)
        self._lock.release()
        if finished:
            _lock_file(self.path).unlink(missing_ok=True)


class Outbox:
    """The outbox folder of one provider in one home."""

    def __init__(self, home: Path, provider: str) -> None:
        self.folder = home / "outbox" / provider

    def open_journal(self) -> Journal:
        ensure_private_dir(self.folder)
        path = self.folder / f"{os.getpid()}-{secrets.token_hex(4)}.jsonl"
        return Journal(path, _held(path))

    def claim_orphans(self) -> list[Journal]:
        """Journals left by managers that are gone, oldest first, now held by the caller."""
        if not self.folder.is_dir():
            return []
        # A host killed while it rewrote a file here (a retry journal, its health record)
        # left a temp file; the next host to start with this provider clears it.
        sweep_orphaned_temp_files(self.folder)
        sweep_orphaned_temp_files(self.folder / "failed")  # memhost.deadletter's folder
        found: list[Journal] = []
        for path in sorted(self.folder.glob("*.jsonl"), key=_age):
            try:
                lock = _held(path)
            except locking.Timeout:
                continue  # a live manager owns it
            journal = Journal(path, lock)
            if journal.pending():
                found.append(journal)
            else:
                journal.close()
        return found

    def requeue(self, writes: list[tuple[tuple[str, dict[str, Any]], ...]]) -> Path:
        """Hand ``writes`` back as a journal no manager holds: the next manager started with
        this provider replays them, in this order, like the writes of a manager that is gone."""
        ensure_private_dir(self.folder)
        path = self.folder / f"retry-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
        atomic_write_bytes(path, b"".join(
            encode_line({"seq": seq, "calls": [[hook, kwargs] for hook, kwargs in calls]})
            for seq, calls in enumerate(writes, 1)))
        return path

    def pending_count(self) -> int:
        if not self.folder.is_dir():
            return 0
        return sum(len(_unacknowledged(path)) for path in self.folder.glob("*.jsonl"))


def _lock_file(journal: Path) -> Path:
    return journal.with_name(journal.name + ".lock")


def _held(journal: Path) -> ProcessLock:
    """``journal``'s lock, taken now or never (``Timeout``: a live manager holds it). The same
    lock as every memory write's (:mod:`memhost.locking`): a manager opening takes one, and
    one more for each journal it looks at."""
    lock = process_lock(str(_lock_file(journal)))
    lock.acquire(0)
    return lock


def _age(path: Path) -> tuple[float, str]:
    # Another manager may finish and delete its journal between the listing and this look.
    try:
        return path.stat().st_mtime, path.name
    except FileNotFoundError:
        return 0.0, path.name


def _unacknowledged(path: Path) -> list[Record]:
    """The writes of a journal without an acknowledgement (a torn last line is skipped)."""
    writes: dict[int, Record] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            data = jsondoc.loads(line)
        except ValueError:
            continue
        if "ack" in data:
            writes.pop(data["ack"], None)
        elif "seq" in data:
            writes[data["seq"]] = Record(path, data["seq"], line)
    return [writes[k] for k in sorted(writes)]
