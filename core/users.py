"""Users of one home: each user's memory lives in ``<home>/users/<user_id>/``.

A user id becomes a folder name (and, in a shared database, a column value), so it is checked
before anything touches the disk: no path tricks, nothing a file system treats specially. The
home itself keeps what users share: ``config.toml``, ``.env`` and provider folders.
"""

from __future__ import annotations

import re
from pathlib import Path

from memhost.errors import MemhostError
from memhost.files import ensure_private_dir

USERS_DIR = "users"
MAX_USER_ID = 64
# Lower case only: macOS and Windows fold case in file names, so 'Alice' and 'alice' would share
# one folder, and so one memory.
_USER_ID = re.compile(r"[a-z0-9][a-z0-9._@-]*")
ALLOWED = ("1 to 64 characters: lower-case letters, digits, '.', '_', '-' and '@', starting "
           "with a letter or a digit, and no '..'")


class UserIdError(MemhostError, ValueError):
    """A user id that cannot name a user's folder; the message says what is allowed."""


def check_user_id(user_id: object) -> str:
    """``user_id`` when it is a valid user id, else :class:`UserIdError` saying what is."""
    if not isinstance(user_id, str):
        raise UserIdError(f"a user id must be text, not {type(user_id).__name__}; use {ALLOWED}")
    if not user_id:
        raise UserIdError(f"a user id cannot be empty; use {ALLOWED}")
    if len(user_id) > MAX_USER_ID:
        raise UserIdError(f"user id {user_id[:16]!r}... is {len(user_id)} characters long; use "
                          f"{ALLOWED}")
    if not _USER_ID.fullmatch(user_id) or ".." in user_id:
        # repr(): a control character in the id is shown escaped, never sent to the terminal.
        raise UserIdError(f"user id {user_id!r} is not allowed (no path separators, spaces, "
                          f"control characters or upper case); use {ALLOWED}")
    return user_id


def user_home(home: Path, user_id: str) -> Path:
    """The folder of ``user_id``'s memory under ``home`` (checked, not created)."""
    return Path(home) / USERS_DIR / check_user_id(user_id)


def open_user_home(home: Path, user_id: str) -> Path:
    """:func:`user_home`, created (0700, as is ``<home>/users/``) if it is not there yet."""
    folder = user_home(home, user_id)
    ensure_private_dir(folder.parent)
    return ensure_private_dir(folder)


def list_users(home: Path) -> list[str]:
    """The users with a folder under ``home``, sorted (folders that are no user id left out)."""
    try:
        names = [p.name for p in (Path(home) / USERS_DIR).iterdir() if p.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    valid = []
    for name in names:
        try:
            valid.append(check_user_id(name))
        except UserIdError:
            continue
    return sorted(valid)
