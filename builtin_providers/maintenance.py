"""The store's writes that are not the model's own edits.

A repair's rewrite of the whole entry list (``memhost memory fix``), an archived entry put back,
metadata marks (pin, confirm, review date) and, for a staged write, which entry ``old_text``
means. :class:`Maintenance` is mixed into :class:`memhost.builtin_providers.store.MemoryStore`,
which provides the write protocol (``_mutate``, ``_read_for_write``) and the archive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.checks import WriteChecks
from memhost.builtin_providers.commit import StoreFile
from memhost.builtin_providers.entries import FILENAMES, parse
from memhost.builtin_providers.outcomes import (
    Change,
    OpError,
    Outcome,
    Unreadable,
    fail,
)
from memhost.files import locked


class Maintenance(WriteChecks):
    """See the module docstring."""

    archive: Any
    lock_timeout: float
    _files: dict[str, StoreFile]
    _mutate: Callable[..., Outcome]
    _read_for_write: Callable[[str], tuple[str, list[int] | None]]
    entries: Callable[[str], list[str]]
    add: Callable[..., Outcome]  # (target, content, *, origin, session_id)

    def resolve(self, target: str, old_text: str, action: str = "replace") -> Outcome:
        """Find the entry ``old_text`` designates without changing anything (for staging)."""
        try:
            old = self.clean_old_text(old_text)
            entries = self.entries(target)
            return Outcome({"success": True, "matched_entry": entries[
                self.locate(target, entries, old, action, None)]})
        except OpError as exc:
            return exc.outcome
        except Unreadable as exc:
            return self.unreadable(target, exc)

    def replace_all(self, target: str, expected: list[str], entries: list[str], *,
                    origin: str = "cli", session_id: str = "") -> Outcome:
        """Replace the whole entry list with ``entries`` (``memhost memory fix``); every entry it
        drops is archived. Refused when the file no longer holds ``expected``."""
        def op(current: list[str]) -> tuple[list[str], str, dict[str, Any], list[Change]]:
            if current != expected:
                raise OpError(f"{FILENAMES[target]} changed since the repair was planned; "
                               "nothing was changed. Run it again.", counts=False)
            changes = [Change("remove", target, "", e) for e in current if e not in entries]
            changes += [Change("add", target, e) for e in entries if e not in current]
            return list(entries), "Entries rewritten.", {}, changes

        return self._mutate(target, op, check_drift=False, origin=origin, session_id=session_id)

    def restore(self, archive_id: str, *, origin: str = "restore", session_id: str = "") -> Outcome:
        """Put an archived entry back into the store it came from."""
        record = self.archive.get(archive_id)
        if record is None:
            return fail(f"No archived entry has the id '{archive_id}'. "
                         "List them with `memhost memory history`.")
        outcome = self.add(record.target, record.text, origin=origin, session_id=session_id)
        if outcome.ok:
            outcome.response["restored_id"] = archive_id
        return outcome

    def update_metadata(self, target: str, entry: str, **fields: Any) -> None:
        """Set sidecar fields (``pinned``, ``confirmed``, ``review_after``…) of one entry."""
        path = self.path(target)
        with locked(path, self.lock_timeout):
            raw, _ = self._read_for_write(target)
            entries = parse(raw)
            if entry not in entries:
                raise ValueError("that entry is no longer in the store")
            key = entrymeta.entry_key(entry)
            record = dict(entrymeta.view(path).get(key) or {})
            for name, value in fields.items():
                if value is None:
                    record.pop(name, None)
                else:
                    record[name] = value
            self._files[target].note_metadata({key: record}, entries)

