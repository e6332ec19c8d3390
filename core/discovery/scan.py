"""Finding memory providers, and loading the one asked for.

Sources, in precedence order (the first one seen under a name wins; the rest are *shadowed*,
reported with their paths, never silently ignored):

1. bundled: ``<memhost.plugins>/<name>/`` — folders shipped with memhost;
2. user: ``<home>/plugins/<name>/``;
3. entry points: group ``memhost.providers`` of installed distributions.

A folder provider has a ``plugin.toml`` (see :mod:`memhost.discovery.manifest`); folders whose
names start with ``_`` or ``.`` are ignored. :func:`discover` reads manifests and entry-point
metadata only: no provider code runs. :func:`load_provider` imports and instantiates one provider
(see :mod:`memhost.discovery.loading`), and every way that can fail is a
:class:`~memhost.errors.ProviderError` saying exactly what failed; the failure is also kept as a
:class:`LoadFailure` record (with the traceback) for ``memhost doctor``.

Environment: ``MEMHOST_DISABLED_PROVIDERS=a,b`` blocks names; ``MEMHOST_STRICT_PROVIDERS=1`` makes
discovery raise on a broken provider instead of recording it (and the manager raise when the
configured provider cannot be used); ``MEMHOST_DISABLE_ENTRYPOINTS=1`` skips entry points.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from memhost.discovery.candidates import (
    DISABLED_ENV,
    Candidate,
    Discovery,
    LoadFailure,
    ProviderLoadError,
    make_failure,
    recorded_failures,
    recorded_items,
)
from memhost.discovery.freshness import Remembered, file_identity, import_path_state
from memhost.discovery.loading import has_hookimpls, instantiate, load_candidate
from memhost.discovery.manifest import (
    MANIFEST_NAME,
    NAME_PATTERN,
    RESERVED_NAMES,
    ManifestError,
    read_manifest,
)
from memhost.errors import ConfigError, ProviderError
from memhost.files import refuse_shared_dir

log = logging.getLogger("memhost.discovery")

ENTRY_POINT_GROUP = "memhost.providers"
STRICT_ENV = "MEMHOST_STRICT_PROVIDERS"
NO_ENTRYPOINTS_ENV = "MEMHOST_DISABLE_ENTRYPOINTS"
SCHEMA_FILE = "config_schema.py"
#: ``memory.provider`` values that mean "the builtin memory only".
BUILTIN_ONLY = frozenset({"", "builtin", "none"})
SOURCES = ("bundled", "user", "entrypoint")

_TRUE = {"1", "true", "yes", "on"}
_warned_shadows: set[tuple[str, str]] = set()


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def strict_mode() -> bool:
    return _env_flag(STRICT_ENV)


def entrypoints_enabled() -> bool:
    return not _env_flag(NO_ENTRYPOINTS_ENV)


def blocked_names() -> list[str]:
    """The names listed in ``MEMHOST_DISABLED_PROVIDERS`` (comma separated)."""
    return [n.strip() for n in os.environ.get(DISABLED_ENV, "").split(",") if n.strip()]


def bundled_root() -> Path:
    """The folder of the ``memhost.plugins`` package, where bundled provider folders live."""
    import memhost.plugins

    return Path(next(iter(memhost.plugins.__path__))).resolve()


def user_root(home: Path) -> Path:
    return Path(home) / "plugins"


# -- scanning -----------------------------------------------------------------------------------


def _scan_folders(root: Path, source: str) -> list[Candidate]:
    try:
        entries = sorted(root.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("cannot list %s provider folder %s: %s", source, root, exc)
        return []
    found = []
    for folder in entries:
        if folder.name.startswith(("_", ".")):
            continue
        try:
            if not folder.is_dir():
                continue
        except OSError:
            continue
        found.append(_folder_candidate(folder, source))
    return found


_folder_candidates: Remembered[Candidate] = Remembered()


def _folder_candidate(folder: Path, source: str, *, match_name: bool = True) -> Candidate:
    state = (file_identity(folder / MANIFEST_NAME), import_path_state())  # requires: installed?
    return _folder_candidates.get((str(folder), source, match_name), state, lambda: (
        _read_folder_candidate(folder, source, match_name=match_name)))


def _read_folder_candidate(folder: Path, source: str, *, match_name: bool) -> Candidate:
    from memhost.discovery.requirements import missing_requirements, pip_command

    try:
        manifest = read_manifest(folder)
        if match_name and manifest.name != folder.name:
            raise ManifestError(f"{folder / MANIFEST_NAME}: name = {manifest.name!r} does not "
                                f"match the folder name {folder.name!r}; make them the same")
    except ManifestError as exc:
        return Candidate(folder.name, source, folder, status="failed", reason=str(exc))
    missing = tuple(missing_requirements(manifest.requires))
    status, reason = "available", ""
    if missing:
        status = "unavailable"
        reason = (f"needs {', '.join(missing)}, not installed; install with: "
                  f"{pip_command(missing)}")
    return Candidate(manifest.name, source, folder, version=manifest.version,
                     description=manifest.description, entry=manifest.entry,
                     requires=tuple(manifest.requires), missing=missing, status=status,
                     reason=reason)


def _module_dir(module: str) -> Path | None:
    """The package folder holding ``module``, found from import metadata without importing it
    (``None`` for a top-level single-file module, which has no folder of its own)."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except Exception:  # a finder that cannot answer; the folder is then simply unknown
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    for part in parts[1:]:
        if (folder / part).is_dir():
            folder = folder / part
        elif (folder / f"{part}.py").is_file():
            break
        else:
            return None
    return folder


_entrypoint_candidates: Remembered[list[Candidate]] = Remembered()


def _scan_entrypoints() -> list[Candidate]:
    return list(_entrypoint_candidates.get("entry points", import_path_state(), _read_entrypoints))


def _read_entrypoints() -> list[Candidate]:
    import importlib_metadata

    found = []
    for ep in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        try:
            metadata = dist.metadata if dist is not None else None
            dist_name = (metadata.get("Name") if metadata is not None else None) or None
            dist_version = dist.version if dist is not None else None
            summary = (metadata.get("Summary") if metadata is not None else None) or ""
        except Exception as exc:  # unreadable metadata of one distribution
            log.warning("cannot read the metadata of the distribution providing entry point "
                        "%r: %s", ep.name, exc)
            dist_name, dist_version, summary = None, None, ""
        base = Candidate(ep.name, "entrypoint", None, dist_name, dist_version,
                         version=dist_version or "", description=summary, entry=ep.value,
                         entry_point=ep)
        if not NAME_PATTERN.match(ep.name) or ep.name.lower() in RESERVED_NAMES:
            found.append(_replace(base, status="failed", reason=(
                f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP!r} of {dist_name} "
                f"{dist_version} is not a valid provider name (letters, digits, '_' and '-'; "
                f"not {', '.join(sorted(RESERVED_NAMES))})")))
            continue
        found.append(_replace(base, path=_module_dir(ep.module)))
    return found


def _replace(candidate: Candidate, **changes: Any) -> Candidate:
    from dataclasses import replace

    return replace(candidate, **changes)


def discover(home: Path, *, bundled_dir: Path | None = None, entrypoints: bool | None = None,
             strict: bool | None = None) -> Discovery:
    """Every provider candidate, from manifests and entry-point metadata only.

    ``bundled_dir`` replaces the bundled folder (tests); ``entrypoints`` overrides
    ``MEMHOST_DISABLE_ENTRYPOINTS``; ``strict`` overrides ``MEMHOST_STRICT_PROVIDERS`` (a broken
    provider then raises :class:`ProviderError` instead of being recorded).
    """
    strict = strict_mode() if strict is None else strict
    use_entrypoints = entrypoints_enabled() if entrypoints is None else entrypoints
    blocked = blocked_names()
    blocked_keys = {b.casefold() for b in blocked}
    raw = _scan_folders(Path(bundled_dir) if bundled_dir else bundled_root(), "bundled")
    refuse_shared_dir(user_root(home), "the provider folder")  # its code runs as this user
    raw += _scan_folders(user_root(home), "user")
    if use_entrypoints:
        try:
            raw += _scan_entrypoints()
        except Exception as exc:  # broken metadata of one distribution must not hide folders
            log.warning("cannot read %r entry points: %s", ENTRY_POINT_GROUP, exc)
    winners: dict[str, Candidate] = {}
    shadowed: list[Candidate] = []
    failures: list[LoadFailure] = []
    for candidate in raw:
        if candidate.name.casefold() in blocked_keys:
            candidate = _replace(candidate, status="blocked",
                                 reason=f"blocked by {DISABLED_ENV}")
        winner = winners.get(candidate.name)
        if winner is not None:
            shadowed.append(_replace(candidate, status="shadowed", shadowed_by=winner.describe()))
            key = (candidate.name, candidate.describe())
            if key not in _warned_shadows:
                _warned_shadows.add(key)
                log.warning("memory provider %r from %s is shadowed by the one from %s (the first "
                            "source wins: bundled, then user, then entry points); rename one of "
                            "them to use both", candidate.name, candidate.describe(),
                            winner.describe())
            continue
        winners[candidate.name] = candidate
        if candidate.status == "failed":
            if strict:
                raise ProviderError(f"{candidate.reason} ({STRICT_ENV} is set)")
            failures.append(make_failure(candidate, candidate.reason))
    listed = {(f.name, f.source, f.path or f.distribution or "") for f in failures}
    current = {(c.name, c.source, str(c.path) if c.path else c.distribution or "")
               for c in winners.values()}
    failures += [f for key, f in recorded_items() if key in current and key not in listed]
    return Discovery(sorted(winners.values(), key=lambda c: c.name), shadowed, blocked, failures)


# -- names --------------------------------------------------------------------------------------


def known_names(home: Path, **options: Any) -> list[str]:
    """The names a ``memory.provider`` setting may use (besides ``builtin``)."""
    return discover(home, strict=False, **options).names()


def unknown_name_message(name: str, names: list[str], home: Path) -> str:
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if name.lower() in lowered and lowered[name.lower()] not in close:
        close.insert(0, lowered[name.lower()])
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    known = ", ".join(names) if names else "none found"
    return (f"no memory provider is named {name!r}.{hint} Known providers: {known}; "
            f"'builtin' means the builtin memory only. Provider folders go in "
            f"{user_root(home)}/<name>/ (see `memhost providers list`).")


def validate_provider_name(name: str, home: Path, **options: Any) -> str:
    """Check a ``memory.provider`` value against what was discovered.

    Returns the name to store (``""`` for the builtin memory only: ``""``, ``builtin`` and
    ``none``); raises :class:`ConfigError` for an unknown name, with the known names and close
    matches.
    """
    cleaned = name.strip()
    if cleaned.lower() in BUILTIN_ONLY:
        return ""
    names = known_names(home, **options)
    if cleaned not in names:
        raise ConfigError(f"memory.provider: {unknown_name_message(cleaned, names, home)}")
    return cleaned


def find_candidate(name: str, home: Path, **options: Any) -> Candidate:
    """The candidate ``name`` resolves to (:class:`ProviderError` for an unknown name, with the
    known names and close matches). Imports nothing."""
    found = discover(home, **options)
    candidate = found.get(name)
    if candidate is None:
        raise ProviderError(unknown_name_message(name, found.names(), home))
    return candidate


def schema_path(name: str, home: Path, **options: Any) -> Path | None:
    """The provider's ``config_schema.py``, or ``None`` when it has none. Imports nothing."""
    candidate = find_candidate(name, home, strict=False, **options)
    if candidate.path is None:
        return None
    path = candidate.path / SCHEMA_FILE
    return path if path.is_file() else None


# -- loading ------------------------------------------------------------------------------------


def import_timeout(home: Path) -> float:
    """``memory.provider_import_timeout`` of ``home``'s config (its default when unreadable)."""
    from memhost.config import read_config

    return read_config(home)[0].memory.provider_import_timeout


def load_provider(name: str, home: Path, *, timeout: float | None = None,
                  **options: Any) -> Any:
    """Import provider ``name`` and return its provider object, within ``timeout`` seconds
    (default: ``memory.provider_import_timeout``).

    Raises :class:`ProviderError` saying exactly what failed: an unknown name (with the known
    names and close matches), a blocked name, a broken manifest, a missing required package, an
    import that raised (with the error), an import that timed out, or no provider object in the
    module.
    """
    bound = import_timeout(home) if timeout is None else timeout
    return load_candidate(find_candidate(name, home, **options), timeout=bound)


def folder_candidate(folder: Path) -> Candidate:
    """A candidate for a provider folder given by path (source ``path``), outside discovery:
    its manifest is read and its requirements checked; the folder may have any name."""
    return _folder_candidate(Path(folder).resolve(), "path", match_name=False)


def load_path(folder: Path) -> Any:
    """Load the provider in ``folder`` (a folder with a ``plugin.toml``) by path."""
    return load_candidate(folder_candidate(folder))


# -- runtime config -----------------------------------------------------------------------------


def runtime_config(name: str, home: Path, table: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config a provider's hooks receive: with a ``config_schema.py``, the settings service's
    values (defaults, stored values, secrets from the env store); otherwise a copy of the raw
    ``[providers.<name>]`` table. A schema that cannot be used is logged and the raw table given."""
    from memhost.security.masking import remember_found

    raw = remember_found(copy.deepcopy(table or {}))
    try:
        path = schema_path(name, home)
    except ProviderError:
        return raw
    if path is None:
        return raw
    try:
        from memhost.schema.settings import SettingsService

        # Secret fields are remembered by the env store; a secret typed into another field is
        # remembered here, so it is masked wherever the provider's messages repeat it.
        return remember_found(dict(SettingsService(home).values(name)))
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        log.warning("memory provider %r: its config schema %s cannot be used (%s: %s); it gets the "
                    "raw [providers.%s] table instead", name, path, type(exc).__name__, exc, name)
        return raw


__all__ = [
    "BUILTIN_ONLY", "Candidate", "DISABLED_ENV", "Discovery", "ENTRY_POINT_GROUP", "LoadFailure",
    "ProviderLoadError", "discover", "find_candidate", "folder_candidate", "has_hookimpls",
    "instantiate", "import_timeout", "known_names", "load_candidate", "load_path",
    "load_provider", "recorded_failures", "runtime_config", "schema_path", "validate_provider_name",
]
