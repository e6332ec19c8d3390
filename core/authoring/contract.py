"""The contract suite for memory providers, and its fixtures: a pytest plugin.

Installed with memhost (entry point ``pytest11``) and imported from its stable path,
:mod:`memhost.testing`, so its fixtures are available in any test run.
A provider author subclasses :class:`ProviderContract` in a test module and overrides the
``provider`` fixture (or defines a ``memhost_provider`` fixture)::

    from memhost.testing import ProviderContract, load_folder_provider

    class TestNotesProvider(ProviderContract):
        @pytest.fixture
        def provider(self):
            return load_folder_provider(Path(__file__).parents[1])

The suite checks that the provider registers against the hook spec, that its tool schemas
normalise and avoid reserved names, that ``check_available`` answers ``None`` or a reason without
touching the network, that every hook it implements accepts the documented arguments and returns
the documented type, that ``prefetch`` returns within a bound, that each declared tool answers
with a JSON string, and that a whole :class:`memhost.MemoryManager` session with the provider
completes without a provider fault. Override ``provider_config``, ``tool_arguments``,
``provider_name`` or the class attributes ``prefetch_bound`` and ``call_bound`` to fit.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from memhost.authoring.hookrunner import HookRunner, HookTimeout
from memhost.providers import wrong_type

SESSION_ID = "contract-session"
QUERY = "What did we decide about the deployment schedule?"
MESSAGES = [
    {"role": "user", "content": "Remember that deployments happen on Tuesdays."},
    {"role": "assistant", "content": "Noted: deployments happen on Tuesdays."},
]

#: The lifecycle hooks exercised one at a time (after ``initialize``).
LIFECYCLE_HOOKS = (
    "initialize", "prompt_fragment", "prefetch", "queue_prefetch", "sync_turn",
    "on_builtin_write", "on_subtask", "pre_compress", "rotate", "session_end", "shutdown",
)


def hook_arguments(hook: str, *, home: Path, config: dict[str, Any] | None = None,
                   session_id: str = SESSION_ID) -> dict[str, Any]:
    """Every documented argument of ``hook``, with realistic sample values."""
    messages = [dict(m) for m in MESSAGES]
    samples: dict[str, dict[str, Any]] = {
        "check_available": {"config": dict(config or {})},
        "initialize": {"session_id": session_id, "home": home, "config": dict(config or {}),
                       "context": "primary", "user_id": ""},
        "prompt_fragment": {"session_id": session_id},
        "tool_schemas": {},
        "prefetch": {"query": QUERY, "session_id": session_id},
        "queue_prefetch": {"query": QUERY, "session_id": session_id},
        "sync_turn": {"user_content": MESSAGES[0]["content"],
                      "assistant_content": MESSAGES[1]["content"], "session_id": session_id,
                      "messages": messages},
        "session_end": {"session_id": session_id, "messages": messages},
        "rotate": {"old_session_id": session_id, "new_session_id": session_id + "-2",
                   "reason": "new"},
        "pre_compress": {"session_id": session_id, "messages": messages},
        "on_builtin_write": {"action": "add", "target": "user",
                             "content": "User prefers short answers.", "previous_content": None,
                             "session_id": session_id, "origin": "foreground"},
        "on_subtask": {"task": "Summarise the changelog", "result": "Three fixes, one feature.",
                       "child_session_id": session_id + "-child", "session_id": session_id},
        "shutdown": {},
    }
    return samples[hook]


def sample_tool_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool built from its schema: each required property gets a plain value of
    its type (the first of an ``enum``)."""
    parameters = schema.get("parameters") or {}
    properties = parameters.get("properties") or {}
    values: dict[str, Any] = {}
    for key in parameters.get("required") or []:
        spec = properties.get(key) or {}
        if spec.get("enum"):
            values[key] = spec["enum"][0]
            continue
        kind = spec.get("type", "string")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        values[key] = {"string": "example", "integer": 1, "number": 1.0, "boolean": True,
                       "array": [], "object": {}}.get(kind, "example")
    return values


class HookDriver(HookRunner):
    """Calls one provider's hooks the way pluggy does (only the arguments each implementation
    accepts), raising whatever the provider raised; a call that outlives its bound, or returns
    the wrong type, fails the test."""

    def __init__(self, provider: Any, *, bound: float = 30.0) -> None:
        super().__init__(provider)
        self.bound = bound

    def call(self, hook: str, bound: float | None = None, **kwargs: Any) -> Any:
        limit = self.bound if bound is None else bound
        try:
            value = super().call(hook, limit, **kwargs)
        except HookTimeout as exc:
            pytest.fail(str(exc))
        problem = wrong_type(hook, value)
        if problem:
            pytest.fail(f"{hook}() {problem}: {value!r:.80}")
        return value


def load_folder_provider(folder: str | Path) -> Any:
    """A fresh provider object from a provider folder (one with a ``plugin.toml``), loaded by
    path exactly as memhost loads it."""
    from memhost.discovery import load_path

    return load_path(Path(folder))


# -- plugin-level fixtures --------------------------------------------------------------------


@pytest.fixture
def memhost_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh memhost home; ``MEMHOST_HOME`` points at it for the test."""
    path = tmp_path / "memhost-home"
    path.mkdir()
    monkeypatch.setenv("MEMHOST_HOME", str(path))
    return path


@pytest.fixture
def memhost_provider() -> Any:
    """The provider under test: override this fixture (or ``provider`` in a ProviderContract
    subclass) to return a fresh provider object."""
    pytest.fail("define a `memhost_provider` fixture (or override `provider` in your "
                "ProviderContract subclass) returning a fresh provider object")


@pytest.fixture
def memhost_no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse network access for the test; returns the list of attempts made."""
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what}{args[1:2] if what.startswith('socket.') else args[:1]}")
            raise OSError(f"network access is not allowed here ({what})")
        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


# -- the contract -----------------------------------------------------------------------------


class ProviderContract:
    """The provider contract suite. Subclass it as ``Test<Something>`` and override ``provider``.

    Each test builds a fresh provider from the fixture.
    """

    #: Seconds ``prefetch`` may take (the manager's default ``memory.prefetch_timeout``).
    prefetch_bound: float = 8.0
    #: Seconds any other hook may take before the test fails instead of hanging.
    call_bound: float = 30.0

    @pytest.fixture
    def provider(self, memhost_provider: Any) -> Any:
        return memhost_provider

    @pytest.fixture
    def provider_name(self) -> str:
        """The name the provider is registered under in the manager session test."""
        return "contract-provider"

    @pytest.fixture
    def provider_config(self) -> dict[str, Any]:
        """The config the provider's hooks receive (its ``[providers.<name>]`` settings)."""
        return {}

    @pytest.fixture
    def tool_arguments(self) -> dict[str, dict[str, Any]]:
        """Arguments per tool name for the tool-call test; tools left out get arguments built
        from their schema's required properties."""
        return {}

    # helpers

    def _driver(self, provider: Any) -> HookDriver:
        return HookDriver(provider, bound=self.call_bound)

    def _start(self, driver: HookDriver, home: Path, config: dict[str, Any]) -> None:
        if driver.implements("initialize"):
            driver.call("initialize", **hook_arguments("initialize", home=home, config=config))

    def _stop(self, driver: HookDriver) -> None:
        if driver.implements("shutdown"):
            driver.call("shutdown")

    def _schemas(self, driver: HookDriver) -> list[dict[str, Any]]:
        from memhost.toolschemas import normalise_tool_schema

        if not driver.implements("tool_schemas"):
            return []
        return [normalise_tool_schema(raw) for raw in driver.call("tool_schemas")]

    # tests

    def test_registers_against_the_hook_spec(self, provider: Any) -> None:
        from memhost.providers import ProviderSet

        registered = ProviderSet().register(provider, "provider-under-test")
        assert registered.hooks, "the provider implements no memhost hook (mark methods with " \
                                 "@memhost.hookimpl)"

    def test_tool_schemas_normalise_and_avoid_reserved_names(self, provider: Any) -> None:
        from memhost.toolschemas import RESERVED_TOOL_NAMES

        driver = self._driver(provider)
        if not driver.implements("tool_schemas"):
            pytest.skip("the provider declares no tools")
        schemas = self._schemas(driver)
        names = [schema["name"] for schema in schemas]
        reserved = sorted(set(names) & RESERVED_TOOL_NAMES)
        assert not reserved, f"tool names reserved for core tools: {reserved}; rename them"
        assert len(names) == len(set(names)), f"duplicate tool names: {names}"
        for schema in schemas:
            assert schema["parameters"].get("type") == "object", \
                f"tool {schema['name']!r}: parameters must be a JSON Schema object"

    def test_check_available_answers_without_network(
            self, provider: Any, provider_config: dict[str, Any],
            memhost_no_network: list[str]) -> None:
        driver = self._driver(provider)
        if not driver.implements("check_available"):
            pytest.skip("the provider does not implement check_available")
        reason = driver.call("check_available", config=dict(provider_config))
        assert not memhost_no_network, ("check_available must not touch the network; it tried: "
                                        f"{memhost_no_network}")
        assert reason is None or reason.strip(), "an unavailable provider must say why"
        assert reason is None, f"the provider reports itself unavailable: {reason}"

    @pytest.mark.parametrize("hook", LIFECYCLE_HOOKS)
    def test_hook_accepts_documented_arguments(self, provider: Any, hook: str,
                                               provider_config: dict[str, Any],
                                               memhost_home: Path) -> None:
        driver = self._driver(provider)
        if not driver.implements(hook):
            pytest.skip(f"the provider does not implement {hook}")
        if hook != "initialize":
            self._start(driver, memhost_home, provider_config)
        bound = self.prefetch_bound if hook == "prefetch" else None
        value = driver.call(hook, bound=bound,
                            **hook_arguments(hook, home=memhost_home, config=provider_config))
        if hook == "shutdown" and value is not None:
            bad = {k: v for k, v in value.items()
                   if not isinstance(k, str) or not isinstance(v, int) or isinstance(v, bool)}
            assert not bad, f"shutdown() must return counts (str -> int), not {bad}"
        if hook != "shutdown":
            self._stop(driver)

    def test_prefetch_returns_within_bound(self, provider: Any, provider_config: dict[str, Any],
                                           memhost_home: Path) -> None:
        driver = self._driver(provider)
        if not driver.implements("prefetch"):
            pytest.skip("the provider does not implement prefetch")
        self._start(driver, memhost_home, provider_config)
        for _ in range(3):  # a cold first call and warm later ones
            driver.call("prefetch", bound=self.prefetch_bound,
                        **hook_arguments("prefetch", home=memhost_home))
        self._stop(driver)

    def test_every_tool_answers_with_json(self, provider: Any, provider_config: dict[str, Any],
                                          tool_arguments: dict[str, dict[str, Any]],
                                          memhost_home: Path) -> None:
        driver = self._driver(provider)
        schemas = self._schemas(driver)
        if not schemas:
            pytest.skip("the provider declares no tools")
        assert driver.implements("handle_tool_call"), \
            "the provider declares tools but does not implement handle_tool_call"
        self._start(driver, memhost_home, provider_config)
        for schema in schemas:
            name = schema["name"]
            arguments = tool_arguments.get(name, sample_tool_arguments(schema))
            answer = driver.call("handle_tool_call", tool_name=name, arguments=dict(arguments),
                                 session_id=SESSION_ID)
            try:
                json.loads(answer)
            except ValueError as exc:
                pytest.fail(f"tool {name!r} answered with text that is not JSON ({exc}): "
                            f"{answer[:200]!r}")
        self._stop(driver)

    def test_full_manager_session_has_no_provider_faults(
            self, provider: Any, provider_name: str, provider_config: dict[str, Any],
            tool_arguments: dict[str, dict[str, Any]], memhost_home: Path) -> None:
        from memhost.config import Config
        from memhost.manager import MemoryManager

        config = Config.model_validate({"providers": {provider_name: dict(provider_config)}})
        manager = MemoryManager(memhost_home, config)
        try:
            assert manager.register_provider(provider, name=provider_name), \
                manager.status()["problems"]
            manager.start_session(SESSION_ID)
            manager.system_prompt()
            for schema in manager.tool_schemas():
                name = schema["name"]
                if manager.status()["tools"].get(name) == provider_name:
                    manager.call_tool(name, tool_arguments.get(name, sample_tool_arguments(schema)))
            turn = manager.begin_turn(MESSAGES[0]["content"])
            assert turn.recall in ("ok", "empty"), f"recall was {turn.recall!r}"
            manager.finish_turn(MESSAGES[0]["content"], MESSAGES[1]["content"],
                                messages=[dict(m) for m in MESSAGES])
            manager.pre_compress([dict(m) for m in MESSAGES])
            manager.subtask_finished("Summarise the changelog", "Three fixes.", "child-1")
            manager.rotate(SESSION_ID + "-2", "new", messages=[dict(m) for m in MESSAGES])
            manager.end_session([dict(m) for m in MESSAGES])
            assert manager.flush(self.call_bound), "background work did not finish"
        finally:
            report = manager.shutdown(timeout=self.call_bound)
        status = manager.status()
        assert not status["problems"], status["problems"]
        entry = next(p for p in status["providers"] if p["name"] == provider_name)
        assert entry["errors"] == 0, f"provider faults: {entry['last_error']}"
        assert report.status == "drained", report.as_dict()


__all__ = [
    "HookDriver", "ProviderContract", "hook_arguments", "load_folder_provider",
    "memhost_home", "memhost_no_network", "memhost_provider", "sample_tool_arguments",
]
