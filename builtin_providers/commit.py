"""One durable commit per memory write, and a memory file put right after a crash.

A write (always under the memory file's lock, see :mod:`memhost.builtin_providers.store`):

1. takes the temp file the new text will go to, made before the lock (:meth:`StoreFile.prepare`)
   or now, and writes the text to it (its blocks allocated first, see
   :func:`~memhost.builtin_providers.tempfiles.preallocate`), without a sync: the journal holds
   the text. Where the last write swapped the memory file out, that file is the temp file, and
   is written over (:func:`~memhost.builtin_providers.tempfiles.reuse`);
2. appends one record to the file's journal (:mod:`memhost.builtin_providers.journal`): the new
   text (as the change to the entries the journal says the file holds, or whole, see
   :func:`~memhost.builtin_providers.journal_records.with_text`), the archive records of what
   the write replaced or removed, the metadata it set, the identity (inode, size, times) of
   the file as it was read and that of the temp file as written; then syncs it. **That sync is
   the commit**, and the only one on the way: from here the write survives a crash or a power
   cut;
3. swaps the temp file with the memory file, or renames it over the memory file
   (:mod:`memhost.builtin_providers.replacing`).

If the process dies between 2 and 3, or a power cut undoes the swap (or keeps it but not all of
the temp file's data: it then holds nothing, ranges of zeros where allocated blocks were never
written, or a reused file's older bytes), the file no longer holds the text of the journal's
last record. The next write, or session start, then puts it right (:meth:`StoreFile.settle`),
but only when nothing else changed the file since: it still has exactly the identity the record
says it was read with (the swap never happened), or it is the very file the record wrote, with
the size and modification time the write left it with, or holding nothing or the record's
bytes with zeroed ranges. Any other difference is an edit made outside memhost after the write,
and it is left alone.

The folder fsync that made each rename durable now runs at each checkpoint, when the journal's
records are folded into the long-lived files and dropped (:meth:`StoreFile.checkpoint`): until
then the journal is what keeps a write that a power cut took out of the folder.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memhost import locking
from memhost.builtin_providers import crashpoints, entrymeta, journal, journal_records
from memhost.builtin_providers.archive import Archive
from memhost.builtin_providers.entries import DELIMITER, remember_committed
from memhost.builtin_providers.replacing import hold, swap
from memhost.builtin_providers.tempfiles import Prepared, drop, fill, keep, reuse, temp_file
from memhost.files import atomic_write_bytes, fsync_dir, read_file, sweep_orphaned_temp_files

log = logging.getLogger(__name__)

#: A checkpoint sizes the next journal generation to hold this many of the largest records seen.
RECORDS_PER_JOURNAL = 128
#: A store closed by a process that wrote to it folds its journal in when it holds more records
#: than this (:meth:`StoreFile.fold_in`).
FOLD_AT_CLOSE = 16
#: How long a close waits for another writer's lock before it leaves the fold to a later write.
FOLD_LOCK_TIMEOUT = 0.5


def _unwritten_copy(data: bytes, text: str) -> bool:
    """Whether ``data`` is what is left of ``text`` written to a file whose blocks did not all
    reach the disk: nothing at all, or ``text``'s bytes with some ranges still zero (the
    allocated blocks a power cut left unwritten)."""
    if not data.strip(b"\0"):
        return True
    expected = text.encode("utf-8")
    return len(data) == len(expected) and all(
        got == want or got == 0 for got, want in zip(data, expected))


def identity(found: os.stat_result) -> list[int]:
    return [found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]


class StoreFile:
    """The write protocol of one memory file (``MEMORY.md`` or ``USER.md``)."""

    def __init__(self, path: Path, archive: Archive, *, journal_bytes: int | None = None) -> None:
        self.path = path
        self._name = os.fspath(path)  # for the os calls on every write
        self._folder = os.fspath(path.parent)
        self._prefix = f".{path.name}."
        self.journal = journal.path_for(path)
        self.archive = archive
        self.journal_bytes = journal_bytes
        #: The bytes this process last wrote to the file and the text they encode: the next
        #: write reads them back, and finding them unchanged needs no decoding or hashing.
        self._written: tuple[bytes, str] | None = None
        self._open = True
        self._wrote = False  # whether this process appended to the journal
        self._sweep_due = True  # see sweep()
        #: Descriptors of files this process's writes replaced, held until let_go().
        self._replaced: list[int] = []
        #: The temp name the last write's swap left the replaced file under (tempfiles.reuse).
        self._spare: str | None = None
        self._swaps = True  # False once the filesystem refused a swap: rename instead
        journal.retain(self.journal)

    def close(self) -> None:
        """Let go of the journal's descriptor (kept open between writes); a later use reopens
        it. Closing twice is harmless."""
        self.let_go()
        spare, self._spare = self._spare, None
        if spare is not None:
            drop(spare)
        if self._open:
            self._open = False
            journal.release(self.journal)

    def finish(self, prepared: Prepared) -> None:
        """After a write, once the lock is let go: the temp file it prepared and did not use
        goes (or is kept again, see :meth:`Prepared.discard`), and the files it replaced are
        closed (:meth:`let_go`)."""
        if (unused := prepared.discard()) is not None:
            self._keep_spare(unused)
        self.let_go()

    def _keep_spare(self, name: str) -> None:
        """Keep ``name`` (a file a swap left) for the next write to reuse; one is enough, so
        one another thread's write kept meanwhile goes."""
        keep(name)
        other, self._spare = self._spare, name
        if other is not None and other != name:
            drop(other)

    def let_go(self) -> None:
        """Close the files the last write renamed over (:func:`.replacing.hold`): after the lock
        is let go, where the kernel's freeing of their blocks delays no other writer."""
        replaced = self._replaced
        while replaced:
            fd = replaced.pop()
            if fd >= 0:
                os.close(fd)

    def sweep(self) -> None:
        """Delete temp files a killed writer left beside the file (its data, sidecar or backups):
        at this object's first write, then at the first after each checkpoint (the caller holds
        the lock, and nothing of its own write exists yet).

        Every temp file for the file is written under that lock, so none of them can be in a
        live writer's hands (one made before the lock, or the file a writer's last swap left for
        its next write, may be kept for later: its writer, finding it gone, makes another);
        without this they pile up after each crash. A writer killed while
        this process lives leaves at most one, until the next checkpoint (~128 writes at most);
        listing the folder on every write cost more than any other step before the commit.
        (The one exception is the scan-verdict cache, :mod:`verdicts`, saved without the lock:
        a temp file of it deleted here only makes that save fail, and that cache is losable.)
        Other temp files in the folder (the usage history's) go once their writer's process is
        gone (:func:`memhost.files.temp_writer_gone`).
        """
        if self._sweep_due:
            sweep_orphaned_temp_files(self._folder, held_prefix=self._prefix)
            self._sweep_due = False

    # -- reading ------------------------------------------------------------------------------

    def read(self) -> tuple[bytes | None, list[int] | None]:
        """The file's bytes and identity; ``(None, None)`` when absent. ``OSError`` otherwise."""
        try:
            data, found = read_file(self._name)
        except FileNotFoundError:
            return None, None
        return data, identity(found)

    def written_text(self, data: bytes | None) -> str | None:
        """The text of ``data`` when it is what this process last wrote to the file (the same
        string object, its hash already known to the caches keyed by it), else None."""
        written = self._written
        return written[1] if written is not None and written[0] == data else None

    def unsettled(self, text: str | None) -> bool:
        """Whether ``text`` (the file as read without the lock; ``None`` when it could not be
        decoded) may lack a committed write."""
        committed = journal.newest(self.journal)
        return committed is not None and committed != text

    def settle(self, text: str | None, data: bytes | None, ident: list[int] | None) -> str | None:
        """Finish the last committed write if it did not reach the file (the caller holds the
        lock); the text the file holds afterwards. ``text`` is ``data`` decoded (``None`` when
        it is not valid UTF-8, which a write cut short by a power cut can leave)."""
        committed = journal.state(self.journal).committed
        owed = committed.text()
        last = committed.record
        if owed is None or last is None:
            return text
        if owed == text:
            remember_committed(text, committed.entries())
            return text
        if ident is None:
            lost = last.get("before") is None  # the write created the file; it is gone again
        else:
            # The very file the record wrote, as it left it (size and modification time) or
            # holding nothing where its text should be: its data never reached the disk.
            lost = ident == last.get("before") or (ident[0] == last.get("ino") and (
                ident[1:3] == last.get("wrote") or _unwritten_copy(data or b"", owed)))
        if not lost:
            return text  # edited outside memhost since: that edit stands
        log.warning("%s did not hold its last committed write (the writing process stopped "
                    "before replacing the file, or a power cut undid it); writing it now "
                    "from %s", self.path, self.journal.name)
        atomic_write_bytes(self.path, owed.encode("utf-8"))
        remember_committed(owed, committed.entries())
        return owed

    # -- writing ------------------------------------------------------------------------------

    def _destination(self) -> tuple[Path, str, str]:
        """Where the new text goes: the file, its temp files' prefix, their folder."""
        if os.path.islink(self._name):  # a file kept elsewhere (a dotfiles repository) stays linked
            target = Path(os.path.realpath(self._name))
            return target, f".{target.name}.", os.fspath(target.parent)
        return self.path, self._prefix, self._folder

    def prepare(self) -> Prepared:
        """The temp file the next write's text will go to, made before the write takes the
        lock. Creating a file changes the folder, which other processes' writers are changing
        too (their lock files, their own temp files): under contention that step took the lock
        holder ~60–150 µs, and made outside the lock it left eight writers ~15–30% faster.
        An empty one when it cannot be made now (no folder yet): the write makes its own. A
        sweep under the lock may delete it meanwhile; the write then makes another
        (:meth:`Prepared.take`).
        """
        spare, self._spare = self._spare, None
        if spare is not None and (reused := reuse(spare)) is not None:
            return reused
        try:  # beside the file itself: a write to a linked file takes none (Prepared.take)
            return Prepared(*temp_file(self._folder, self._prefix))
        except OSError:
            return Prepared(-1, "")

    def commit(self, before: list[int] | None, text: str, *, archived: list[dict[str, Any]],
               meta: dict[str, dict[str, Any] | None], now: float,
               entries: list[str], current: entrymeta.View,
               pieces: list[str] | None = None, prepared: Prepared | None = None) -> None:
        """Make ``text`` the file's content, with its archive records and metadata, in one
        durable commit (the caller holds the lock; ``entries`` are the file's entries before
        this write, for a checkpoint; ``current`` the metadata they have; ``pieces``, when
        given, the entries ``text`` joins; ``prepared``, the temp file :meth:`prepare` made).
        ``OSError`` when it could not: then nothing changed."""
        target, prefix, folder = self._destination()
        if current.problem is not None:
            entrymeta.set_aside_if_corrupt(self.path)
        data = self._encoded(text)
        if pieces is None:
            pieces = text.split(DELIMITER) if text else []  # what commits: canonical entries
        taken = prepared.take(folder, prefix) if prepared is not None else None
        fd, tmp, held = taken if taken is not None else (*temp_file(folder, prefix), 0)
        renamed = committed = False
        try:
            crashpoints.reached("temp-created")
            written = fill(fd, data, held)
            os.close(fd)  # and with it a reused file's flock (tempfiles.reuse)
            fd = -1
            crashpoints.reached("temp-written")
            record: dict[str, Any] = {"t": now, "before": before, "ino": written.st_ino,
                                      "wrote": [written.st_size, written.st_mtime_ns]}
            if archived:
                record["archive"] = archived
            if meta:
                record["meta"] = meta
            # What puts the metadata back if the file cannot be replaced after the commit.
            undo = {"cancel": True, "meta": {key: current.get(key) for key in meta}}
            self._append(record, entries, (text, pieces))
            committed = True
            crashpoints.reached("journal-synced")
            kept = self._replace(tmp, target, swappable=before is not None and target is self.path)
            renamed = True
            if kept is not None:
                self._keep_spare(kept)
            if not data.startswith(codecs.BOM_UTF8):  # read back, a BOM would be dropped
                self._written = (data, text)
            crashpoints.reached("renamed")
        except BaseException:
            if fd >= 0:
                os.close(fd)
            if not renamed:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                if committed:
                    self._cancel(undo)
            raise

    def _encoded(self, text: str) -> bytes:
        """``text`` as UTF-8. An add makes the text this process last wrote with one more entry
        at its end: only that end is encoded, the rest copied from the bytes written (encoding
        the whole of a 20 KB file, "§" and all, took ~17 µs; the copy ~1)."""
        written = self._written
        if written is not None and len(text) > len(written[1]) and text.startswith(written[1]):
            return written[0] + text[len(written[1]):].encode("utf-8")
        return text.encode("utf-8")

    def _replace(self, tmp: str, target: Path, *, swappable: bool) -> str | None:
        """Put the temp file in the memory file's place: swapped with it where it can be
        (:func:`.replacing.swap`), which leaves the replaced file under ``tmp``, returned for
        the next write to reuse; else renamed over it (None)."""
        if swappable and self._swaps:
            try:
                if swap(tmp, self._name):
                    return tmp
                self._swaps = False  # this platform or filesystem cannot: rename from now on
            except FileNotFoundError:
                pass  # the file went since it was read: there is nothing to swap with
        replaced = hold(target)
        try:
            os.replace(tmp, target)
        finally:
            self._replaced.append(replaced)
        return None

    def note_metadata(self, meta: dict[str, dict[str, Any] | None], entries: list[str]) -> None:
        """Record metadata alone (a pin, a confirmation), durably; the caller holds the lock."""
        entrymeta.set_aside_if_corrupt(self.path)
        self._append({"meta": meta}, entries)

    def _append(self, record: dict[str, Any], entries: list[str],
                wrote: tuple[str, list[str]] | None = None) -> None:
        """Append ``record`` (with the text ``wrote`` sets, when given), checkpointing first
        when the journal is full or holds :data:`RECORDS_PER_JOURNAL` records."""
        self._wrote = True
        current = journal.state(self.journal, writable=True, reread=False)
        if not current.gen:
            current = journal.start(self.journal, size=self._size(0), gen=1)
        try:
            if current.records >= RECORDS_PER_JOURNAL:
                raise journal.Full("a checkpoint is due")
            journal.append(self.journal,
                           journal_records.with_text(record, current.committed, entries, wrote),
                           wrote=wrote, on_written=lambda: crashpoints.reached("journal-written"))
        except journal.Full:
            # A new generation starts with the whole text.
            whole = journal_records.with_text(record, None, entries, wrote)
            self.checkpoint(entries, needed=len(journal.encode(current.gen or 1, whole)))
            journal.append(self.journal, whole, wrote=wrote,
                           on_written=lambda: crashpoints.reached("journal-written"))

    def _cancel(self, undo: dict[str, Any]) -> None:
        try:
            journal.append(self.journal, undo)
        except (OSError, journal.Full) as exc:  # the next write will finish this one instead
            log.error("could not cancel a write to %s that failed after its commit (%s); the "
                      "next write will complete it", self.path, exc)

    def fold_in(self, checkpoint: Callable[[float], None]) -> None:
        """Checkpoint a journal of more than :data:`FOLD_AT_CLOSE` records when this process
        wrote to it: what a store does as it is closed. ``checkpoint(timeout)`` takes the lock
        (waiting at most ``timeout`` seconds) and checkpoints.

        A session start checks every record since the last checkpoint (journal.newest): ~0.3 ms
        a file for a journal of ~80 records of 3 KB, against next to nothing for a folded one. A
        process that wrote pays the checkpoint's syncs once, as it closes, so the next process
        starts from few records; one killed before it closes leaves them to the next write. It
        never waits long for the lock and never raises: a failure is logged and the journal
        stays as it is, which loses nothing."""
        if not self._wrote or journal.state(self.journal).records <= FOLD_AT_CLOSE:
            return
        try:
            checkpoint(FOLD_LOCK_TIMEOUT)
            self._wrote = False
        except locking.Timeout:
            log.debug("%s is locked by another writer; its journal is folded in later", self.path)
        except Exception as exc:  # noqa: BLE001 - a close has no one to hand an error to
            log.warning("could not fold %s into %s as the store closed (%s); the next write "
                        "will", self.journal.name, self.path.name, exc)

    # -- checkpoints --------------------------------------------------------------------------

    def checkpoint(self, entries: list[str], *, needed: int = 0) -> None:
        """Fold the journal into the archive, the metadata sidecar and the memory file, all
        fsynced, then start a new generation (the caller holds the lock; ``entries`` are the
        file's). Each step can be repeated: a crash between two loses nothing."""
        current = journal.state(self.journal, writable=True)
        if current.archive:
            self.archive.append_records(current.archive)
        crashpoints.reached("checkpoint-archived")
        entrymeta.fold(self.path, current.meta, entries)
        crashpoints.reached("checkpoint-folded")
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(self.path.parent)
        crashpoints.reached("checkpoint-synced")
        journal.start(self.journal, size=self._size(max(current.largest, needed)),
                      gen=current.gen + 1)
        crashpoints.reached("checkpoint-restarted")
        self._sweep_due = True  # at the next write's start: this write's temp file exists now

    def _size(self, largest: int) -> int:
        if self.journal_bytes is not None:
            return max(self.journal_bytes, 4 * largest)
        wanted = min(RECORDS_PER_JOURNAL * largest, journal.MAX_BYTES)
        return max(wanted, journal.INITIAL_BYTES, 4 * largest)
