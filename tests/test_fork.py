"""A process forked from one that made a manager or a hub (a pre-forking server, a pool of
workers): a manager is refused there, loudly, and a hub opens that process's own managers."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryHub, MemoryManager
from memhost.errors import ForkedError
from providers_for_tests import Recorder
from recall_helpers import configure

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def in_child(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``work`` in a forked child; what it returns (or the traceback it raised)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 0
        try:
            os.close(read)
            try:
                outcome = work()
            except BaseException:  # noqa: BLE001 - reported to the parent
                outcome, code = {"raised": traceback.format_exc()}, 1
            os.write(write, json.dumps(outcome, default=str).encode())
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data or b'{"raised": "the child wrote nothing"}')


def assert_still_locked(journal: Path) -> None:
    """``journal``'s lock is still held (by this process, the parent)."""
    import fcntl

    probe = os.open(f"{journal}.lock", os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(probe)


def test_a_manager_is_refused_in_a_forked_child_and_the_parent_goes_on(home: Path) -> None:
    provider = Recorder()
    manager = MemoryManager.from_home(home)
    manager.register_provider(provider, name="store")
    manager.start_session("s")
    manager.begin_turn("the parent's first question")
    manager.finish_turn("the parent's first question", "answer")
    assert manager.flush(5)

    def child() -> dict[str, Any]:
        refused = {}
        for name, call in (
                ("begin_turn", lambda: manager.begin_turn("the child's question")),
                ("finish_turn", lambda: manager.finish_turn("the child's question", "answer"))):
            try:
                call()
            except ForkedError as exc:
                refused[name] = str(exc)
        return refused

    refused = in_child(child)
    assert set(refused) == {"begin_turn", "finish_turn"}, refused
    assert "forked" in refused["finish_turn"] and "after it forks" in refused["finish_turn"]

    manager.begin_turn("the parent's second question")
    manager.finish_turn("the parent's second question", "answer")
    assert manager.flush(5)
    assert [s["user_content"] for s in provider.of("sync_turn")] == [
        "the parent's first question", "the parent's second question"]
    assert manager.shutdown(timeout=2).status == "drained"


def test_a_hub_opens_the_forked_childs_own_managers(home: Path) -> None:
    configure(home, "sqlite")
    with MemoryHub(home) as hub:
        parents = hub.manager("alice")
        parents.start_session("chat-alice")
        parents.begin_turn("Which port does the zqvok service use?")
        parents.finish_turn("Which port does the zqvok service use?", "Port 9431.")
        assert parents.flush(5)

        def child() -> dict[str, Any]:
            memory = hub.manager("alice")
            memory.begin_turn("Which port does the qwixo service use?")
            memory.finish_turn("Which port does the qwixo service use?", "Port 7712.")
            answer = json.loads(memory.call_tool("memory", {
                "action": "add", "target": "memory", "content": "Written in the child."}))
            return {"new": memory is not parents, "session": memory.session_id,
                    "flushed": memory.flush(5), "added": answer["success"],
                    "status": memory.shutdown(timeout=5).status}

        outcome = in_child(child)
        assert outcome == {"new": True, "session": "chat-alice", "flushed": True,
                           "added": True, "status": "drained"}, outcome
        # The parent's manager is untouched, and sees what the child wrote to the shared files.
        assert hub.manager("alice") is parents
        found = json.loads(parents.call_tool("recall_search", {"query": "qwixo"}))
        assert "7712" in json.dumps(found), found
        assert "Written in the child." in (home / "users" / "alice" / "memories"
                                           / "MEMORY.md").read_text(encoding="utf-8")


def test_a_forked_child_makes_its_own_postgres_pools() -> None:
    pools = pytest.importorskip("memhost.plugins.postgres.pools",
                                reason="the postgres extra is not installed")

    class Pool:
        closed_in: list[int] = []

        def close(self, timeout: float) -> None:
            self.closed_in.append(os.getpid())

    parents = Pool()
    key = ("test-fork", os.getpid())
    assert pools.borrow(key, lambda: parents) is parents  # type: ignore[arg-type,return-value]
    try:
        def child() -> dict[str, Any]:
            new = pools.borrow(key, Pool) is not parents
            pools.give_back(key, parents)  # a store the child inherited lets go of it
            return {"new": new, "closed": Pool.closed_in}

        made = in_child(child)
        assert made == {"new": True, "closed": []}, made
        assert pools.borrow(key, object) is parents  # the parent's is still its own
    finally:
        pools._pools.pop(key, None)


def test_an_asyncio_hub_made_before_the_fork_serves_the_child(home: Path) -> None:
    """``gunicorn --preload`` with an ASGI app that makes its AsyncMemoryHub at import: the
    hub's call threads stayed in the parent, and the child's first call waited for ever."""
    import asyncio

    from memhost.aio import AsyncMemoryHub

    configure(home, "sqlite")
    hub = AsyncMemoryHub(home)

    async def serve_one_turn() -> dict[str, Any]:
        memory = await hub.manager("alice")
        await memory.start_session("chat-alice")
        turn = await memory.begin_turn("Which port does the zqvok service use?")
        await memory.finish_turn("Which port does the zqvok service use?", "Port 9431.")
        flushed = await memory.flush(5)
        await hub.close()
        return {"recall": turn.recall, "flushed": flushed}

    def child() -> dict[str, Any]:
        return asyncio.run(asyncio.wait_for(serve_one_turn(), 20))

    try:
        assert in_child(child) == {"recall": "empty", "flushed": True}
        assert asyncio.run(asyncio.wait_for(serve_one_turn(), 20))["flushed"]  # and the parent
    finally:
        hub.sync.close()


def test_a_manager_dropped_in_a_forked_child_leaves_the_parents_journal_alone(
        home: Path) -> None:
    """A child that lets go of a manager its parent made must not give that manager's journal
    up: it is the parent's, locked and in use (memhost.abandoned)."""
    import gc
    import warnings

    provider = Recorder()
    holder = {"manager": MemoryManager.from_home(home)}
    holder["manager"].register_provider(provider, name="store")
    holder["manager"].start_session("s")
    journal = holder["manager"]._delivery.journal.path  # type: ignore[union-attr]

    def child_lets_go() -> dict[str, Any]:
        holder.clear()  # the child's copy of the only reference
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        return {"journal": journal.exists()}

    assert in_child(child_lets_go) == {"journal": True}
    assert_still_locked(journal)
    memory = holder["manager"]
    memory.begin_turn("the parent's question")
    memory.finish_turn("the parent's question", "answer")
    assert memory.flush(5) and provider.of("sync_turn")
    assert memory.shutdown(timeout=2).status == "drained"
    assert not journal.exists()


def test_a_parents_manager_shut_down_in_a_forked_child_leaves_its_journal_alone(
        home: Path) -> None:
    """A forked worker's exit handlers may shut down a manager its parent made (``atexit``
    registered before the fork): that must not unlock or delete the parent's journal."""
    manager = MemoryManager.from_home(home)
    manager.register_provider(Recorder(), name="store")
    manager.start_session("s")
    journal = manager._delivery.journal.path  # type: ignore[union-attr]

    def child_shuts_down() -> dict[str, Any]:
        try:
            manager.shutdown(timeout=2)
        except ForkedError as exc:
            return {"refused": str(exc), "journal": journal.exists()}
        return {"refused": "", "journal": journal.exists()}

    outcome = in_child(child_shuts_down)
    assert "forked" in outcome["refused"] and outcome["journal"] is True, outcome
    assert_still_locked(journal)
    assert manager.shutdown(timeout=2).status == "drained"
    assert not journal.exists()
