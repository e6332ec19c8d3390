"""The checks ``memhost providers check`` runs once a provider loaded, and the report they add to.

Each check adds a :class:`Step` (``PASS``, ``FAIL`` or ``SKIP``) to the :class:`Report`: the tool
schemas (normalised, no reserved names), the config schema, ``check_available`` (with the network
refused), then a scripted session (``initialize``, ``prefetch``, ``sync_turn``, ``session_end``,
``shutdown``) in a scratch home, against the scratch store the provider's ``scratch_config``
names, each call within a time bound.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memhost.authoring.hookrunner import HookRunner, error_text, no_network
from memhost.errors import MemhostError
from memhost.providers import wrong_type

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"

#: Seconds each scripted call may take (``prefetch`` uses ``memory.prefetch_timeout``).
BOUNDS = {"check_available": 5.0, "tool_schemas": 5.0, "scratch_config": 5.0, "initialize": 15.0,
          "prefetch": 8.0, "sync_turn": 30.0, "session_end": 30.0, "shutdown": 15.0}

SESSION_ID = "memhost-check"
TURN = ("Remember that deployments happen on Tuesdays.",
        "Noted: deployments happen on Tuesdays.")


@dataclass
class Step:
    """One check's outcome: ``PASS``, ``FAIL`` or ``SKIP``, with what it found."""

    check: str
    status: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "detail": self.detail}


@dataclass
class Report:
    """Every step of one check, in order; ``ok`` when none failed."""

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


def check_tools(report: Report, runner: HookRunner, scale: float) -> None:
    """The provider's tool schemas: each normalises, and none takes a reserved core name."""
    from memhost.toolschemas import RESERVED_TOOL_NAMES, SchemaProblem, normalise_tool_schema

    if not runner.implements("tool_schemas"):
        report.add("tools", SKIP, "declares no tools")
        return
    try:
        raw = runner.call("tool_schemas", BOUNDS["tool_schemas"] * scale)
    except Exception as exc:
        report.add("tools", FAIL, f"tool_schemas() failed: {error_text(exc)}")
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


def check_schema(report: Report, candidate: Any, home: Path, by_path: bool) -> tuple[Any, bool]:
    """The provider's config schema, when it has one: ``(schema or None, whether it is fine)``."""
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
        report.add("config schema", FAIL, error_text(exc))
        return None, False
    if schema.name != candidate.name:
        report.add("config schema", FAIL, f"{path}: CONFIG_SCHEMA is named {schema.name!r}, the "
                                          f"provider {candidate.name!r}; make them the same")
        return None, False
    keys = ", ".join(f"{f.key} ({f.kind})" for f in schema.fields) or "no fields"
    report.add("config schema", PASS, f"{len(schema.fields)} field(s): {keys}")
    return schema, True


def check_available(report: Report, runner: HookRunner, config: dict[str, Any],
                    scale: float) -> bool:
    """``check_available`` with the network refused; False when the session must not run."""
    if not runner.implements("check_available"):
        report.add("check_available", SKIP, "not implemented (the provider is always available)")
        return True
    attempts: list[str] = []
    try:
        with no_network(attempts):
            reason = runner.call("check_available", BOUNDS["check_available"] * scale,
                                 config=config)
    except Exception as exc:
        report.add("check_available", FAIL, error_text(exc))
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


def prefetch_timeout(home: Path) -> float:
    """The home's ``memory.prefetch_timeout`` (the check's own bound when config is unusable)."""
    from memhost.config import load_config

    try:
        return float(load_config(home).memory.prefetch_timeout)
    except MemhostError:
        return BOUNDS["prefetch"]


def run_session(report: Report, runner: HookRunner, config: dict[str, Any],
                prefetch_bound: float, scale: float) -> None:
    """The scripted session in a scratch home, each hook within its bound (scaled)."""
    messages = [{"role": "user", "content": TURN[0]}, {"role": "assistant", "content": TURN[1]}]
    with tempfile.TemporaryDirectory(prefix="memhost-check-") as scratch:
        config = _scratch_store(report, runner, config, Path(scratch), scale)
        if config is None:
            report.add("session", SKIP, "not run: no scratch store to run it against")
            return
        calls: list[tuple[str, dict[str, Any], float]] = [
            ("initialize", {"session_id": SESSION_ID, "home": Path(scratch), "config": config,
                            "context": "primary", "user_id": ""}, BOUNDS["initialize"] * scale),
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
                report.add(label, FAIL, error_text(exc))
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
        report.add("scratch store", FAIL, f"scratch_config() failed: {error_text(exc)}")
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
