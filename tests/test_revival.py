"""A provider that could not start is started again while its session goes on
(memhost.revival): off the host's thread, at most once every memhost.health.RETRY_SECONDS, and
the writes that waited for it are delivered first, in order."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryManager, health, hookimpl
from providers_for_tests import Recorder, wait_for


class ServiceDown(Recorder):
    """A recorder whose ``initialize`` raises while ``down``, and blocks while ``hang`` is
    set until ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True
        self.hang = False
        self.entered = threading.Event()
        self.release = threading.Event()
        self.starts = 0

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any], context: str) -> None:
        self.starts += 1
        if self.hang:
            self.entered.set()
            self.release.wait(30)
        if self.down:
            raise ConnectionError("connection refused")
        super().initialize(session_id, home, config, context)


def start(home: Path, provider: ServiceDown, **overrides: Any) -> MemoryManager:
    manager = MemoryManager.from_home(home, **overrides)
    assert manager.register_provider(provider, name="store")
    manager.start_session("s1")
    return manager


def turn(manager: MemoryManager, text: str) -> str:
    recall = manager.begin_turn(text).recall
    manager.finish_turn(text, f"answer to {text}")
    return recall


def state(manager: MemoryManager) -> str:
    (entry,) = [p for p in manager.status()["providers"] if p["name"] == "store"]
    return entry["health"]["state"]


def test_a_provider_back_after_an_outage_is_started_again_and_gets_what_waited(
        home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(health, "RETRY_SECONDS", 0.0)
    provider = ServiceDown()
    manager = start(home, provider)
    try:
        assert state(manager) == "unavailable"
        with caplog.at_level(logging.INFO, logger="memhost"):
            assert turn(manager, "first question about the billing api") == "unavailable"
            # tried again, and failed: still down (and that try is over)
            wait_for(lambda: any("still unavailable" in r.getMessage() for r in caplog.records))
        assert state(manager) == "unavailable" and provider.starts == 2
        provider.down = False  # the service is back
        with caplog.at_level(logging.WARNING):
            assert turn(manager, "second question about the billing api") == "unavailable"
            wait_for(lambda: any("available again" in r.getMessage() for r in caplog.records))
        assert state(manager) == "ok"
        assert turn(manager, "third question about the billing api") != "unavailable"
        assert manager.flush(5)
        synced = [s["user_content"] for s in provider.of("sync_turn")]
        assert synced == ["first question about the billing api",
                          "second question about the billing api",
                          "third question about the billing api"]
        assert provider.of("prefetch")  # the third turn recalled
        assert not [p for p in manager.status()["problems"] if p.get("provider") == "store"]
    finally:
        manager.shutdown(timeout=2)
    assert manager.status()["shutdown"]["kept_in_outbox"] == 0


def test_a_try_runs_at_most_once_a_retry_interval(home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "RETRY_SECONDS", 0.0)
    provider = ServiceDown()
    manager = start(home, provider)
    try:
        assert provider.starts == 1  # the session start
        turn(manager, "a question about the billing api")
        wait_for(lambda: provider.starts == 2)
        # From now on a try is not due for an hour, whether or not this one is still running.
        monkeypatch.setattr(health, "RETRY_SECONDS", 3600.0)
        for n in range(20):
            assert turn(manager, f"question {n} about the billing api") == "unavailable"
        assert manager.flush(5)
        assert provider.starts == 2
    finally:
        manager.shutdown(timeout=2)


def test_a_turn_never_waits_for_a_try(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A try that hangs (a dead connection) holds its own thread, not the host's turn."""
    monkeypatch.setattr(health, "RETRY_SECONDS", 0.0)
    provider = ServiceDown()
    manager = start(home, provider, hook_timeout=60)
    provider.hang = True
    try:
        assert turn(manager, "a question about the billing api") == "unavailable"
        assert provider.entered.wait(10)  # the try is running, blocked in initialize
        # Had the turn waited for it, it would have returned only after the 60 s bound, with
        # the try counted as timed out.
        assert turn(manager, "another question about the billing api") == "unavailable"
        stats = manager.status()["providers"][1]["calls"]["initialize"]
        assert "no answer" not in stats["last_error"]
    finally:
        provider.down = False
        provider.release.set()
    wait_for(lambda: state(manager) == "ok")
    assert manager.flush(5)
    assert [s["user_content"] for s in provider.of("sync_turn")] == [
        "a question about the billing api", "another question about the billing api"]
    manager.shutdown(timeout=2)


def test_a_manager_shut_down_is_not_started_again(home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "RETRY_SECONDS", 0.0)
    provider = ServiceDown()
    manager = start(home, provider)
    manager.shutdown(timeout=2)
    provider.down = False
    assert manager.begin_turn("a question about the billing api").recall != "ok"
    assert provider.starts == 1


def test_the_mcp_recall_tool_says_the_provider_is_unavailable(home: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from memhost.mcp.catalog import recall

    manager = start(home, ServiceDown())
    try:
        text, failed = recall(manager, "which port does the billing api use?")
    finally:
        manager.shutdown(timeout=2)
    assert failed and "'store' is unavailable for now" in text and "memhost doctor" in text
