"""The background FIFO: order, session boundaries, flush, and retries of passing failures."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, RetryableError, hookimpl
from providers_for_tests import Recorder, WedgedSync, wait_for


@pytest.fixture
def manager(home: Path) -> MemoryManager:
    m = MemoryManager.from_home(home)
    yield m
    m.shutdown(timeout=2)


def turn(manager: MemoryManager, n: int) -> None:
    manager.begin_turn(f"question number {n}")
    manager.finish_turn(f"question number {n}", f"answer number {n}",
                        messages=[{"role": "user", "content": f"question number {n}"},
                                  {"role": "assistant", "content": f"answer number {n}"}])


def test_five_syncs_arrive_in_order_without_the_host_waiting(manager: MemoryManager) -> None:
    rec = WedgedSync()
    manager.register_provider(rec, name="wedged")
    manager.start_session("s")
    safety = threading.Timer(10, rec.release.set)  # never needed unless finish_turn blocks
    safety.start()
    try:
        for n in range(1, 6):
            turn(manager, n)
        # every finish_turn returned while the provider was still stuck in the first sync
        assert rec.entered.wait(5)
        assert rec.of("sync_turn") == [] and not rec.release.is_set()
        assert manager.status()["background"]["running"] == "sync_turn"
        assert manager.status()["background"]["queued"] >= 4
    finally:
        rec.release.set()
        safety.cancel()
    assert manager.flush(5)
    syncs = rec.of("sync_turn")
    assert [s["user_content"] for s in syncs] == [f"question number {n}" for n in range(1, 6)]
    assert [s["assistant_content"] for s in syncs] == [f"answer number {n}" for n in range(1, 6)]
    assert all(s["session_id"] == "s" for s in syncs)
    assert syncs[2]["messages"] == [{"role": "user", "content": "question number 3"},
                                    {"role": "assistant", "content": "answer number 3"}]


def test_background_hooks_run_on_the_worker_thread(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    turn(manager, 1)
    manager.subtask_finished("summarise the logs", "three errors", "child-1")
    manager.call_tool("memory", {"action": "add", "target": "memory", "content": "Uses zsh"})
    manager.rotate("s2", "new", messages=[])
    assert manager.flush(5)
    main = threading.current_thread().name
    threads = dict((hook, name) for hook, name in rec.threads)
    for hook in ("sync_turn", "queue_prefetch", "on_subtask", "on_builtin_write", "session_end",
                 "rotate"):
        assert threads[hook] != main and threads[hook].startswith("memhost-worker"), hook
    assert threads["prefetch"] != main  # off the caller's thread too
    # The host waits for initialize (bounded by memory.hook_timeout) on the provider's own
    # daemon thread, so a hang there cannot hold the host.
    assert threads["initialize"] == "memhost-call-rec"


def test_everything_shares_one_fifo(manager: MemoryManager) -> None:
    rec = WedgedSync()
    manager.register_provider(rec, name="rec")
    manager.start_session("s1")
    turn(manager, 1)  # wedges the worker, so everything below queues behind it
    manager.call_tool("memory", {"action": "add", "target": "memory", "content": "Uses fish"})
    manager.subtask_finished("lint the repo", "clean", "child-9")
    manager.rotate("s2", "new", messages=[{"role": "user", "content": "bye"}])
    turn(manager, 2)
    manager.end_session([{"role": "user", "content": "question number 2"}])
    rec.release.set()
    assert manager.flush(5)
    background = [h for h in rec.hooks() if h not in ("check_available", "tool_schemas",
                                                      "initialize", "prefetch")]
    assert background == ["sync_turn", "queue_prefetch", "on_builtin_write", "on_subtask",
                          "session_end", "rotate", "sync_turn", "queue_prefetch", "session_end"]
    ends = rec.of("session_end")
    assert ends[0] == {"session_id": "s1", "messages": [{"role": "user", "content": "bye"}]}
    assert ends[1]["session_id"] == "s2"
    assert rec.of("on_subtask") == [{"task": "lint the repo", "result": "clean",
                                     "child_session_id": "child-9", "session_id": "s1"}]
    assert [s["session_id"] for s in rec.of("sync_turn")] == ["s1", "s2"]


def test_boundary_runs_session_end_before_rotate(manager: MemoryManager) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("old")
    transcript = [{"role": "user", "content": "plan the trip"},
                  {"role": "assistant", "content": "done"}]
    manager.rotate("fresh", "new", messages=transcript)
    assert manager.flush(5)
    boundary = [(h, k) for h, k in rec.calls if h in ("session_end", "rotate")]
    assert boundary == [
        ("session_end", {"session_id": "old", "messages": transcript}),
        ("rotate", {"old_session_id": "old", "new_session_id": "fresh", "reason": "new"}),
    ]
    assert manager.session_id == "fresh"


@pytest.mark.parametrize("reason", ["resume", "branch", "compress", "rewind"])
def test_other_rotations_only_rotate(manager: MemoryManager, reason: str) -> None:
    rec = Recorder()
    manager.register_provider(rec, name="rec")
    manager.start_session("a")
    manager.rotate("b", reason)
    assert manager.flush(5)
    assert rec.of("session_end") == []
    assert rec.of("rotate") == [{"old_session_id": "a", "new_session_id": "b", "reason": reason}]


def test_flush_waits_and_times_out(manager: MemoryManager) -> None:
    assert manager.flush(1)  # nothing queued
    rec = WedgedSync()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    turn(manager, 1)
    assert manager.flush(0.2) is False
    rec.release.set()
    assert manager.flush(5) is True
    assert len(rec.of("sync_turn")) == 1


class Flaky(Recorder):
    """Raises RetryableError the first ``failures`` times each listed hook sees ``marker``."""

    def __init__(self, failures: int, marker: str) -> None:
        super().__init__()
        self.failures = failures
        self.marker = marker
        self.attempts: list[str] = []

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        self.attempts.append(user_content)
        if self.marker in user_content and self.attempts.count(user_content) <= self.failures:
            raise RetryableError("database is locked")
        super().sync_turn(user_content, assistant_content, session_id, messages)

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        self.attempts.append(f"rotate {new_session_id}")
        if self.attempts.count(f"rotate {new_session_id}") <= self.failures:
            raise RetryableError("connection reset")
        super().rotate(old_session_id, new_session_id, reason)


def test_retryable_error_is_retried_in_order(manager: MemoryManager) -> None:
    rec = Flaky(failures=2, marker="number 2")
    manager.register_provider(rec, name="flaky")
    manager.start_session("s")
    for n in (1, 2, 3):
        turn(manager, n)
    seen = wait_for(lambda: manager.status()["background"]["retrying"], timeout=5)
    assert seen["task"] == "sync_turn" and "database is locked" in seen["last_error"]
    assert manager.flush(10)
    # turn 3 waited for turn 2's retries: order holds, and each turn landed exactly once
    assert [s["user_content"] for s in rec.of("sync_turn")] == [
        "question number 1", "question number 2", "question number 3"]
    assert rec.attempts == ["question number 1"] + ["question number 2"] * 3 + ["question number 3"]
    status = manager.status()
    assert status["background"]["retrying"] == {}
    assert status["outbox_pending"] == 0
    assert status["providers"][1]["calls"]["sync_turn"]["errors"] == 2
    assert "retryable" in status["providers"][1]["calls"]["sync_turn"]["last_error"]


def test_retry_of_a_boundary_resumes_at_the_failed_call(manager: MemoryManager) -> None:
    rec = Flaky(failures=1, marker="never")
    manager.register_provider(rec, name="flaky")
    manager.start_session("s1")
    manager.rotate("s2", "new", messages=[])
    turn(manager, 1)
    assert manager.flush(10)
    assert [h for h in rec.hooks() if h in ("session_end", "rotate", "sync_turn")] == [
        "session_end", "rotate", "sync_turn"]
    assert rec.attempts == ["rotate s2", "rotate s2", "question number 1"]


def test_a_failing_write_does_not_stop_later_ones(manager: MemoryManager) -> None:
    class FailsOnce(Recorder):
        failed = False

        @hookimpl
        def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                      messages: list[dict[str, Any]]) -> None:
            if not self.failed:
                self.failed = True
                raise ValueError("bad row")
            super().sync_turn(user_content, assistant_content, session_id, messages)

    rec = FailsOnce()
    manager.register_provider(rec, name="failsonce")
    manager.start_session("s")
    for n in (1, 2, 3):
        turn(manager, n)
    assert manager.flush(5)
    assert [s["user_content"] for s in rec.of("sync_turn")] == ["question number 2",
                                                                "question number 3"]
    calls = manager.status()["providers"][1]["calls"]["sync_turn"]
    assert calls["errors"] == 1 and "ValueError: bad row" in calls["last_error"]
    assert manager.status()["outbox_pending"] == 0  # a plain fault is counted, not retried


def test_queued_payload_is_a_snapshot(manager: MemoryManager) -> None:
    rec = WedgedSync()
    manager.register_provider(rec, name="rec")
    manager.start_session("s")
    transcript = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"}]
    manager.finish_turn("first", "one", messages=transcript)
    # the host keeps appending to and editing its transcript while the write is queued
    transcript.append({"role": "user", "content": "second"})
    transcript[0]["content"] = "edited later"
    rec.release.set()
    assert manager.flush(5)
    assert rec.of("sync_turn")[0]["messages"] == [{"role": "user", "content": "first"},
                                                  {"role": "assistant", "content": "one"}]
