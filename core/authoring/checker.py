"""``memhost providers check``: load one provider in isolation and run it through its paces.

Each step is a :class:`Step` with ``PASS``, ``FAIL`` or ``SKIP``: the manifest, its requirements,
loading, hook implementations against the spec, tool schemas (normalised, no reserved names), the
config schema, ``check_available`` (with the network refused), then a scripted session
(``initialize``, ``prefetch``, ``sync_turn``, ``session_end``, ``shutdown``) in a scratch home,
against the scratch store the provider's ``scratch_config`` names (so the check's turn never
reaches the user's real store), each call within a time bound. Also :func:`availability`, the
lighter probe behind ``providers list --check`` and ``memhost doctor``.

The parts: :mod:`memhost.authoring.hookrunner` calls hooks in isolation,
:mod:`memhost.authoring.checks` holds the report and the checks after loading, and
:mod:`memhost.authoring.availability` the light probe; their public names stay importable here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pluggy

from memhost.authoring.availability import availability
from memhost.authoring.checks import (BOUNDS, FAIL, PASS, SESSION_ID, SKIP, TURN, Report, Step,
                                      check_available, check_schema, check_tools,
                                      prefetch_timeout, run_session)
from memhost.authoring.hookrunner import HookRunner, HookTimeout, error_text, no_network
from memhost.errors import MemhostError, ProviderError


def looks_like_path(target: str) -> bool:
    """Whether ``providers check`` was given a folder rather than a provider name."""
    return (os.sep in target or "/" in target or target in (".", "..")
            or target.startswith(("~", ".")))


def _config_for(name: str, home: Path, schema: Any, by_path: bool) -> dict[str, Any]:
    """The settings the provider is checked with: through its schema when it has one."""
    if schema is not None:
        from memhost.schema.settings import SettingsService

        service = SettingsService(home, schema_for=(lambda _n: schema) if by_path else None)
        return service.values(name)
    from memhost.config import load_config

    try:
        return dict(load_config(home).providers.get(name, {}))
    except MemhostError:
        return {}



def _origin(provider: Any) -> str:
    """``Class (file)`` for a provider object, with the real file, not the synthetic module."""
    import inspect

    subject = provider if inspect.ismodule(provider) else type(provider)
    try:
        where = inspect.getsourcefile(subject) or "?"
    except TypeError:
        where = "?"
    return f"{getattr(subject, '__qualname__', getattr(subject, '__name__', '?'))} ({where})"



def check_provider(target: str, home: Path, *, prefetch_bound: float | None = None,
                   scale: float = 1.0) -> Report:
    """Run every check on ``target`` (a provider name, or a path to a provider folder)."""
    from memhost import discovery

    report = Report(target)
    by_path = looks_like_path(target)
    # 1. manifest
    try:
        if by_path:
            candidate = discovery.folder_candidate(Path(target).expanduser())
        else:
            found = discovery.discover(home, strict=False)
            candidate = found.get(target)
            if candidate is None:
                raise ProviderError(discovery.unknown_name_message(target, found.names(), home))
    except MemhostError as exc:
        report.add("manifest", FAIL, str(exc))
        return report
    report.name = candidate.name
    if candidate.status == "failed":
        report.add("manifest", FAIL, candidate.reason)
        return report
    if candidate.status == "blocked":
        report.add("manifest", FAIL, f"{candidate.name!r} is blocked by {discovery.DISABLED_ENV}")
        return report
    what = (f"entry point {candidate.name} = {candidate.entry}" if candidate.source == "entrypoint"
            else f"{candidate.name} {candidate.version}, entry = {candidate.entry}")
    report.add("manifest", PASS, f"{what} ({candidate.describe()})")
    # 2. requires
    if candidate.missing:
        report.add("requires", FAIL, candidate.reason)
        return report
    report.add("requires", PASS if candidate.requires else SKIP,
               f"installed: {', '.join(candidate.requires)}" if candidate.requires
               else "none declared")
    # 3. load
    try:
        provider = discovery.load_candidate(candidate, timeout=discovery.import_timeout(home))
    except ProviderError as exc:
        report.add("load", FAIL, str(exc))
        return report
    report.add("load", PASS, _origin(provider))
    # 4. hooks against the spec
    from memhost.providers import ProviderSet

    try:
        registered = ProviderSet().register(provider, candidate.name)
        runner = HookRunner(provider)
    except (ProviderError, pluggy.PluginValidationError, ValueError) as exc:
        report.add("hooks", FAIL, str(exc))
        return report
    report.add("hooks", PASS, f"implements {', '.join(sorted(registered.hooks))}")
    # 5. tools
    check_tools(report, runner, scale)
    # 6. config schema
    schema, schema_ok = check_schema(report, candidate, home, by_path)
    # 7. check_available
    try:
        config = _config_for(candidate.name, home, schema, by_path)
    except Exception as exc:
        report.add("check_available", FAIL,
                   f"cannot build the provider's config: {error_text(exc)}")
        return report
    if not check_available(report, runner, config, scale) or not schema_ok:
        report.add("session", SKIP, "not run: fix the failures above first")
        return report
    # 8. scripted session
    bound = prefetch_bound if prefetch_bound is not None else prefetch_timeout(home)
    run_session(report, runner, config, bound, scale)
    return report


__all__ = ["BOUNDS", "FAIL", "PASS", "SESSION_ID", "SKIP", "TURN", "HookRunner", "HookTimeout",
           "Report", "Step", "availability", "check_provider", "error_text", "looks_like_path",
           "no_network"]
