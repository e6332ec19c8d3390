"""A manager its host let go of without shutdown() (memhost.abandoned): collected like any
object, its queued writes still delivered, its threads ended and its journal given up, with a
ResourceWarning; one shut down properly says nothing."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref
from pathlib import Path

from memhost import MemoryManager
from providers_for_tests import Recorder, wait_for


def memhost_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("memhost-")}


def journals(home: Path) -> list[Path]:
    return sorted((home / "outbox" / "store").glob("*.jsonl"))


def test_a_manager_let_go_of_ends_its_threads_and_delivers_what_it_queued(home: Path) -> None:
    before = memhost_threads()
    provider = Recorder()
    manager = MemoryManager.from_home(home)
    manager.register_provider(provider, name="store")
    manager.start_session("s")
    manager.begin_turn("which port does the billing api use?")
    manager.finish_turn("which port does the billing api use?", "8443")  # queued, not waited for
    gone = weakref.ref(manager)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del manager
        gc.collect()
        assert gone() is None, "the manager was not collected"
    assert any(issubclass(w.category, ResourceWarning) and "shutdown()" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    wait_for(lambda: provider.of("sync_turn"))  # what it had queued is still delivered
    wait_for(lambda: not (memhost_threads() - before))  # then its threads end
    wait_for(lambda: not journals(home))  # and its journal, owing nothing, is given up
    assert provider.of("sync_turn")[0]["user_content"] == "which port does the billing api use?"
    assert "shutdown" not in provider.hooks()  # provider code is not run from a collection


def test_many_managers_let_go_of_leave_nothing_behind(home: Path) -> None:
    before = memhost_threads()
    provider = Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        for n in range(30):
            manager = MemoryManager.from_home(home)
            manager.register_provider(provider, name="store")
            manager.start_session(f"s{n}")
            manager.begin_turn(f"question {n} about the billing api")
            manager.finish_turn(f"question {n} about the billing api", "answer")
            del manager
        gc.collect()
    wait_for(lambda: len(provider.of("sync_turn")) == 30)
    wait_for(lambda: not (memhost_threads() - before))
    wait_for(lambda: not journals(home))


def test_a_manager_shut_down_says_nothing_when_collected(home: Path) -> None:
    manager = MemoryManager.from_home(home)
    manager.register_provider(Recorder(), name="store")
    manager.start_session("s")
    assert manager.shutdown(timeout=2).status == "drained"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del manager
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)
                and "MemoryManager" in str(w.message)]


def test_a_builtin_only_manager_let_go_of_is_collected(home: Path) -> None:
    manager = MemoryManager.from_home(home)
    manager.start_session("s")
    assert '"success": true' in manager.call_tool(
        "memory", {"action": "add", "target": "memory", "content": "Deploys go via staging."})
    gone = weakref.ref(manager)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del manager
        gc.collect()
    assert gone() is None
