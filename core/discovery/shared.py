"""How a manager finds and configures its provider: afresh, or once for all of a hub's users.

A manager on its own finds the provider ``memory.provider`` names (a scan of the bundled folder,
the user's folder and the entry points, reading each ``plugin.toml``) when it opens, and reads
the provider's runtime config (the schema, ``config.toml``, the env store) when it opens and at
each session start, so a setting changed between sessions is what the next session gets.

A :class:`memhost.MemoryHub` opens a manager per user, hundreds in a busy gateway, from one home
it reads once (``config.toml`` included), so :class:`SharedProviderReads` does those reads once:
the provider found on the first opening and its config read then are what every user's manager
gets. Each still gets its own provider object (a provider serves one user) and its own deep copy
of the config (a provider may change what it is given). A provider that cannot be found is not
kept: the next opening looks again, and says why again.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

from memhost.discovery.candidates import Candidate
from memhost.discovery.loading import load_candidate
from memhost.discovery.scan import find_candidate, runtime_config


class ProviderReads:
    """Every read made afresh: what a manager on its own does."""

    def load(self, name: str, home: Path, *, timeout: float) -> Any:
        """A new provider object for ``name`` (:func:`memhost.discovery.load_provider`)."""
        return load_candidate(self.candidate(name, home), timeout=timeout)

    def candidate(self, name: str, home: Path) -> Candidate:
        return find_candidate(name, home)

    def config(self, name: str, home: Path, table: dict[str, Any]) -> dict[str, Any]:
        """What the provider's hooks get as ``config`` (:func:`memhost.discovery.runtime_config`)."""
        return runtime_config(name, home, table)


class SharedProviderReads(ProviderReads):
    """The provider found, and its config read, once for every manager that asks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._candidates: dict[tuple[str, Path], Candidate] = {}
        self._configs: dict[tuple[str, Path], dict[str, Any]] = {}

    def candidate(self, name: str, home: Path) -> Candidate:
        key = (name, home)
        with self._lock:
            found = self._candidates.get(key)
            if found is None:
                found = self._candidates[key] = super().candidate(name, home)
        return found

    def config(self, name: str, home: Path, table: dict[str, Any]) -> dict[str, Any]:
        key = (name, home)
        with self._lock:
            read = self._configs.get(key)
            if read is None:
                read = self._configs[key] = super().config(name, home, table)
        return copy.deepcopy(read)


__all__ = ["ProviderReads", "SharedProviderReads"]
