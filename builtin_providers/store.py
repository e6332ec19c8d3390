"""The two memory files and every way they change.

Each mutation runs under the file's sidecar lock (one acquisition): a checked read of what is on
disk now (a file that exists but cannot be read refuses the write, since treating it as empty
would wipe it), finishing a committed write a crash kept from the file, the drift guard, the
operation on the fresh entry list, then one durable commit of the new text with the archive
records of whatever it replaces or removes and its metadata (:mod:`.commit`), and the atomic
replace of the file (its temp file made before the lock). A success never echoes the store.

The checks and refusals are in :mod:`.checks`, batches in :mod:`.batch`, the writes that are
not the model's own edits in :mod:`.maintenance`, the answers in :mod:`.outcomes`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memhost import locking
from memhost.builtin_providers import (
    batch,
    budget,
    crashpoints,
    entrymeta,
    snapshot,
    verdicts,
)
from memhost.builtin_providers.archive import Archive, new_id
from memhost.builtin_providers.checks import CURATOR_ORIGIN
from memhost.builtin_providers.commit import StoreFile
from memhost.builtin_providers.entries import (
    FILENAMES,
    TARGETS,
    drift_reason,
    joined_length,
    parse,
    remember,
    with_replaced,
)
from memhost.builtin_providers.maintenance import Maintenance
from memhost.builtin_providers.outcomes import (
    SAVED_NOTE,
    Change,
    Listener,
    OpError,
    Outcome,
    Unreadable,
    decoded,
    fail,
)
from memhost.builtin_providers.snapshot import TITLES, Snapshot, render_block, usage_text
from memhost.builtin_providers.tempfiles import Prepared
from memhost.files import locked, read_current
from memhost.home import memories_dir
from memhost.security.screen import Screen

log = logging.getLogger(__name__)

# Names other modules import from here.
__all__ = ["CURATOR_ORIGIN", "FILENAMES", "SAVED_NOTE", "TARGETS", "Change", "MemoryStore",
           "Outcome", "Unreadable"]


class MemoryStore(Maintenance):
    """``<home>/memories/MEMORY.md`` (target ``memory``) and ``USER.md`` (target ``user``)."""

    def __init__(self, home: Path, *, memory_char_limit: int = 2200, user_char_limit: int = 1375,
                 memory_enabled: bool = True, user_profile_enabled: bool = True,
                 clock: Callable[[], float] = time.time, lock_timeout: float = 30.0,
                 journal_bytes: int | None = None) -> None:
        self.home = home
        self.folder = memories_dir(home)
        self._paths = {target: self.folder / name for target, name in FILENAMES.items()}
        self.archive = Archive(self.folder)
        self._files = {target: StoreFile(path, self.archive, journal_bytes=journal_bytes)
                       for target, path in self._paths.items()}
        self.limits = {"memory": memory_char_limit, "user": user_char_limit}
        self.enabled = {"memory": memory_enabled, "user": user_profile_enabled}
        self.clock = clock
        self.lock_timeout = lock_timeout
        self._listeners: list[Listener] = []
        #: Scores entries for the write path and the snapshot (``[injection]``; the manager sets
        #: it from config, with the model judge and the turn's taint).
        self.screen = Screen()

    @classmethod
    def from_settings(cls, home: Path, settings: Any, **kwargs: Any) -> MemoryStore:
        """Build from a ``memhost.config.MemorySettings``."""
        return cls(home, memory_char_limit=settings.memory_char_limit,
                   user_char_limit=settings.user_char_limit,
                   memory_enabled=settings.memory_enabled,
                   user_profile_enabled=settings.user_profile_enabled, **kwargs)

    # -- reading -------------------------------------------------------------------------------

    def path(self, target: str) -> Path:
        try:
            return self._paths[target]
        except KeyError:
            raise ValueError(f"unknown memory target {target!r}; use 'memory' or 'user'") from None

    def read_raw(self, target: str) -> str:
        """The file's text; ``""`` when absent; :class:`Unreadable` when present but unreadable."""
        try:
            data, _ = read_current(self.path(target))
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise Unreadable(f"{exc.strerror or exc}") from None
        return decoded(data)

    def _read_for_write(self, target: str) -> tuple[str, list[int] | None]:
        """Under the lock: the file's text and identity, a committed write a crash kept from
        it put right first (:meth:`StoreFile.settle`)."""
        try:
            data, ident = self._files[target].read()
        except OSError as exc:
            raise Unreadable(f"{exc.strerror or exc}") from None
        raw: str | None = self._files[target].written_text(data)
        problem = None
        if raw is None:
            try:
                raw = "" if data is None else decoded(data)
            except Unreadable as exc:  # what a power cut mid-write leaves may still be settled
                raw, problem = None, exc
        settled = self._files[target].settle(raw, data, ident)
        if settled is None:
            assert problem is not None
            raise problem
        if settled is not raw:
            data, ident = self._files[target].read()
        return settled, ident

    def metadata_problems(self) -> list[str]:
        """What is wrong with the enabled stores' metadata (a corrupt sidecar kept aside...)."""
        return [p for target in TARGETS if self.enabled[target]
                for p in entrymeta.problems(self.path(target))]

    def checkpoint(self, target: str, *, timeout: float | None = None) -> None:
        """Fold the journal of ``target`` into the archive and the sidecar now (it happens by
        itself when the journal is full, and as a store that wrote to a long one is closed)."""
        with locked(self.path(target), self.lock_timeout if timeout is None else timeout):
            raw, _ = self._read_for_write(target)
            self._files[target].checkpoint(parse(raw))

    def entries(self, target: str) -> list[str]:
        return parse(self.read_raw(target))

    def usage(self, target: str, entries: list[str] | None = None) -> str:
        entries = self.entries(target) if entries is None else entries
        return usage_text(joined_length(entries), self.limits[target])

    def snapshot(self) -> Snapshot:
        """Render both enabled stores as they are now (unreadable files render as empty)."""
        read = []
        for target in TARGETS:
            found = self._read_for_snapshot(target) if self.enabled[target] else None
            if found is not None:
                read.append((target, *found))
        # Both files' entries are scored before either is rendered, in the order that lets the
        # secret detector's engine build beside the scoring (snapshot.prepare).
        snapshot.prepare([list(fitted.shown) for _, _, _, fitted, _ in read], self.screen.policy)
        blocks: dict[str, str] = {}
        problems: list[str] = []
        for target, raw, entries, fitted, scans in read:
            shown_entries = list(fitted.shown)
            shown = render_block(target, shown_entries, fitted.limit, FILENAMES[target],
                                 self.screen.policy, self.reviewed(target, shown_entries))
            blocks[target] = budget.with_note(shown, fitted, FILENAMES[target], TITLES[target])
            if fitted.over:
                problems.append(budget.problem(fitted, FILENAMES[target]))
            if scans:
                verdicts.save(self.path(target), raw, entries)
        return Snapshot(**blocks, problems=tuple(problems))

    def _read_for_snapshot(self, target: str) -> tuple[str, list[str], budget.Fit, bool] | None:
        """``target``'s text, its entries, what of them fits the budget, and whether some entry
        has no saved verdict (it is scored when shown); None, with a warning, when it cannot be
        read."""
        try:
            try:
                raw: str | None = self.read_raw(target)
            except Unreadable:
                raw = None  # unless a crash cut a committed write short: settled below
            if self._files[target].unsettled(raw):  # a crash kept a committed write out
                with locked(self.path(target), self.lock_timeout):
                    raw, _ = self._read_for_write(target)
            if raw is None:
                raw = self.read_raw(target)  # raises Unreadable again
        except (Unreadable, OSError, locking.Timeout) as exc:
            log.warning("%s could not be read (%s); it is left out of this session's prompt",
                        self.path(target), exc)
            return None
        entries = parse(raw)
        # Verdicts a previous process saved: unchanged entries are not scanned again.
        scans = verdicts.recall(self.path(target), raw, entries)
        # Only what fits the budget goes into the prompt (see memhost.builtin_providers.budget).
        fitted = budget.fit(entries, self.limits[target])
        budget.warn(fitted, self.path(target))
        return raw, entries, fitted, scans

    def drift(self, target: str, raw: str | None = None) -> str | None:
        """Why the file (or ``raw``) would refuse replace/remove/batch, or ``None`` when clean.

        Entries the store wrote itself (they have sidecar metadata) are exempt from the blob
        rule, so a store whose limit was lowered below one entry can still shrink.
        """
        raw = self.read_raw(target) if raw is None else raw
        limit = self.limits[target]
        # Only an entry longer than the budget needs its metadata looked up. A record holding
        # only curation marks (pinned, review_after) set on a hand-added entry does not make the
        # store the entry's author.
        long = [e for e in parse(raw) if len(e) > limit]
        meta = entrymeta.view(self.path(target)) if long else None
        known = {e for e in long if entrymeta.written_by_store(entrymeta.for_entry(meta, e))}
        return drift_reason(raw, limit, known)

    def metadata(self, target: str) -> list[tuple[str, dict[str, Any]]]:
        """Each entry with its sidecar metadata (empty for entries added by hand)."""
        meta = entrymeta.load(self.path(target))
        return [(entry, entrymeta.for_entry(meta, entry)) for entry in self.entries(target)]

    def close(self) -> None:
        """Fold in a long journal this process wrote to (StoreFile.fold_in), then let
        go of the journals' descriptors; a write after this reopens them."""
        for target, file in self._files.items():
            file.fold_in(lambda wait, target=target: self.checkpoint(target, timeout=wait))
            file.close()

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(changes, origin, session_id)`` after every committed write."""
        self._listeners.append(listener)

    # -- operations ----------------------------------------------------------------------------

    def add(self, target: str, content: str, *, origin: str = "foreground",
            session_id: str = "") -> Outcome:
        try:
            entry = self.clean_content(content, "Content")
        except OpError as exc:
            return exc.outcome

        def op(entries: list[str]) -> tuple[list[str], str, dict[str, Any], list[Change]]:
            if entry in entries:
                return entries, "That entry is already saved; nothing was added.", {}, []
            after = [*entries, entry]
            self.check_budget(target, entries, after, (
                f"Adding this entry ({len(entry):,} chars) would exceed the budget. Make room in "
                "this same turn: merge overlapping entries with 'replace' or drop stale ones with "
                "'remove' (see current_entries), ideally as one 'operations' batch that also "
                "holds this add."))
            return after, "Entry added.", {}, [Change("add", target, entry)]

        return self._mutate(target, op, check_drift=False, origin=origin, session_id=session_id)

    def replace(self, target: str, old_text: str, content: str, *, matched_entry: str | None = None,
                origin: str = "foreground", session_id: str = "") -> Outcome:
        try:
            old = self.clean_old_text(old_text)
            entry = self.clean_content(content, "New content",
                                        empty_hint=" Use 'remove' to delete an entry.")
        except OpError as exc:
            return exc.outcome

        def op(entries: list[str]) -> tuple[list[str], str, dict[str, Any], list[Change]]:
            index = self.locate(target, entries, old, "replace", matched_entry)
            previous = entries[index]
            self.refuse_pinned(target, previous, origin)
            after = with_replaced(entries, previous, entry)
            self.check_budget(target, entries, after, (
                "This replacement would exceed the budget. Shorten the new text, or remove other "
                "stale entries in the same 'operations' batch (see current_entries)."))
            return after, "Entry replaced.", {"replaced_entry": previous}, [
                Change("replace", target, entry, previous)]

        return self._mutate(target, op, origin=origin, session_id=session_id)

    def remove(self, target: str, old_text: str, *, matched_entry: str | None = None,
               origin: str = "foreground", session_id: str = "") -> Outcome:
        try:
            old = self.clean_old_text(old_text)
        except OpError as exc:
            return exc.outcome

        def op(entries: list[str]) -> tuple[list[str], str, dict[str, Any], list[Change]]:
            index = self.locate(target, entries, old, "remove", matched_entry)
            previous = entries[index]
            self.refuse_pinned(target, previous, origin)
            after = entries[:index] + entries[index + 1:]
            return after, "Entry removed.", {"removed_entry": previous}, [
                Change("remove", target, "", previous)]

        return self._mutate(target, op, origin=origin, session_id=session_id)

    def apply_batch(self, target: str, operations: Sequence[Any], *, origin: str = "foreground",
                    session_id: str = "") -> Outcome:
        """All or nothing; the budget is checked against the final state only."""
        if not operations:
            return fail("The operations list is empty; nothing to apply.")
        prepared: list[batch.Prepared] = []
        for number, raw_op in enumerate(operations, 1):
            try:
                prepared.append(batch.prepare(self, number, raw_op))
            except OpError as exc:
                return exc.outcome
        return self._mutate(target, batch.edit(self, target, prepared, origin), origin=origin,
                            session_id=session_id)

    # -- machinery -----------------------------------------------------------------------------

    def _mutate(self, target: str, op: Callable[[list[str]], tuple[list[str], str, dict[str, Any], list[Change]]],
                *, check_drift: bool = True, origin: str, session_id: str) -> Outcome:
        path = self.path(target)
        prepared = self._files[target].prepare()  # its temp file, made before the lock
        try:
            with locked(path, self.lock_timeout):  # creates the folder (0700) if needed
                crashpoints.reached("locked")
                self._files[target].sweep()
                try:
                    raw, ident = self._read_for_write(target)
                except Unreadable as exc:
                    return self.unreadable(target, exc)
                except OSError as exc:  # the journal: whether a write is owed is unknown
                    return fail(f"Could not save {FILENAMES[target]}: {exc}. Nothing was "
                                 "changed; memory is as it was before this call.")
                if check_drift and (reason := self.drift(target, raw)):
                    return self.drift_refusal(target, raw, reason)
                entries = parse(raw)
                try:
                    after, message, extra, changes = op(entries)
                except OpError as exc:
                    return exc.outcome
                used = joined_length(after)
                if changes:
                    try:
                        self._commit(target, entries, after, changes, origin, session_id, ident,
                                     prepared)
                    except OSError as exc:
                        # Disk full, read-only folder...: the old file is in place and the
                        # commit, if made, cancelled; answer with an error instead of an
                        # exception the model never sees. (Archive records may remain; their
                        # entries are still live.)
                        return fail(f"Could not save {FILENAMES[target]}: {exc}. Nothing was "
                                     "changed; memory is as it was before this call.")
        except locking.Timeout:
            return fail(f"{FILENAMES[target]} is locked by another process (waited "
                         f"{self.lock_timeout:g}s). Nothing was changed; try again shortly.")
        except OSError as exc:
            # The lock could not be taken at all: the folder is not writable, or the lock file
            # is a symlink (refused, so its target is never touched). Nothing was read or written.
            return fail(f"Could not lock {FILENAMES[target]} for writing ({exc}). Nothing was "
                         f"changed. Check {self.folder} (permissions; the .lock file must be a "
                         "regular file) and retry.")
        finally:
            self._files[target].finish(prepared)  # what it prepared and replaced, unlocked
        if changes:  # not under the lock: no part of the write, and other writers wait for it
            self._note_usage(target, used)
        response = {
            "success": True, "done": True, "target": target,
            "usage": usage_text(used, self.limits[target]),
            "entry_count": len(after), "message": message, **extra, "note": SAVED_NOTE,
        }
        if changes:
            for listener in self._listeners:
                try:
                    listener(changes, origin, session_id)
                except Exception:  # a listener must never undo or hide a committed write
                    log.exception("memory write listener failed")
        return Outcome(response, changes)

    def _commit(self, target: str, before: list[str], after: list[str], changes: list[Change],
                origin: str, session_id: str, ident: list[int] | None,
                prepared: Prepared) -> None:
        now = self.clock()
        # The fields of an ArchivedEntry, built as the dict the journal record holds.
        archived = [{"id": new_id(), "time": now, "target": target, "action": c.action,
                     "text": c.previous, "session": session_id, "origin": origin}
                    for c in changes if c.previous is not None]
        current = entrymeta.view(self.path(target), reread=False)  # read by _read_for_write
        meta = entrymeta.written(current, changes, after, now=now, origin=origin,
                                 session_id=session_id)
        self._files[target].commit(ident, remember(after), archived=archived, meta=meta,
                                   now=now, entries=before, current=current, pieces=after,
                                   prepared=prepared)

    def _note_usage(self, target: str, used: int) -> None:
        """The fullness history behind doctor's trend (optional), once the lock is let go."""
        from memhost.review.curator import record_usage

        try:
            record_usage(self.folder, target, used, self.limits[target], self.clock())
        except (OSError, locking.Timeout) as exc:
            log.warning("could not update the usage history in %s: %s", self.folder, exc)
