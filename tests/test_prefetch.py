"""Per-turn recall: bounded by prefetch_timeout, skipped while a call is stuck, late results
dropped, and whatever is recalled arrives fenced.

Timing asserts here are deliberately generous; precise numbers live in benchmarks/.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from memhost import MemoryManager, hookimpl
from providers_for_tests import HangingPrefetch, Recorder, wait_for


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    m = MemoryManager.from_home(home, prefetch_timeout=0.2)
    yield m
    m.shutdown(timeout=1)


def timed_turn(manager: MemoryManager, text: str):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    turn = manager.begin_turn(text)
    return turn, time.monotonic() - started


def test_hung_prefetch_is_bounded_then_skipped(home: Path) -> None:
    # A bound of a second, so that a turn that skips the stuck provider (well under half of it,
    # even on a busy machine) cannot be mistaken for one that waited.
    manager = MemoryManager.from_home(home, prefetch_timeout=1.0)
    provider = HangingPrefetch()
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    try:
        first, elapsed = timed_turn(manager, "what is my favourite editor?")
        assert 0.9 < elapsed < 1.0 + 1.0
        assert first.recall == "timed-out" and first.context == ""
        for n in range(5):
            later, elapsed = timed_turn(manager, f"another real question {n}")
            assert elapsed < 0.5, f"turn {n + 2} waited {elapsed:.3f}s on a stuck provider"
            assert later.recall == "skipped-stuck" and later.context == ""
        assert provider.prefetch_calls == 1  # never a second call while the first is stuck
        prefetch = manager.status()["providers"][1]["prefetch"]
        assert prefetch == {"timeout_s": 1.0, "stuck": True, "timeouts": 1,
                            "skipped_while_stuck": 5, "late_results_dropped": 0}
    finally:
        provider.release.set()
        manager.shutdown(timeout=1)


def test_late_result_is_never_injected(manager: MemoryManager) -> None:
    provider = HangingPrefetch(late="LATE RESULT FROM TURN ONE", recall="fresh recall for now")
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    turns = [manager.begin_turn("question one about the deploy")]
    turns.append(manager.begin_turn("question two about the deploy"))
    assert [t.recall for t in turns] == ["timed-out", "skipped-stuck"]
    provider.release.set()  # the stuck call now returns its (late) answer
    wait_for(lambda: not manager.status()["providers"][1]["prefetch"]["stuck"])
    turns.append(manager.begin_turn("question three about the deploy"))
    turns.append(manager.begin_turn("question four about the deploy"))
    assert [t.recall for t in turns[2:]] == ["ok", "ok"]
    assert all("LATE RESULT" not in t.context for t in turns)
    assert "fresh recall for now" in turns[2].context
    prefetch = manager.status()["providers"][1]["prefetch"]
    assert prefetch["late_results_dropped"] == 1 and prefetch["stuck"] is False
    assert [c["query"] for c in provider.of("prefetch")] == [
        "question one about the deploy", "question three about the deploy",
        "question four about the deploy"]


def test_stuck_warning_at_most_once_per_ten_turns(manager: MemoryManager,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    provider = HangingPrefetch()
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    try:
        manager.begin_turn("the first real question")
        with caplog.at_level(logging.WARNING, logger="memhost"):
            for n in range(12):
                assert manager.begin_turn(f"real question {n}").recall == "skipped-stuck"
        stuck = [r for r in caplog.records if "still running" in r.getMessage()]
        assert len(stuck) == 2
        assert "slow" in stuck[0].getMessage()
    finally:
        provider.release.set()


def test_timeout_is_logged_with_the_setting(manager: MemoryManager,
                                            caplog: pytest.LogCaptureFixture) -> None:
    provider = HangingPrefetch()
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    try:
        with caplog.at_level(logging.WARNING, logger="memhost"):
            manager.begin_turn("a question that hangs")
        (record,) = [r for r in caplog.records if "prefetch" in r.getMessage()]
        assert "slow" in record.getMessage() and "memory.prefetch_timeout" in record.getMessage()
    finally:
        provider.release.set()


def test_prefetch_runs_off_the_callers_thread(manager: MemoryManager) -> None:
    provider = Recorder(recall="the user deploys on Fridays")
    manager.register_provider(provider, name="rec")
    manager.start_session("sess-p")
    turn = manager.begin_turn("when do I deploy?")
    assert turn.recall == "ok"
    (call,) = provider.of("prefetch")
    assert call == {"query": "when do I deploy?", "session_id": "sess-p"}
    (thread,) = [name for hook, name in provider.threads if hook == "prefetch"]
    assert thread != threading.current_thread().name


def test_recall_is_fenced_as_context(manager: MemoryManager) -> None:
    manager.register_provider(Recorder(recall="- the user deploys on Fridays"), name="rec")
    manager.start_session("s")
    context = manager.begin_turn("when do I deploy?").context
    assert context.startswith("<memory-context>") and context.endswith("</memory-context>")
    assert "not new input from the user" in context.lower()
    assert "- the user deploys on Fridays" in context


def test_pre_wrapped_recall_is_fenced_once(manager: MemoryManager) -> None:
    wrapped = "<memory-context>\nthe user likes tea\n</memory-context>"
    manager.register_provider(Recorder(recall=wrapped), name="rec")
    manager.start_session("s")
    context = manager.begin_turn("what do I drink?").context
    assert context.count("<memory-context>") == 1 and context.count("</memory-context>") == 1
    assert "the user likes tea" in context


@pytest.mark.parametrize("recall, expected", [(None, "empty"), ("", "empty"), ("  \n", "empty")])
def test_empty_recall_adds_nothing(manager: MemoryManager, recall: str | None,
                                   expected: str) -> None:
    manager.register_provider(Recorder(recall=recall), name="rec")
    manager.start_session("s")
    turn = manager.begin_turn("anything to recall?")
    assert (turn.recall, turn.context) == (expected, "")


def test_failing_prefetch_is_a_counted_fault(home: Path) -> None:
    class Failing(Recorder):
        @hookimpl
        def prefetch(self, query: str) -> str:
            raise ConnectionError("vector store unreachable")

    # A bound far above what a failing call takes, even on a busy machine (the first failure
    # logs its traceback, which the secret masking of log lines may scan): this is about
    # counting faults, not about the bound.
    manager = MemoryManager.from_home(home, prefetch_timeout=10)
    try:
        manager.register_provider(Failing(), name="failing")
        manager.start_session("s")
        turns = [manager.begin_turn(f"question {n} about the api") for n in range(3)]
        assert [t.recall for t in turns] == ["failed"] * 3
        calls = manager.status()["providers"][1]["calls"]["prefetch"]
        assert calls["calls"] == 3 and calls["errors"] == 3
        assert "vector store unreachable" in calls["last_error"]
    finally:
        manager.shutdown(timeout=1)


def test_prefetch_timeout_comes_from_config(home: Path) -> None:
    (home / "config.toml").write_text("[memory]\nprefetch_timeout = 0.3\n")
    manager = MemoryManager.from_home(home)
    provider = HangingPrefetch()
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    try:
        turn, elapsed = timed_turn(manager, "does config apply?")
        assert turn.recall == "timed-out" and 0.25 < elapsed < 0.3 + 1.0
        assert manager.status()["providers"][1]["prefetch"]["timeout_s"] == 0.3
    finally:
        provider.release.set()
        manager.shutdown(timeout=1)


class SlowRecall:
    """Answers each prefetch after a moment: long enough for another turn to start meanwhile,
    well inside a generous bound."""

    def __init__(self) -> None:
        self.started = threading.Event()

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str:
        self.started.set()
        time.sleep(0.3)
        return f"recalled for: {query}"


def test_turns_running_at_once_each_get_their_recall(home: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    # Turns of one manager may run at the same time (a host serving one user from several
    # threads). A call another turn is still waiting for is not a stuck call: this turn's call
    # runs after it, and nothing is skipped, warned about or counted against the provider.
    manager = MemoryManager.from_home(home, prefetch_timeout=30)
    provider = SlowRecall()
    manager.register_provider(provider, name="slow")
    manager.start_session("s")
    results: dict[str, object] = {}

    def turn(text: str) -> None:
        results[text] = manager.begin_turn(text)

    try:
        first = threading.Thread(target=turn, args=("first question about the deploy",))
        first.start()
        assert provider.started.wait(10)
        with caplog.at_level(logging.WARNING, logger="memhost"):
            turn("second question about the deploy")
        first.join(30)
        assert {text: t.recall for text, t in results.items()} == {  # type: ignore[attr-defined]
            "first question about the deploy": "ok", "second question about the deploy": "ok"}
        assert "still running" not in caplog.text
        status = manager.status()["providers"][1]
        assert status["prefetch"]["skipped_while_stuck"] == 0 and status["prefetch"]["stuck"] is False
        assert status["health"]["state"] == "ok" and status["health"]["failing_hooks"] == {}, status
    finally:
        manager.shutdown(timeout=5)
