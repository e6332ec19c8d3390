"""Faults a user hit, each reproduced as it happened and held to what memhost promises: a
provider that cannot run is reported loudly, and no write is dropped."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, hookimpl
from cli_runner import run_memhost
from providers_for_tests import Recorder, WedgedSync, wait_for
from recall_helpers import configure

ROOT = Path(__file__).resolve().parent.parent


def memhost_cli(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    return run_memhost(args, env=env, cwd=ROOT, timeout=timeout)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def session(home: Path, provider: Any, name: str = "ext", **overrides: Any) -> MemoryManager:
    manager = MemoryManager.from_home(home, **overrides)
    assert manager.register_provider(provider, name=name)
    manager.start_session("s1")
    return manager


def turn(manager: MemoryManager, n: int) -> None:
    manager.begin_turn(f"question number {n}")
    manager.finish_turn(f"question number {n}", f"answer number {n}")


# -- 1. a provider that cannot reach its service ----------------------------------------------


def test_postgres_at_a_closed_port_is_unavailable_loudly_and_never_polled(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("psycopg_pool")
    dsn = f"host=127.0.0.1 port={closed_port()} dbname=test user=postgres connect_timeout=2"
    configure(home, "postgres", {"dsn": dsn})
    with caplog.at_level(logging.WARNING):
        manager = MemoryManager.from_home(home)
        manager.start_session("s1")
    try:
        status = manager.status()
        assert status["configured_provider_active"] is False
        (problem,) = [p for p in status["problems"] if p["provider"] == "postgres"]
        assert "unavailable" in problem["problem"] and "initialize" in problem["problem"]
        (entry,) = [p for p in status["providers"] if p["name"] == "postgres"]
        assert entry["health"]["state"] == "unavailable"
        assert any("postgres" in r.getMessage() and "unavailable" in r.getMessage()
                   for r in caplog.records if r.levelno >= logging.WARNING)
        plugin = manager._external.plugin  # type: ignore[union-attr]
        assert plugin.store is None  # the pool was closed, nothing keeps reconnecting
        for n in range(3):
            assert manager.begin_turn(f"what did we decide about deployments {n}?").recall == \
                "unavailable"
            manager.finish_turn(f"what did we decide about deployments {n}?", "Tuesdays.")
        assert "prefetch" not in entry["calls"]
        assert manager.status()["providers"][1]["calls"].get("prefetch") is None
        report = manager.shutdown(timeout=2)
        assert report.kept_in_outbox == 3  # the turns wait for the database, nothing is lost
        assert report.status == "completed_with_loss"
    finally:
        manager.shutdown(timeout=2)

    done = memhost_cli(home, "doctor", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    providers = next(s for s in json.loads(done.stdout)["sections"] if s["name"] == "providers")
    assert providers["configured_active"] is False
    assert any("postgres" in p and "unavailable" in p for p in providers["problems"])


# -- 2. a write hook that raises on every call ----------------------------------------------


class FailingSync(Recorder):
    @hookimpl
    def sync_turn(self, user_content: str) -> None:
        raise ValueError(f"cannot store {user_content!r}")


def test_a_sync_turn_that_always_raises_parks_every_write_and_says_so(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        manager = session(home, FailingSync())
        for n in range(4):
            turn(manager, n)
        assert manager.flush(5)
    status = manager.status()
    assert status["failed_writes"] == 4
    problems = [p for p in status["problems"] if p["provider"] == "ext"]
    assert any(p.get("failed_writes") == 4 for p in problems), problems
    (entry,) = [p for p in status["providers"] if p["name"] == "ext"]
    assert entry["health"]["state"] == "degraded"
    assert "cannot store" in entry["health"]["last_error"]
    report = manager.shutdown(timeout=2)
    assert report.failed_writes == 4 and report.status == "completed_with_loss"

    # One traceback, trimmed of pluggy's frames; the rest are counted; RetryableError is named.
    tracebacks = [r.getMessage() for r in caplog.records if "Traceback" in r.getMessage()]
    assert len(tracebacks) == 1
    assert "pluggy" not in tracebacks[0] and "in sync_turn" in tracebacks[0]
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "RetryableError" in text and "failed/" in text

    failed = sorted((home / "outbox" / "ext" / "failed").glob("*.json"))
    assert len(failed) == 4
    assert json.loads(failed[0].read_text())["calls"][0][0] == "sync_turn"

    done = memhost_cli(home, "doctor", "--json")
    assert done.returncode == 1
    outbox = next(s for s in json.loads(done.stdout)["sections"] if s["name"] == "outbox")
    assert outbox["failed_writes"] == 4 and "cannot store" in " ".join(outbox["problems"])

    listed = memhost_cli(home, "outbox", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["failed"]
    assert [r["hooks"] for r in rows] == [["sync_turn"]] * 4
    assert rows[0]["summary"].startswith("sync_turn: question number")

    # Fixed provider: `outbox retry` hands them back, and the next manager delivers them once.
    retried = memhost_cli(home, "outbox", "retry", "all", "--json")
    assert retried.returncode == 0, retried.stderr
    assert json.loads(retried.stdout)["requeued"] == 4
    assert not list((home / "outbox" / "ext" / "failed").glob("*.json"))
    fresh = Recorder()
    second = session(home, fresh)
    assert second.flush(5)
    assert [s["user_content"] for s in fresh.of("sync_turn")] == [
        f"question number {n}" for n in range(4)]
    assert second.shutdown(timeout=2).status == "drained"


def test_outbox_drop_discards_a_failed_write(home: Path) -> None:
    manager = session(home, FailingSync())
    turn(manager, 1)
    turn(manager, 2)
    manager.shutdown(timeout=2)
    rows = json.loads(memhost_cli(home, "outbox", "list", "--json").stdout)["failed"]
    assert len(rows) == 2
    dropped = memhost_cli(home, "outbox", "drop", rows[0]["id"])
    assert dropped.returncode == 0, dropped.stderr
    left = json.loads(memhost_cli(home, "outbox", "list", "--json").stdout)["failed"]
    assert [r["id"] for r in left] == [rows[1]["id"]]
    unknown = memhost_cli(home, "outbox", "drop", "0000beef")
    assert unknown.returncode == 1 and "0000beef" in unknown.stderr


def test_a_write_retrying_past_its_budget_is_parked(home: Path) -> None:
    from memhost import RetryableError

    class DownForGood(Recorder):
        @hookimpl
        def sync_turn(self) -> None:
            raise RetryableError("the database is down")

    manager = session(home, DownForGood(), write_retry_budget=0.3)
    turn(manager, 1)
    wait_for(lambda: manager.status()["failed_writes"] == 1, timeout=10)
    report = manager.shutdown(timeout=2)
    assert report.failed_writes == 1 and report.kept_in_outbox == 0
    (record,) = (home / "outbox" / "ext" / "failed").glob("*.json")
    data = json.loads(record.read_text())
    assert "the database is down" in data["error"] and data["attempts"] >= 2


# -- 3. a hanging prefetch and process exit -------------------------------------------------

HANGING_PREFETCH = textwrap.dedent("""
    import sys, time
    from memhost import MemoryManager, hookimpl

    class Hangs:
        @hookimpl
        def prefetch(self, query):
            time.sleep(60)

    manager = MemoryManager.from_home(prefetch_timeout=0.2)
    manager.register_provider(Hangs(), name="hangs")
    manager.start_session("s")
    manager.begin_turn("what do you remember about the project plan?")
    report = manager.shutdown(timeout=1.0)
    print(report.status, time.monotonic(), flush=True)
""")


def test_a_hanging_prefetch_does_not_keep_the_process_alive(home: Path) -> None:
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", HANGING_PREFETCH], env=env,
                          capture_output=True, text=True, timeout=120)
    exited = time.monotonic()
    assert done.returncode == 0, done.stderr
    status, shutdown_done = done.stdout.split()
    assert status == "drained"
    # The process ends right after shutdown returned, not when the 60 s call does.
    assert exited - float(shutdown_done) < 20 and exited - started < 50


# -- 4. the worker's thread cannot start ----------------------------------------------------


@pytest.fixture
def worker_threads_fail(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The OS refuses memhost's worker thread (as under a thread limit) until told otherwise."""
    state = {"refusals": 0, "refuse": 1}
    real_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if self.name == "memhost-worker" and state["refuse"]:
            state["refusals"] += 1
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    return state


def test_a_worker_that_cannot_start_neither_raises_nor_loses_writes(
        home: Path, worker_threads_fail: dict[str, int]) -> None:
    rec = Recorder()
    manager = session(home, rec)
    turn(manager, 1)  # does not raise into the host
    turn(manager, 2)
    assert worker_threads_fail["refusals"] >= 2  # each write tried again to start the worker
    assert manager.flush(0.5) is False
    report = manager.shutdown(timeout=1)
    assert report.providers_shut_down == ("ext", "builtin")
    assert report.status == "completed_with_loss"
    assert report.abandoned_writes >= 2 and report.kept_in_outbox == 2
    worker_threads_fail["refuse"] = 0
    fresh = Recorder()
    later = session(home, fresh)
    assert later.flush(5)
    assert [s["user_content"] for s in fresh.of("sync_turn")] == [
        "question number 1", "question number 2"]
    later.shutdown(timeout=2)


def test_a_worker_that_starts_on_a_later_try_runs_every_write(
        home: Path, worker_threads_fail: dict[str, int]) -> None:
    rec = Recorder()
    manager = session(home, rec)
    turn(manager, 1)
    worker_threads_fail["refuse"] = 0
    turn(manager, 2)
    assert manager.flush(5)
    assert [s["user_content"] for s in rec.of("sync_turn")] == [
        "question number 1", "question number 2"]
    assert manager.shutdown(timeout=2).status == "drained"


# -- 5. flush after a shutdown that timed out -----------------------------------------------


def test_flush_after_a_timed_out_shutdown_waits_for_the_running_task(home: Path) -> None:
    wedged = WedgedSync()
    manager = session(home, wedged)
    try:
        turn(manager, 1)
        assert wedged.entered.wait(5)
        assert manager.shutdown(timeout=0.3).status == "timed_out"
        assert manager.flush(0.3) is False  # the sync is still running
    finally:
        wedged.release.set()
    assert manager.flush(5) is True


# -- the outbox of a manager whose shutdown timed out is still its own ------------------------


def test_a_timed_out_shutdown_keeps_its_journal_until_its_running_write_returns(
        home: Path) -> None:
    """Two managers on one home: the first's shutdown timed out inside a provider call. A second
    manager must not replay that journal while the call can still complete, or the write is
    delivered twice (the soak saw it as one write in two providers' logs)."""
    wedged = WedgedSync()
    first = session(home, wedged, "store")
    try:
        for n in (1, 2, 3):
            turn(first, n)
        assert wedged.entered.wait(5)
        assert first.shutdown(timeout=0.3).status == "timed_out"
        other = Recorder()
        second = session(home, other, "store")
        assert second.flush(2)
        assert other.of("sync_turn") == []  # still owned by the first manager
        second.shutdown(timeout=2)
    finally:
        wedged.release.set()
    # The wedged call returned: it is acknowledged, and its provider shut down after it.
    wait_for(lambda: "shutdown" in wedged.hooks(), timeout=5)
    assert [s["user_content"] for s in wedged.of("sync_turn")] == ["question number 1"]
    fresh = Recorder()
    third = session(home, fresh, "store")
    assert third.flush(5)
    assert [s["user_content"] for s in fresh.of("sync_turn")] == [
        "question number 2", "question number 3"]
    third.shutdown(timeout=2)


# -- 13. both stores off --------------------------------------------------------------------


def test_memory_tool_with_both_stores_off_says_memory_is_off(home: Path) -> None:
    manager = MemoryManager.from_home(home, memory_enabled=False, user_profile_enabled=False)
    manager.start_session("s")
    assert manager.tool_schemas() == []
    answer = json.loads(manager.call_tool("memory", {"action": "add", "target": "memory",
                                                     "content": "Deploys happen on Tuesdays"}))
    assert answer["success"] is False
    assert "turned off" in answer["error"]
    assert "memory_enabled" in answer["error"] and "user_profile_enabled" in answer["error"]
    manager.shutdown(timeout=1)


def test_writes_queued_before_a_provider_became_unavailable_are_kept(home: Path) -> None:
    class StartsOnce(WedgedSync):
        """Starts its first session; its service is gone by the second."""

        starts = 0

        @hookimpl
        def initialize(self, session_id: str) -> None:
            self.starts += 1
            if self.starts > 1:
                raise ConnectionRefusedError("the service is gone")

    provider = StartsOnce()
    manager = session(home, provider)
    try:
        for n in (1, 2, 3):
            turn(manager, n)  # sync 1 wedges the worker; 2 and 3 queue behind it
        assert provider.entered.wait(5)
        manager.start_session("s2")
        assert manager.status()["providers"][1]["health"]["state"] == "unavailable"
    finally:
        provider.release.set()
    wait_for(lambda: manager.status()["background"]["retrying"], timeout=5)
    report = manager.shutdown(timeout=1)
    # sync 1 was delivered before the service went; 2 and 3 were not handed to a provider
    # that is resting, and wait in the outbox instead of counting as delivered.
    assert [s["user_content"] for s in provider.of("sync_turn")] == ["question number 1"]
    assert report.kept_in_outbox == 2


# -- health you can trust: a provider whose recall keeps failing ------------------------------

FLAKY_RECALL = '''
import os
from memhost import hookimpl


class P:
    @hookimpl
    def prefetch(self, query):
        if os.environ.get("FLAKY_RECALL_OK"):
            return "recalled"
        raise RuntimeError("the recall table is missing (dsn postgres://app:hunter2-db@db/x)")
'''


def _flaky_recall_provider(home: Path) -> None:
    from memhost.discovery import user_root

    folder = user_root(home) / "flaky"
    folder.mkdir(parents=True)
    (folder / "plugin.toml").write_text('name = "flaky"\nversion = "1.0.0"\n'
                                        'description = "recall that fails"\n'
                                        'entry = "provider:P"\n', encoding="utf-8")
    (folder / "provider.py").write_text(FLAKY_RECALL, encoding="utf-8")
    configure(home, "flaky")


def _providers_section(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return next(s for s in json.loads(done.stdout)["sections"] if s["name"] == "providers")


def test_doctor_reports_a_provider_whose_recall_fails_as_degraded(home: Path) -> None:
    _flaky_recall_provider(home)
    done = memhost_cli(home, "doctor", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    section = _providers_section(done)
    (row,) = [r for r in section["providers"] if r["name"] == "flaky"]
    assert row["status"] == "degraded" and "recall table is missing" in row["reason"]
    assert section["configured_active"] is True  # it runs: degraded, not unavailable
    assert any("flaky" in p and "degraded" in p for p in section["problems"])
    assert "hunter2-db" not in done.stdout + done.stderr


def test_doctor_reports_what_a_running_host_saw_until_a_call_succeeds(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _flaky_recall_provider(home)
    record = home / "outbox" / "flaky" / "health.json"
    with MemoryManager.from_home(home) as manager:
        manager.start_session("s1")
        for n in range(4):
            turn(manager, n)
        assert manager.status()["providers"][1]["health"]["state"] == "degraded"
    assert record.exists() and oct(record.stat().st_mode & 0o777) == "0o600"
    assert "hunter2-db" not in record.read_text()

    # doctor's own recall works now (the table came back), but the host's last word stands.
    monkeypatch.setenv("FLAKY_RECALL_OK", "1")
    done = memhost_cli(home, "doctor", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = [r for r in _providers_section(done)["providers"] if r["name"] == "flaky"]
    assert row["status"] == "degraded" and "prefetch failed 3 calls in a row" in row["reason"]
    assert "running host" in row["reason"]

    # The next host whose call succeeds clears the record, and doctor is content again.
    with MemoryManager.from_home(home) as manager:
        manager.start_session("s2")
        assert manager.begin_turn("what was recalled?").recall == "ok"
    assert not record.exists()
    done = memhost_cli(home, "doctor", "--json")
    (row,) = [r for r in _providers_section(done)["providers"] if r["name"] == "flaky"]
    assert row["status"] == "active", row


def test_a_healthy_provider_leaves_no_health_record(home: Path) -> None:
    manager = session(home, Recorder())
    for n in range(3):
        turn(manager, n)
    manager.shutdown(timeout=2)
    assert not (home / "outbox" / "ext" / "health.json").exists()
