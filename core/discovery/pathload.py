"""Import a provider folder by path, as a package of its own.

Each folder becomes a synthetic package named after its resolved path
(``memhost_ext_<name>_<12 hex of sha256(path)>``), so relative imports between the folder's
modules work and two folders, even with the same provider name, never meet in ``sys.modules``.
Loads of one folder are serialised; a load that raises removes every module it added under that
package, so the next attempt starts clean instead of finding a half-built module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import threading
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

_PREFIX = "memhost_ext_"
_COMPLETE = "__memhost_loaded__"
_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()


class EntryModuleMissing(ImportError):
    """The module named by the manifest's entry is not in the folder."""


def package_name(name: str, folder: Path) -> str:
    """The synthetic package name for ``folder`` (resolved), e.g. ``memhost_ext_notes_1a2b…``."""
    digest = hashlib.sha256(str(folder.resolve()).encode("utf-8")).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name).lower() or "provider"
    return f"{_PREFIX}{safe}_{digest}"


def _lock(package: str) -> threading.RLock:
    with _locks_guard:
        return _locks.setdefault(package, threading.RLock())


def _ours(package: str) -> set[str]:
    return {key for key in list(sys.modules) if key == package or key.startswith(package + ".")}


def _make_package(package: str, folder: Path) -> ModuleType:
    init = folder / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            package, init, submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None
    else:
        spec = ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)
    return module


def load_module(folder: Path, module: str, *, name: str) -> ModuleType:
    """Import ``module`` (dotted, relative to ``folder``) from the folder's synthetic package.

    Raises :class:`EntryModuleMissing` when the folder has no such module, and whatever the
    folder's code raised otherwise; either way nothing this call added stays in ``sys.modules``.
    """
    folder = folder.resolve()
    package = package_name(name, folder)
    with _lock(package):
        existing = sys.modules.get(package)
        if existing is not None and getattr(existing, _COMPLETE, False):
            cached = sys.modules.get(f"{package}.{module}")
            if cached is not None:
                return cached
        before = _ours(package)
        importlib.invalidate_caches()
        try:
            if existing is None:
                existing = _make_package(package, folder)
            try:
                loaded = importlib.import_module(f"{package}.{module}")
            except ModuleNotFoundError as exc:
                if exc.name and (f"{package}.{module}" == exc.name
                                 or f"{package}.{module}".startswith(exc.name + ".")):
                    raise EntryModuleMissing(
                        f"no module {module!r} in {folder} (looked for "
                        f"{folder / Path(*module.split('.'))}.py)") from None
                raise
        except BaseException:
            for key in _ours(package) - before:
                sys.modules.pop(key, None)
            if package not in before:
                sys.modules.pop(package, None)
            raise
        setattr(existing, _COMPLETE, True)
        return loaded


def unload(name: str, folder: Path) -> None:
    """Forget every module of ``folder``'s synthetic package (a later load re-reads the files)."""
    package = package_name(name, folder)
    with _lock(package):
        for key in _ours(package):
            sys.modules.pop(key, None)


__all__ = ["EntryModuleMissing", "load_module", "package_name", "unload"]
