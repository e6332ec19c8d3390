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
import threading
import time
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


#: Seconds an import may take when the caller gives no bound (``memory.provider_import_timeout``).
DEFAULT_IMPORT_TIMEOUT = 10.0
TIMEOUT_KEY = "memory.provider_import_timeout"

# Imports that outlived their bound and are still running, by candidate: (thread, start time).
_running: dict[tuple[str, str, str], tuple[threading.Thread, float]] = {}
_running_lock = threading.Lock()


def load_candidate(candidate: Candidate, *, timeout: float | None = None) -> Any:
    """Load one discovered candidate (see :func:`load_provider`) within ``timeout`` seconds.

    The import runs on a daemon thread of its own. Python cannot stop a thread, so an import
    that outlives the bound keeps running in the background: it still holds the module's import
    lock, and whatever it does later (print, connect, finish) still happens. The load fails at
    once with "import timed out after N s"; until that import ends, another load of the same
    provider in this process fails at once too, instead of queueing behind it. Should it finish,
    its module stays imported and a later load uses it. Being a daemon thread, it never keeps
    the process alive.
    """
    bound = DEFAULT_IMPORT_TIMEOUT if timeout is None else timeout
    label = f"memory provider {candidate.name!r} ({candidate.describe()})"
    key = (candidate.name, candidate.source, str(candidate.path or candidate.entry))
    with _running_lock:
        earlier = _running.get(key)
        if earlier is not None and earlier[0].is_alive():
            _fail(candidate, f"{label}: an earlier import of it, started "
                             f"{time.monotonic() - earlier[1]:.0f} s ago, is still running (it "
                             f"timed out; see {TIMEOUT_KEY}); restart the process to try again")
        _running.pop(key, None)
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["value"] = _load(candidate, label)
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=run, name=f"memhost-import-{candidate.name}",
                                  daemon=True)
        started = time.monotonic()
        worker.start()
    worker.join(bound)
    if worker.is_alive():
        with _running_lock:
            _running[key] = (worker, started)
        _fail(candidate, f"{label}: import timed out after {bound:g} s ({TIMEOUT_KEY}); it "
                         "is left running in the background. Check what the provider's module "
                         "does at import (a network call, a lock), or raise the timeout")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _load(candidate: Candidate, label: str) -> Any:
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


__all__ = ["DEFAULT_IMPORT_TIMEOUT", "has_hookimpls", "instantiate", "load_candidate"]
