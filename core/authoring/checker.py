"""``memhost providers check``: load one provider in isolation and run it through its paces.

Each step is a :class:`Step` with ``PASS``, ``FAIL`` or ``SKIP``: the manifest, its requirements,
loading, hook implementations against the spec, tool schemas (normalised, no reserved names), the
config schema, ``check_available`` (with the network refused), then a scripted session
(``initialize``, ``prefetch``, ``sync_turn``, ``session_end``, ``shutdown``) in a scratch home,
against the scratch store the provider's ``scratch_config`` names (so the check's turn never
reaches the user's real store), each call within a time bound. Also :func:`availability`, the
lighter probe behind ``providers list --check`` and ``memhost doctor``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from memhost import hookspecs
from memhost.errors import MemhostError, ProviderError
from memhost.providers import wrong_type

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"

#: Seconds each scripted call may take (``prefetch`` uses ``memory.prefetch_timeout``).
BOUNDS = {"check_available": 5.0, "tool_schemas": 5.0, "scratch_config": 5.0, "initialize": 15.0,
          "prefetch": 8.0, "sync_turn": 30.0, "session_end": 30.0, "shutdown": 15.0}

SESSION_ID = "memhost-check"
TURN = ("Remember that deployments happen on Tuesdays.",
        "Noted: deployments happen on Tuesdays.")


class HookTimeout(Exception):
    def __init__(self, hook: str, bound: float) -> None:
        super().__init__(f"{hook}() did not return within {bound:g}s")


class HookRunner:
    """Calls one provider's hooks through pluggy (each implementation gets only the arguments it
    accepts), on a daemon thread joined for at most a bound; raises what the provider raised."""

    def __init__(self, provider: Any) -> None:
        self.pm = pluggy.PluginManager("memhost")
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(provider, name="provider-under-check")
        self.hooks = {caller.name for caller in self.pm.get_hookcallers(provider) or []}

    def implements(self, hook: str) -> bool:
        return hook in self.hooks

    def call(self, hook: str, bound: float, **kwargs: Any) -> Any:
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                results = getattr(self.pm.hook, hook)(**kwargs)
                outcome["value"] = results[0] if results else None
            except BaseException as exc:  # handed back to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=run, name=f"memhost-check-{hook}", daemon=True)
        worker.start()
        worker.join(bound)
        if worker.is_alive():
            raise HookTimeout(hook, bound)
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")


@contextlib.contextmanager
def no_network(attempts: list[str]) -> Iterator[None]:
    """Refuse (and record) outgoing connections and name lookups inside the block."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection,
             socket.getaddrinfo)

    def refuse(what: str) -> Callable[..., Any]:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(what)
            raise OSError(f"network access is not allowed here ({what})")
        return blocked

    socket.socket.connect = refuse("connect")  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse("connect_ex")  # type: ignore[method-assign]
    socket.create_connection = refuse("create_connection")  # type: ignore[assignment]
    socket.getaddrinfo = refuse("getaddrinfo")  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = saved[0], saved[1]  # type: ignore[method-assign]
        socket.create_connection, socket.getaddrinfo = saved[2], saved[3]


def _origin(provider: Any) -> str:
    """``Class (file)`` for a provider object, with the real file, not the synthetic module."""
    import inspect

    subject = provider if inspect.ismodule(provider) else type(provider)
    try:
        where = inspect.getsourcefile(subject) or "?"
    except TypeError:
        where = "?"
    return f"{getattr(subject, '__qualname__', getattr(subject, '__name__', '?'))} ({where})"


def _error(exc: BaseException) -> str:
    if isinstance(exc, MemhostError | HookTimeout):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


# -- the check --------------------------------------------------------------------------------


@dataclass
class Step:
    check: str
    status: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "detail": self.detail}


@dataclass
class Report:
    target: str
    name: str = ""
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(step.status != FAIL for step in self.steps)

    def add(self, check: str, status: str, detail: str = "") -> Step:
        step = Step(check, status, detail)
        self.steps.append(step)
        return step

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "name": self.name, "ok": self.ok,
                "steps": [s.as_dict() for s in self.steps]}


def looks_like_path(target: str) -> bool:
    return (os.sep in target or "/" in target or target in (".", "..")
            or target.startswith(("~", ".")))


def _config_for(name: str, home: Path, schema: Any, by_path: bool) -> dict[str, Any]:
    if schema is not None:
        from memhost.schema.settings import SettingsService

        service = SettingsService(home, schema_for=(lambda _n: schema) if by_path else None)
        return service.values(name)
    from memhost.config import load_config

    try:
        return dict(load_config(home).providers.get(name, {}))
    except MemhostError:
        return {}


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
    _check_tools(report, runner, scale)
    # 6. config schema
    schema, schema_ok = _check_schema(report, candidate, home, by_path)
    # 7. check_available
    try:
        config = _config_for(candidate.name, home, schema, by_path)
    except Exception as exc:
        report.add("check_available", FAIL, f"cannot build the provider's config: {_error(exc)}")
        return report
    if not _check_available(report, runner, config, scale) or not schema_ok:
        report.add("session", SKIP, "not run: fix the failures above first")
        return report
    # 8. scripted session
    bound = prefetch_bound if prefetch_bound is not None else _prefetch_timeout(home)
    _session(report, runner, config, bound, scale)
    return report


def _check_tools(report: Report, runner: HookRunner, scale: float) -> None:
    from memhost.toolschemas import RESERVED_TOOL_NAMES, SchemaProblem, normalise_tool_schema

    if not runner.implements("tool_schemas"):
        report.add("tools", SKIP, "declares no tools")
        return
    try:
        raw = runner.call("tool_schemas", BOUNDS["tool_schemas"] * scale)
    except Exception as exc:
        report.add("tools", FAIL, f"tool_schemas() failed: {_error(exc)}")
        return
    if (problem := wrong_type("tool_schemas", raw)) is not None:
        report.add("tools", FAIL, f"tool_schemas() {problem}")
        return
    names, problems = [], []
    for index, item in enumerate(raw):
        try:
            schema = normalise_tool_schema(item)
        except SchemaProblem as exc:
            problems.append(f"schema {index}: {exc}")
            continue
        if schema["name"] in RESERVED_TOOL_NAMES:
            problems.append(f"tool {schema['name']!r} uses a reserved core tool name")
        if schema["name"] in names:
            problems.append(f"tool {schema['name']!r} is declared twice")
        names.append(schema["name"])
    if problems:
        report.add("tools", FAIL, "; ".join(problems))
    elif names and not runner.implements("handle_tool_call"):
        report.add("tools", FAIL, "declares tools but does not implement handle_tool_call")
    else:
        report.add("tools", PASS, ", ".join(names) if names else "an empty list")


def _check_schema(report: Report, candidate: Any, home: Path, by_path: bool) -> tuple[Any, bool]:
    from memhost.discovery import SCHEMA_FILE

    path = candidate.path / SCHEMA_FILE if candidate.path is not None else None
    if path is None or not path.is_file():
        report.add("config schema", SKIP, f"no {SCHEMA_FILE}; the provider gets its raw "
                                          f"[providers.{candidate.name}] table")
        return None, True
    from memhost.schema.loader import load_config_schema

    try:
        schema = load_config_schema(path)
    except Exception as exc:
        report.add("config schema", FAIL, _error(exc))
        return None, False
    if schema.name != candidate.name:
        report.add("config schema", FAIL, f"{path}: CONFIG_SCHEMA is named {schema.name!r}, the "
                                          f"provider {candidate.name!r}; make them the same")
        return None, False
    keys = ", ".join(f"{f.key} ({f.kind})" for f in schema.fields) or "no fields"
    report.add("config schema", PASS, f"{len(schema.fields)} field(s): {keys}")
    return schema, True


def _check_available(report: Report, runner: HookRunner, config: dict[str, Any],
                     scale: float) -> bool:
    if not runner.implements("check_available"):
        report.add("check_available", SKIP, "not implemented (the provider is always available)")
        return True
    attempts: list[str] = []
    try:
        with no_network(attempts):
            reason = runner.call("check_available", BOUNDS["check_available"] * scale,
                                 config=config)
    except Exception as exc:
        report.add("check_available", FAIL, _error(exc))
        return False
    if attempts:
        report.add("check_available", FAIL, f"tried to use the network ({', '.join(attempts)}); "
                                            "check_available must only look at settings")
        return False
    if (problem := wrong_type("check_available", reason)) is not None:
        report.add("check_available", FAIL, problem)
        return False
    if reason is not None:
        report.add("check_available", FAIL, f"unavailable: {reason}")
        return False
    report.add("check_available", PASS, "available")
    return True


def _prefetch_timeout(home: Path) -> float:
    from memhost.config import load_config

    try:
        return float(load_config(home).memory.prefetch_timeout)
    except MemhostError:
        return BOUNDS["prefetch"]


def _session(report: Report, runner: HookRunner, config: dict[str, Any], prefetch_bound: float,
             scale: float) -> None:
    messages = [{"role": "user", "content": TURN[0]}, {"role": "assistant", "content": TURN[1]}]
    with tempfile.TemporaryDirectory(prefix="memhost-check-") as scratch:
        config = _scratch_store(report, runner, config, Path(scratch), scale)
        if config is None:
            report.add("session", SKIP, "not run: no scratch store to run it against")
            return
        calls: list[tuple[str, dict[str, Any], float]] = [
            ("initialize", {"session_id": SESSION_ID, "home": Path(scratch), "config": config,
                            "context": "primary"}, BOUNDS["initialize"] * scale),
            ("prefetch", {"query": "When do deployments happen?", "session_id": SESSION_ID},
             prefetch_bound * scale),
            ("sync_turn", {"user_content": TURN[0], "assistant_content": TURN[1],
                           "session_id": SESSION_ID, "messages": messages},
             BOUNDS["sync_turn"] * scale),
            ("session_end", {"session_id": SESSION_ID, "messages": messages},
             BOUNDS["session_end"] * scale),
            ("shutdown", {}, BOUNDS["shutdown"] * scale),
        ]
        for hook, kwargs, bound in calls:
            label = f"session: {hook}"
            if not runner.implements(hook):
                report.add(label, SKIP, "not implemented")
                continue
            started = time.perf_counter()
            try:
                value = runner.call(hook, bound, **kwargs)
            except Exception as exc:
                report.add(label, FAIL, _error(exc))
                if hook == "initialize":
                    report.add("session", SKIP, "not continued: initialize failed")
                    return
                continue
            took = time.perf_counter() - started
            problem = wrong_type(hook, value)
            if problem:
                report.add(label, FAIL, f"{problem} (after {took:.2f}s)")
            else:
                report.add(label, PASS, f"{took:.2f}s (bound {bound:g}s)")


def _scratch_store(report: Report, runner: HookRunner, config: dict[str, Any], scratch: Path,
                   scale: float) -> dict[str, Any] | None:
    """The settings the scripted session runs with: the provider's ``scratch_config`` for the
    scratch home, so the check's turn never lands in the user's real store. ``None`` when that
    hook failed."""
    if not runner.implements("scratch_config"):
        report.add("scratch store", SKIP, "no scratch_config hook: the session runs in a scratch "
                                          "home with the configured settings, so a provider that "
                                          "stores data outside its home gets the check's turn "
                                          "there")
        return config
    try:
        value = runner.call("scratch_config", BOUNDS["scratch_config"] * scale,
                            config=dict(config), home=scratch)
    except Exception as exc:
        report.add("scratch store", FAIL, f"scratch_config() failed: {_error(exc)}")
        return None
    if (problem := wrong_type("scratch_config", value)) is not None:
        report.add("scratch store", FAIL, f"scratch_config() {problem}")
        return None
    if value is None:
        report.add("scratch store", PASS, "the provider keeps everything in the check's scratch "
                                          "home")
        return config
    changed = sorted(k for k in value if value.get(k) != config.get(k))
    report.add("scratch store", PASS, "the session writes to a scratch store, never the "
                                      "configured one" + (f" (scratch_config set: "
                                                          f"{', '.join(changed)})" if changed
                                                          else ""))
    return value


# -- availability probe -----------------------------------------------------------------------


def availability(candidate: Any, home: Path, table: dict[str, Any] | None = None
                 ) -> tuple[str, str]:
    """Load ``candidate`` and ask it whether it is usable: ``("available", "")``,
    ``("unavailable", reason)`` or ``("failed", error)``. Blocked, broken and shadowed
    candidates keep their discovery status."""
    from memhost import discovery
    from memhost.providers import ProviderSet

    if candidate.status != "available":
        return candidate.status, candidate.reason
    try:
        provider = discovery.load_candidate(candidate, timeout=discovery.import_timeout(home))
        ProviderSet().register(provider, candidate.name)
        runner = HookRunner(provider)
    except ProviderError as exc:
        return "failed", str(exc)
    if not runner.implements("check_available"):
        return "available", ""
    config = discovery.runtime_config(candidate.name, home, table)
    try:
        reason = runner.call("check_available", BOUNDS["check_available"], config=config)
    except Exception as exc:
        return "failed", f"check_available() failed: {_error(exc)}"
    if (problem := wrong_type("check_available", reason)) is not None:
        return "failed", f"check_available() {problem}"
    return ("unavailable", reason) if reason else ("available", "")


__all__ = ["BOUNDS", "FAIL", "HookRunner", "HookTimeout", "PASS", "Report", "SKIP", "Step",
           "availability", "check_provider", "looks_like_path", "no_network"]
