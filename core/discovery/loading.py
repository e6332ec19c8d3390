"""Importing one discovered provider and turning what its entry names into a provider object.

Every way this can fail raises :class:`~memhost.errors.ProviderError` naming the provider, where
it came from and what went wrong; a failure is also recorded (with its traceback) for listings
and ``memhost doctor``.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import traceback
from typing import Any

from memhost.discovery.candidates import (
    DISABLED_ENV,
    Candidate,
    ProviderLoadError,
    forget,
    make_failure,
    record,
)
from memhost.errors import ProviderError

log = logging.getLogger("memhost.discovery")


def load_candidate(candidate: Candidate) -> Any:
    """Load one discovered candidate (see :func:`load_provider`)."""
    label = f"memory provider {candidate.name!r} ({candidate.describe()})"
    if candidate.status == "blocked":
        raise ProviderError(f"{label} is blocked by {DISABLED_ENV}="
                            f"{os.environ.get(DISABLED_ENV, '')!r}; remove it from that list to "
                            "use it")
    if candidate.status == "failed":
        raise ProviderError(f"{label} cannot be loaded: {candidate.reason}")
    if candidate.status == "unavailable":
        raise ProviderError(f"{label} is unavailable: {candidate.reason}")
    if candidate.status == "shadowed":
        raise ProviderError(f"{label} is shadowed by the one from {candidate.shadowed_by}")
    module_name, _, attribute = candidate.entry.partition(":")
    try:
        if candidate.source == "entrypoint":
            module = importlib.import_module(module_name)
        else:
            from memhost.discovery import pathload

            assert candidate.path is not None
            module = pathload.load_module(candidate.path, module_name, name=candidate.name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        from memhost.discovery.pathload import EntryModuleMissing

        if isinstance(exc, EntryModuleMissing):
            _fail(candidate, f"{label}: plugin.toml entry = {candidate.entry!r} names a "
                             f"module that does not exist: {exc}")
        _fail(candidate, f"{label} failed to import: {type(exc).__name__}: {exc}", exc)
    try:
        provider = _provider_object(module, attribute, label, candidate)
    except ProviderError:
        if candidate.source != "entrypoint" and candidate.path is not None:
            from memhost.discovery import pathload

            # Forget the modules, so that a fix on disk is read at the next attempt.
            pathload.unload(candidate.name, candidate.path)
        raise
    forget(candidate)
    return provider


def _fail(candidate: Candidate, message: str, exc: BaseException | None = None) -> None:
    """Record the failure (with ``exc``'s traceback) and raise it as ProviderLoadError."""
    tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
    failure = make_failure(candidate, message, tb)
    record(failure)
    log.debug("%s", message)
    raise ProviderLoadError(message, failure)


def has_hookimpls(obj: Any) -> bool:
    """True when ``obj`` has at least one attribute marked ``@memhost.hookimpl``."""
    for attr in dir(obj):
        try:
            value = inspect.getattr_static(obj, attr)
        except AttributeError:
            continue
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        if getattr(value, "memhost_impl", None) is not None:
            return True
    return False


def _provider_object(module: Any, attribute: str, label: str, candidate: Candidate) -> Any:
    where = getattr(module, "__name__", "?")
    if not attribute:
        if has_hookimpls(module):
            return module
        _fail(candidate, f"{label}: no provider found: the module defines no "
                         "@memhost.hookimpl functions; name the provider class in the entry, as "
                         "'module:Class'")
    obj: Any = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            _fail(candidate, f"{label}: no provider found: {attribute!r} is not defined in "
                             f"module {where!r} (entry = {candidate.entry!r})")
    return instantiate(obj, label, candidate)


def instantiate(obj: Any, label: str, candidate: Candidate | None = None) -> Any:
    """Turn what an entry names into a provider object: a class is instantiated, an object with
    hook implementations is used as is, any other callable is a factory and is called."""
    def error(message: str, exc: BaseException | None = None) -> None:
        if candidate is not None:
            _fail(candidate, message, exc)
        raise ProviderError(message)

    what = getattr(obj, "__qualname__", type(obj).__name__)
    if inspect.isclass(obj) or (callable(obj) and not has_hookimpls(obj)):
        try:
            made = obj()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            error(f"{label}: {what}() raised {type(exc).__name__}: {exc}", exc)
        if inspect.isclass(made):
            return instantiate(made, label, candidate)
        obj = made
    if not has_hookimpls(obj):
        error(f"{label}: no provider found: {what} has no methods marked @memhost.hookimpl")
    return obj


__all__ = ["has_hookimpls", "instantiate", "load_candidate"]
