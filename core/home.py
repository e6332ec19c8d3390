"""Where memhost keeps its files.

The home is resolved on every call, never frozen at import: a host that points ``MEMHOST_HOME``
somewhere else mid-process (tests, profile switches) must see the new place at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

HOME_ENV = "MEMHOST_HOME"


def memhost_home(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the memhost home: ``override``, else ``$MEMHOST_HOME`` (stripped, non-empty),
    else the platform's user data directory for memhost."""
    if override is not None and str(override).strip():
        return Path(override).expanduser()
    env = os.environ.get(HOME_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("memhost", appauthor=False))


def memories_dir(home: Path) -> Path:
    return home / "memories"


def config_path(home: Path) -> Path:
    return home / "config.toml"


def env_path(home: Path) -> Path:
    return home / ".env"
