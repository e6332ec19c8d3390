"""The hook spec and registration: what a provider may implement, and what fails at load."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any

import pluggy
import pytest

import memhost
from memhost import MemoryManager, ProviderError, hookimpl, hookspecs
from memhost.providers import HOOK_NAMES
from providers_for_tests import ALL_HOOKS, Recorder

DESIGN_HOOKS = {
    "check_available": ("config",),
    # user_id: added for MemoryHub (opt-in, as pluggy lets the spec grow without breaking anyone)
    "initialize": ("session_id", "home", "config", "context", "user_id"),
    "prompt_fragment": ("session_id",),
    "tool_schemas": (),
    "handle_tool_call": ("tool_name", "arguments", "session_id"),
    "prefetch": ("query", "session_id"),
    "queue_prefetch": ("query", "session_id"),
    "sync_turn": ("user_content", "assistant_content", "session_id", "messages"),
    "session_end": ("session_id", "messages"),
    "rotate": ("old_session_id", "new_session_id", "reason"),
    "pre_compress": ("session_id", "messages"),
    "on_builtin_write": ("action", "target", "content", "previous_content", "session_id", "origin"),
    "on_subtask": ("task", "result", "child_session_id", "session_id"),
    "shutdown": (),
    # Beyond the design's table: called only by `memhost providers check`, so that its scripted
    # session writes to a scratch store and never to the user's real one.
    "scratch_config": ("config", "home"),
}


def spec_hooks() -> dict[str, tuple[str, ...]]:
    pm = pluggy.PluginManager("memhost")
    pm.add_hookspecs(hookspecs)
    return {name: tuple(getattr(pm.hook, name).spec.argnames) for name in HOOK_NAMES}


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    m = MemoryManager.from_home(home)
    yield m
    m.shutdown(timeout=1)


def test_spec_matches_the_design_table() -> None:
    assert spec_hooks() == DESIGN_HOOKS
    assert set(HOOK_NAMES) == set(ALL_HOOKS)


def test_every_hook_is_typed_and_says_when_and_on_which_thread() -> None:
    for name in HOOK_NAMES:
        func = getattr(hookspecs, name)
        doc = inspect.getdoc(func) or ""
        assert "thread" in doc or "worker" in doc, f"{name}: docstring must name the thread"
        assert "block" in doc, f"{name}: docstring must say whether it may block"
        hints = inspect.get_annotations(func)
        assert "return" in hints, f"{name} has no return annotation"
        for arg in DESIGN_HOOKS[name]:
            assert arg in hints, f"{name}({arg}) is not typed"


def test_hookimpl_is_the_memhost_marker() -> None:
    assert isinstance(memhost.hookimpl, pluggy.HookimplMarker)
    assert memhost.hookimpl.project_name == "memhost"
    assert hookspecs.hookspec.project_name == "memhost"


def test_misspelt_hook_names_provider_and_hook(manager: MemoryManager) -> None:
    class Misspelt:
        @hookimpl
        def prefech(self, query: str) -> None:  # noqa: D401 - the typo is the point
            return None

    with pytest.raises(ProviderError) as err:
        manager.register_provider(Misspelt(), name="typo-provider")
    message = str(err.value)
    assert "typo-provider" in message and "prefech" in message
    assert "did you mean 'prefetch'" in message
    # nothing half-registered: a correct provider can still take the external slot
    assert manager.register_provider(Recorder(), name="good")
    assert manager.status()["external_provider"] == "good"


def test_misspelt_argument_names_provider_hook_and_argument(manager: MemoryManager) -> None:
    class BadArg:
        @hookimpl
        def sync_turn(self, user_content: str, sesion_id: str) -> None:
            pass

    with pytest.raises(ProviderError) as err:
        manager.register_provider(BadArg(), name="badarg")
    message = str(err.value)
    assert "badarg" in message and "sync_turn" in message and "sesion_id" in message


def test_misspelt_argument_with_a_default_is_refused(manager: MemoryManager) -> None:
    # pluggy only checks parameters without defaults; this one would silently stay "" forever.
    class DefaultTypo:
        @hookimpl
        def prefetch(self, query: str, sesion_id: str = "") -> None:
            return None

    with pytest.raises(ProviderError) as err:
        manager.register_provider(DefaultTypo(), name="defaulttypo")
    message = str(err.value)
    assert "defaulttypo" in message and "prefetch" in message and "sesion_id" in message
    assert "did you mean 'session_id'" in message


@pytest.mark.parametrize("source", [
    "def prefetch(self, query, *, session_id=''): return None",
    "def prefetch(self, query, **kwargs): return None",
    "def prefetch(self, *args): return None",
])
def test_arguments_pluggy_would_never_pass_are_refused(manager: MemoryManager, source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # noqa: S102 - builds the one method under test
    provider_cls = type("Odd", (), {"prefetch": hookimpl(namespace["prefetch"])})
    with pytest.raises(ProviderError) as err:
        manager.register_provider(provider_cls(), name="odd")
    assert "odd" in str(err.value) and "prefetch" in str(err.value)


def test_a_signature_verdict_holds_for_every_instance_and_only_for_its_hook() -> None:
    # Verdicts are remembered per function: each later instance of a refused class is refused
    # again, with the same words, and the same function under another hook is judged anew.
    from memhost.providers import ProviderSet

    def query_only(self: Any, query: str = "") -> None:
        return None

    Recall = type("Recall", (), {"prefetch": hookimpl(query_only)})
    Misnamed = type("Misnamed", (), {"on_builtin_write": hookimpl(query_only)})
    assert ProviderSet().register(Recall(), "first").hooks == {"prefetch"}
    assert ProviderSet().register(Recall(), "second").hooks == {"prefetch"}
    refusals = []
    for name in ("third", "fourth"):
        with pytest.raises(ProviderError) as err:
            ProviderSet().register(Misnamed(), name)
        refusals.append(str(err.value).replace(name, "NAME"))
    assert refusals[0] == refusals[1] and "has no argument 'query'" in refusals[0]


def test_provider_without_any_hookimpl_is_refused(manager: MemoryManager) -> None:
    class Forgot:
        def sync_turn(self, user_content: str) -> None:  # no @hookimpl
            pass

    with pytest.raises(ProviderError, match="forgot.*no memhost hook.*hookimpl"):
        manager.register_provider(Forgot(), name="forgot")


def test_default_argument_in_the_spec_is_passed(manager: MemoryManager) -> None:
    seen: list[str] = []

    class Defaults:
        @hookimpl
        def sync_turn(self, user_content: str, session_id: str = "unset") -> None:
            seen.append(session_id)

    assert manager.register_provider(Defaults(), name="defaults")
    manager.start_session("sess-1")
    manager.finish_turn("tell me about the weather", "it is sunny")
    assert manager.flush(5)
    assert seen == ["sess-1"]


def test_fewer_arguments_than_the_spec_opt_in(manager: MemoryManager) -> None:
    got: dict[str, Any] = {}

    class Minimal:
        @hookimpl
        def sync_turn(self, assistant_content: str) -> None:
            got["sync"] = assistant_content

        @hookimpl
        def prefetch(self) -> str:
            return "the user likes tea"

        @hookimpl
        def rotate(self, reason: str) -> None:
            got["rotate"] = reason

        @hookimpl
        def shutdown(self) -> None:
            got["shutdown"] = True

    assert manager.register_provider(Minimal(), name="minimal")
    manager.start_session("s1")
    turn = manager.begin_turn("what do I drink in the morning?")
    assert "the user likes tea" in turn.context
    manager.finish_turn("what do I drink in the morning?", "tea, probably")
    manager.rotate("s2", "resume")
    report = manager.shutdown(timeout=2)
    assert report.status == "drained"
    assert got == {"sync": "tea, probably", "rotate": "resume", "shutdown": True}
    assert manager.status()["providers"][1]["hooks"] == ["prefetch", "rotate", "shutdown", "sync_turn"]


def test_a_module_level_object_with_some_hooks_is_a_provider(manager: MemoryManager) -> None:
    class Partial:
        @hookimpl
        def queue_prefetch(self, query: str) -> None:
            pass

    assert manager.register_provider(Partial(), name="partial")
    status = manager.status()
    assert [p["name"] for p in status["providers"]] == ["builtin", "partial"]
    assert status["providers"][1]["hooks"] == ["queue_prefetch"]


def test_second_external_is_refused_with_a_warning(manager: MemoryManager,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    first, second = Recorder(), Recorder()
    assert manager.register_provider(first, name="alpha")
    with caplog.at_level(logging.WARNING, logger="memhost"):
        assert manager.register_provider(second, name="beta") is False
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert "beta" in warning and "'alpha'" in warning and "memory.provider" in warning
    status = manager.status()
    assert status["external_provider"] == "alpha"
    assert [p["name"] for p in status["providers"]] == ["builtin", "alpha"]
    assert any(p["provider"] == "beta" and "alpha" in p["problem"] for p in status["problems"])
    # the refused provider is never called
    manager.start_session("s")
    manager.finish_turn("hello there, remember this", "ok")
    manager.flush(5)
    assert second.calls == []
    assert first.of("sync_turn")


@pytest.mark.parametrize("name", ["builtin", "", "has space", "../escape"])
def test_bad_provider_names_are_refused(manager: MemoryManager, name: str) -> None:
    with pytest.raises(ProviderError):
        manager.register_provider(Recorder(), name=name)


def test_unavailable_provider_is_reported_not_registered(manager: MemoryManager,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    class Unavailable(Recorder):
        @hookimpl
        def check_available(self, config: dict[str, Any]) -> str | None:
            return "the server at localhost:9 is not running"

    class RaisingCheck(Recorder):
        @hookimpl
        def check_available(self, config: dict[str, Any]) -> str | None:
            raise RuntimeError("cannot even check")

    with caplog.at_level(logging.WARNING, logger="memhost"):
        assert manager.register_provider(Unavailable(), name="down") is False
        assert manager.register_provider(RaisingCheck(), name="broken") is False
    problems = manager.status()["problems"]
    assert any(p["provider"] == "down" and "localhost:9" in p["problem"] for p in problems)
    assert any(p["provider"] == "broken" and "cannot even check" in p["problem"] for p in problems)
    assert manager.status()["external_provider"] is None
    # the external slot is still free
    assert manager.register_provider(Recorder(), name="up")


def test_check_available_gets_the_provider_config(home: Path) -> None:
    (home / "config.toml").write_text('[providers.rec]\nurl = "http://localhost:1"\n')
    manager = MemoryManager.from_home(home)
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    assert rec.of("check_available") == [{"config": {"url": "http://localhost:1"}}]
    manager.start_session("s1", context="subagent")
    (init,) = rec.of("initialize")
    assert init == {"session_id": "s1", "home": home, "config": {"url": "http://localhost:1"},
                    "context": "subagent"}
    manager.shutdown(timeout=1)


def test_provider_registered_mid_session_is_initialised(manager: MemoryManager) -> None:
    manager.start_session("live")
    rec = Recorder()
    manager.register_provider(rec, name="late")
    assert rec.of("initialize")[0]["session_id"] == "live"


class _Recall:
    """A provider class whose later instances may carry a hook of their own."""

    __slots__ = ("__dict__", "late")
    sync_turn = None  # not a hook on the class; an instance may hold one under this name

    def __init__(self) -> None:
        self.late = None

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str:
        return "from the class"

    def helper(self) -> str:  # not a hook: remembered as such for the class
        return "help"


def test_later_instances_of_a_provider_class_get_exactly_the_hooks_they_hold() -> None:
    from memhost.providers import ProviderSet

    first = ProviderSet().register(_Recall(), "first")
    assert first.hooks == {"prefetch"}

    # Its own attributes (in __dict__ or in a slot) are examined for every instance, even where
    # the class's first instance had nothing there.
    own = _Recall()
    own.__dict__["sync_turn"] = hookimpl(lambda user_content, assistant_content, session_id: None)
    assert ProviderSet().register(own, "own").hooks == {"prefetch", "sync_turn"}
    slotted = _Recall()
    slotted.late = hookimpl(lambda session_id: None)
    slotted.late.__name__ = "late"
    with pytest.raises(ProviderError, match="late"):  # examined, and refused as an unknown hook
        ProviderSet().register(slotted, "slotted")

    # And a plain later instance gets the class's hooks, no more.
    assert ProviderSet().register(_Recall(), "again").hooks == {"prefetch"}
