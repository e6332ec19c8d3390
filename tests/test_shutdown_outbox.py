"""Shutdown within a bound, its report, and the outbox that keeps what shutdown (or a dead
process) left behind until the next manager replays it."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, RetryableError, hookimpl
from providers_for_tests import Recorder, WedgedSync, wait_for


def session(home: Path, provider: Any, name: str, session_id: str,
            **overrides: Any) -> MemoryManager:
    """A manager on ``home`` with ``provider`` registered as ``name``, in session ``session_id``."""
    manager = MemoryManager.from_home(home, **overrides)
    manager.register_provider(provider, name=name)
    manager.start_session(session_id)
    return manager


def synced(provider: Recorder) -> list[str]:
    """The user messages of the turns ``provider`` was given, in order."""
    return [s["user_content"] for s in provider.of("sync_turn")]


def replayed(home: Path, name: str, session_id: str) -> list[str]:
    """The turns a new manager on ``home`` hands a fresh provider named ``name`` from the
    outbox."""
    fresh = Recorder()
    manager = session(home, fresh, name, session_id)
    assert manager.flush(5)
    found = synced(fresh)
    manager.shutdown(timeout=2)
    return found


def turn(manager: MemoryManager, n: int) -> None:
    manager.begin_turn(f"question number {n}")
    manager.finish_turn(f"question number {n}", f"answer number {n}")


def journals(home: Path, provider: str) -> list[Path]:
    folder = home / "outbox" / provider
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def test_clean_shutdown_drains_then_shuts_down_in_reverse_once(home: Path) -> None:
    order: list[str] = []

    class Ordered(Recorder):
        @hookimpl
        def shutdown(self) -> None:
            order.append("external")
            super().shutdown()

    rec = Ordered()
    manager = session(home, rec, "rec", "s")
    for n in range(3):
        turn(manager, n)
    report = manager.shutdown(timeout=5)
    assert report.status == "drained"
    assert (report.abandoned_writes, report.abandoned_prefetches, report.active_tasks,
            report.kept_in_outbox) == (0, 0, 0, 0)
    assert report.providers_shut_down == ("rec", "builtin")
    # shutdown ran after every queued write had landed
    assert rec.hooks()[-1] == "shutdown" and len(rec.of("sync_turn")) == 3
    assert manager.shutdown(timeout=5) is report  # a second call changes nothing
    assert order == ["external"]
    assert manager.status()["shutdown"]["status"] == "drained"
    assert journals(home, "rec") == []


def test_late_work_after_shutdown_is_kept_for_the_next_manager(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A write made after shutdown (a host thread still finishing its turn, or a manager a hub
    closed while the host held it) is not the provider's to take any more, and not lost
    either: the next manager started with that provider delivers it, in the order made."""
    rec = Recorder()
    manager = session(home, rec, "rec", "s")
    manager.shutdown(timeout=2)
    before = len(rec.calls)
    with caplog.at_level(logging.WARNING):
        manager.finish_turn("one more question", "one more answer")
        manager.subtask_finished("task", "result", "child")
        manager.end_session([])
        answer = manager.call_tool("memory", {"action": "add", "target": "memory",
                                              "content": "Written after shutdown"})
    assert '"success": true' in answer  # the builtin store itself still works
    assert "Written after shutdown" in (home / "memories" / "MEMORY.md").read_text()
    assert len(rec.calls) == before  # nothing reached the provider that was shut down
    messages = [r.getMessage() for r in caplog.records]
    assert any("shut down" in m and "sync_turn" in m and "kept" in m for m in messages), messages
    assert not any(r.exc_info for r in caplog.records)
    assert manager.flush(1) is True
    assert len(journals(home, "rec")) == 4

    fresh = Recorder()
    after = session(home, fresh, "rec", "s2")
    assert after.flush(5)
    delivered = [hook for hook in fresh.hooks()
                 if hook in ("sync_turn", "on_subtask", "session_end", "on_builtin_write")]
    assert delivered == ["sync_turn", "on_subtask", "session_end", "on_builtin_write"]
    assert fresh.of("sync_turn")[0]["user_content"] == "one more question"
    assert fresh.of("on_builtin_write")[0]["content"] == "Written after shutdown"
    after.shutdown(timeout=2)
    assert journals(home, "rec") == []  # each delivered once, then gone


def test_a_late_write_that_cannot_be_kept_is_reported_as_lost(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    manager = session(home, Recorder(), "rec", "s")
    manager.shutdown(timeout=2)
    outbox = home / "outbox" / "rec"
    shutil.rmtree(outbox)
    outbox.write_text("a file where the outbox folder should be\n")  # no journal can go there
    with caplog.at_level(logging.WARNING):
        manager.finish_turn("one more question", "one more answer")
    lost = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert lost and "lost" in lost[0].getMessage() and "sync_turn" in lost[0].getMessage()


def test_provider_reported_loss_is_completed_with_loss(home: Path) -> None:
    class Lossy(Recorder):
        @hookimpl
        def shutdown(self) -> dict[str, int]:
            return {"abandoned_writes": 2, "abandoned_prefetches": 1}

    manager = session(home, Lossy(), "lossy", "s")
    report = manager.shutdown(timeout=2)
    assert report.status == "completed_with_loss"
    assert report.provider_reports == {"lossy": {"abandoned_writes": 2, "abandoned_prefetches": 1}}


def test_hanging_provider_shutdown_is_bounded(home: Path) -> None:
    release = threading.Event()

    class SlowShutdown(Recorder):
        @hookimpl
        def shutdown(self) -> None:
            release.wait()

    manager = session(home, SlowShutdown(), "slow", "s")
    started = time.monotonic()
    try:
        report = manager.shutdown(timeout=0.3)
        assert time.monotonic() - started < 0.3 + 1.5
        assert report.status == "timed_out"
        assert "builtin" not in report.providers_shut_down  # still waiting on 'slow'
    finally:
        release.set()


def test_wedged_provider_shutdown_is_bounded_and_replayed_once(home: Path) -> None:
    wedged = WedgedSync()
    first = session(home, wedged, "store", "s1")
    try:
        for n in (1, 2, 3):
            turn(first, n)
        assert wedged.entered.wait(5)
        started = time.monotonic()
        report = first.shutdown(timeout=0.5)
        assert time.monotonic() - started < 0.5 + 1.0
        assert report.status == "timed_out"
        assert report.active_tasks == 1  # sync 1, stuck in the provider
        assert report.abandoned_writes == 2  # syncs 2 and 3, never started
        assert report.abandoned_prefetches == 3  # warm-ups are not kept
        assert report.kept_in_outbox == 3
        assert report.providers_shut_down == ()  # never while a provider task runs
        assert "shutdown" not in wedged.hooks()
        assert first.status()["shutdown"]["kept_in_outbox"] == 3
    finally:
        wedged.release.set()
    # sync 1 returns: the first manager acknowledges it, then gives its journal up and shuts
    # its provider down (a journal given up while sync 1 still ran would deliver it twice)
    wait_for(lambda: "shutdown" in wedged.hooks())
    assert synced(wedged) == ["question number 1"]

    # the next manager, with a fresh instance of the same provider, replays the outbox
    fresh = Recorder()
    second = session(home, fresh, "store", "s2")
    turn(second, 4)
    assert second.flush(5)
    assert synced(fresh) == ["question number 2", "question number 3", "question number 4"]
    assert [s["session_id"] for s in fresh.of("sync_turn")] == ["s1", "s1", "s2"]
    assert second.shutdown(timeout=2).status == "drained"
    assert journals(home, "store") == []

    # nothing is delivered twice: a third manager finds nothing left
    assert replayed(home, "store", "s3") == []


def test_a_turn_finished_while_shutdown_waits_reaches_the_next_manager(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Another thread finishing a turn while shutdown waits for a wedged provider: the worker
    takes no new task any more, but the write was journalled first, so it is kept, said to be
    kept, and delivered once by the next manager."""
    wedged = WedgedSync()
    first = session(home, wedged, "store", "s1")
    turn(first, 1)
    assert wedged.entered.wait(5)

    def finish_late() -> None:
        # As soon as shutdown has begun: its drain waits the whole bound for the wedged call.
        wait_for(lambda: not first._worker._accepting)
        turn(first, 2)

    late = threading.Thread(target=finish_late)
    late.start()
    try:
        with caplog.at_level(logging.WARNING):
            report = first.shutdown(timeout=2.0)
        late.join(5)
    finally:
        wedged.release.set()
    assert report.status == "timed_out"
    messages = [r.getMessage() for r in caplog.records]
    assert any("late write sync_turn stays in the outbox" in m for m in messages), messages
    assert not any("dropped late write" in m for m in messages), messages
    wait_for(lambda: "shutdown" in wedged.hooks())
    assert replayed(home, "store", "s2") == ["question number 2"]
    assert replayed(home, "store", "s3") == []


class DatabaseDown(Recorder):
    @hookimpl
    def sync_turn(self) -> None:
        raise RetryableError("database is locked")


def test_replay_waits_for_initialize(home: Path) -> None:
    first = session(home, DatabaseDown(), "db", "s1")
    turn(first, 1)
    turn(first, 2)
    first.shutdown(timeout=0.3)

    class NeedsInit(Recorder):
        """Like a real provider: it can only write once initialize opened its connection."""

        connected = False

        @hookimpl
        def initialize(self, session_id: str, home: Path, config: dict[str, Any],
                       context: str) -> None:
            self.connected = True
            super().initialize(session_id, home, config, context)

        @hookimpl
        def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                      messages: list[dict[str, Any]]) -> None:
            if not self.connected:
                raise RuntimeError("not connected")
            super().sync_turn(user_content, assistant_content, session_id, messages)

    fresh = NeedsInit()
    second = MemoryManager.from_home(home)
    second.register_provider(fresh, name="db")
    assert second.flush(2)
    assert fresh.of("sync_turn") == []  # nothing replayed before the session starts
    second.start_session("s2")
    assert second.flush(5)
    assert synced(fresh) == ["question number 1", "question number 2"]
    assert fresh.hooks().index("initialize") < fresh.hooks().index("sync_turn")
    assert second.status()["providers"][1]["errors"] == 0
    second.shutdown(timeout=2)


def test_write_parked_in_retry_is_kept_and_replayed(home: Path) -> None:
    first = session(home, DatabaseDown(), "db", "s1")
    turn(first, 1)
    deadline = time.monotonic() + 5
    while not first.status()["background"]["retrying"] and time.monotonic() < deadline:
        time.sleep(0.01)
    # A bound long enough for a busy machine: with 0.3 s a retry attempt still inside the
    # provider at the bound made it "timed_out" instead.
    report = first.shutdown(timeout=2)
    assert report.abandoned_writes == 1 and report.active_tasks == 0
    assert report.kept_in_outbox == 1
    assert report.status == "completed_with_loss"

    assert replayed(home, "db", "s2") == ["question number 1"]


def test_outbox_of_a_live_manager_is_not_replayed_elsewhere(home: Path) -> None:
    wedged = WedgedSync()
    first = session(home, wedged, "shared", "s1")
    try:
        turn(first, 1)
        assert wedged.entered.wait(5)
        other = Recorder()
        second = session(home, other, "shared", "s2")
        assert second.flush(2)
        assert other.of("sync_turn") == []  # first is alive and still owns its journal
        report = second.shutdown(timeout=2)
        # first's pending write is not something second's shutdown left behind
        assert report.status == "drained" and report.kept_in_outbox == 0
    finally:
        wedged.release.set()
    assert first.shutdown(timeout=5).status == "drained"
    assert synced(wedged) == ["question number 1"]
    assert journals(home, "shared") == []


CHILD = textwrap.dedent("""
    import sys, threading, time
    from memhost import MemoryManager, hookimpl

    entered = threading.Event()

    class Blocker:
        @hookimpl
        def sync_turn(self, user_content):
            entered.set()
            threading.Event().wait()

    manager = MemoryManager.from_home()
    manager.register_provider(Blocker(), name="blocker")
    manager.start_session("child-session")
    for n in (1, 2, 3):
        manager.finish_turn(f"child question {n}", f"child answer {n}")
    # all three writes are queued and the first one is stuck inside the provider
    print("READY" if entered.wait(20) else "NOT BLOCKED", flush=True)
    time.sleep(120)
""")


def test_writes_of_a_killed_process_are_replayed_once(home: Path) -> None:
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(30, child.kill)
    watchdog.start()
    try:
        line = child.stdout.readline()  # type: ignore[union-attr]
        assert line.strip() == "READY", f"child: {line!r} {child.stderr.read()}"  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL
    assert len(journals(home, "blocker")) == 1

    fresh = Recorder()
    manager = session(home, fresh, "blocker", "after-crash")
    assert manager.flush(5)
    assert synced(fresh) == ["child question 1", "child question 2", "child question 3"]
    assert {s["session_id"] for s in fresh.of("sync_turn")} == {"child-session"}
    assert manager.shutdown(timeout=2).status == "drained"
    assert journals(home, "blocker") == []

    assert replayed(home, "blocker", "later") == []


def test_shutdown_default_bound_comes_from_config(home: Path) -> None:
    wedged = WedgedSync()
    manager = session(home, wedged, "w", "s", shutdown_timeout=0.2)
    try:
        turn(manager, 1)
        assert wedged.entered.wait(5)
        started = time.monotonic()
        report = manager.shutdown()
        assert time.monotonic() - started < 0.2 + 1.0
        assert report.status == "timed_out" and report.active_tasks == 1
    finally:
        wedged.release.set()


def test_a_drain_stops_waiting_once_the_next_retry_falls_after_its_deadline() -> None:
    """A write parked in a retry wait that ends after the drain's deadline cannot run before
    it: the drain gives up at once (leaving the rest of the bound to the providers' shutdown)
    instead of waiting the deadline out, and counts the write as abandoned."""
    from memhost import RetryableError
    from memhost.worker import BackgroundWorker, Task

    attempts: list[float] = []

    def locked() -> None:
        attempts.append(time.monotonic())
        raise RetryableError("database is locked")

    worker = BackgroundWorker(retry_initial=120.0)  # the first retry comes in two minutes
    worker.submit(Task("write", "sync_turn", locked))
    deadline = time.monotonic() + 10
    while not worker.status()["retrying"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert worker.status()["retrying"], "the write never failed"
    started = time.monotonic()
    writes, prefetches, active = worker.drain(started + 60)
    # Well before the deadline (it used to wait all 60 s): nothing could have run meanwhile.
    assert time.monotonic() - started < 30
    assert (writes, prefetches, active) == (1, 0, 0)
    assert worker.join(10) and len(attempts) == 1


# -- a journal does not grow for the life of its manager ----------------------------------------


def test_a_long_lived_managers_journal_is_emptied_once_nothing_is_owed(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memhost import outbox

    monkeypatch.setattr(outbox, "COMPACT_BYTES", 4096)
    recorder = Recorder()
    manager = session(home, recorder, "rec", "long")
    sizes = []
    for n in range(200):  # each turn's line and its acknowledgement: ~50 KB kept whole
        turn(manager, n)
        assert manager.flush(5)
        [journal] = journals(home, "rec")
        sizes.append(journal.stat().st_size)
    assert max(sizes) < 4096 + 1024, max(sizes)
    assert synced(recorder) == [f"question number {n}" for n in range(200)]
    assert manager.shutdown(timeout=5).status == "drained"
    assert journals(home, "rec") == []


def test_a_journal_that_still_owes_a_write_is_never_emptied(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memhost import outbox

    monkeypatch.setattr(outbox, "COMPACT_BYTES", 512)
    wedged = WedgedSync()
    manager = session(home, wedged, "wedged", "long")
    turn(manager, 0)
    assert wedged.entered.wait(5)  # the first write is stuck in the provider...
    for n in range(1, 30):  # ...while the journal passes the bound
        turn(manager, n)
    [journal] = journals(home, "wedged")
    assert journal.stat().st_size > 512
    owed = [r.calls[0][1]["user_content"] for r in outbox._unacknowledged(journal)]
    assert owed == [f"question number {n}" for n in range(30)]
    wedged.release.set()
    assert manager.flush(5)
    assert synced(wedged) == [f"question number {n}" for n in range(30)]
    assert journal.stat().st_size == 0  # all delivered: emptied
    assert manager.shutdown(timeout=5).status == "drained"


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("value, read_back", [
    ("plain text, § and ünïcode", "plain text, § and ünïcode"),
    (2**70, 2**70),                                   # past 64 bits: the fallback encoder
    ("a lone \ud800 surrogate", "a lone \ud800 surrogate"),
    (_nested(300), _nested(300)),                     # deeper than orjson goes
    ({1: "one", None: "none"}, {"1": "one", "null": "none"}),
    ({"tag"}, "{'tag'}"),                             # no JSON type: its text
    (float("nan"), None),                             # JSON has no NaN
])
def test_a_journal_line_reads_back_as_it_will_be_delivered_and_replayed(
        home: Path, value: Any, read_back: Any) -> None:
    """A live delivery and a replay both read the line the host's thread wrote; whatever a host
    puts in a turn's messages is written, never raised into its turn."""
    from memhost.outbox import Outbox

    journal = Outbox(home, "p").open_journal()
    try:
        record = journal.append([("sync_turn", {"messages": [{"content": value}]})])
        assert record is not None
        expected = (("sync_turn", {"messages": [{"content": read_back}]}),)
        assert record.calls == expected
        assert [r.calls for r in journal.pending()] == [expected]
    finally:
        journal.close()


def _failing_writes(monkeypatch: pytest.MonkeyPatch, *, times: int, part: bool = False) -> None:
    """The next ``times`` journal writes fail as on a full disk (``part``: after writing half
    of the line)."""
    import errno

    from memhost import outbox

    real = outbox.write_all
    left = [times]

    def write_all(fd: int, data: bytes) -> None:
        if left[0] <= 0:
            return real(fd, data)
        left[0] -= 1
        if part:
            os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outbox, "write_all", write_all)


def test_a_write_that_cannot_be_journalled_is_still_delivered(
        home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A full disk under the outbox must not break the host's turn, nor lose the write while
    the process lives: it is delivered from memory, with a WARNING saying what is at risk."""
    rec = Recorder()
    manager = session(home, rec, "rec", "s")
    _failing_writes(monkeypatch, times=2)
    with caplog.at_level(logging.WARNING):
        turn(manager, 1)  # its sync_turn, then the memory write's mirror, are not journalled
        answer = manager.call_tool("memory", {"action": "add", "target": "memory",
                                              "content": "Deploys go through staging."})
    assert '"success": true' in answer
    turn(manager, 2)  # the disk has room again
    assert manager.flush(5)
    assert synced(rec) == ["question number 1", "question number 2"]
    assert [w["content"] for w in rec.of("on_builtin_write")] == ["Deploys go through staging."]
    assert any("could not journal write sync_turn" in r.getMessage() for r in caplog.records)
    assert manager.shutdown(timeout=2).status == "drained"


def test_an_acknowledgement_that_cannot_be_written_stops_nothing(
        home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The write was delivered; only its acknowledgement is missing, so the queue goes on and
    a later replay delivers that write again (twice rather than never), and says so."""
    rec = Recorder()
    manager = session(home, rec, "rec", "s")
    turn(manager, 1)
    assert manager.flush(5)
    from memhost import outbox

    real_ack = outbox.Journal.ack

    def ack_on_a_full_disk(journal: outbox.Journal, seq: int) -> None:
        _failing_writes(monkeypatch, times=1)
        real_ack(journal, seq)

    monkeypatch.setattr(outbox.Journal, "ack", ack_on_a_full_disk)
    with caplog.at_level(logging.WARNING):
        turn(manager, 2)
        assert manager.flush(5)
    monkeypatch.setattr(outbox.Journal, "ack", real_ack)
    turn(manager, 3)  # the worker lives on
    assert manager.flush(5)
    assert synced(rec) == ["question number 1", "question number 2", "question number 3"]
    assert any("could not record a delivered write" in r.getMessage() for r in caplog.records)
    manager.shutdown(timeout=2)
    assert replayed(home, "rec", "s2") == ["question number 2"]


def test_a_journal_line_torn_by_a_full_disk_costs_no_later_line(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that reached the journal only in part leaves a torn line; the next line starts
    on a line of its own, so a replay still reads it."""
    wedged = WedgedSync()
    manager = session(home, wedged, "store", "s")
    turn(manager, 1)  # stuck in the provider: every later write stays owed
    assert wedged.entered.wait(5)
    _failing_writes(monkeypatch, times=1, part=True)
    turn(manager, 2)  # torn in the journal, delivered from memory
    turn(manager, 3)
    try:
        manager.shutdown(timeout=0.3)
    finally:
        wedged.release.set()
    wait_for(lambda: "shutdown" in wedged.hooks())
    assert replayed(home, "store", "s2") == ["question number 3"]


def test_the_worker_outlives_a_task_that_fails_after_it_ran(
        home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """One thread runs every provider write: whatever goes wrong after a write ran (here its
    acknowledgement) is logged, and the writes behind it still run."""
    from memhost import outbox

    rec = Recorder()
    manager = session(home, rec, "rec", "s")
    real_ack = outbox.Journal.ack
    broken = [True]

    def ack_once_broken(journal: outbox.Journal, seq: int) -> None:
        if broken[0]:
            broken[0] = False
            raise RuntimeError("the acknowledgement went wrong")
        real_ack(journal, seq)

    monkeypatch.setattr(outbox.Journal, "ack", ack_once_broken)
    with caplog.at_level(logging.ERROR):
        turn(manager, 1)
        assert manager.flush(5)
    turn(manager, 2)
    assert manager.flush(5)
    assert synced(rec) == ["question number 1", "question number 2"]
    assert any("the queue goes on" in r.getMessage() for r in caplog.records)
    manager.shutdown(timeout=2)
