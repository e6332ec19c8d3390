"""memhost.once: a value built once, however many threads ask for it first."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

from memhost.once import once


def test_threads_asking_at_once_get_one_build() -> None:
    builds: list[int] = []

    @once
    def table() -> object:
        builds.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while it builds
        return object()

    start = threading.Barrier(16)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(table())

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(builds) == 1
    assert len(got) == 16 and all(value is got[0] for value in got)
    assert table() is got[0] and table.__wrapped__ is not table


def test_cache_clear_builds_again_and_a_failed_build_is_not_kept() -> None:
    calls: list[int] = []

    @once
    def value() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the table could not be read")
        return len(calls)

    with pytest.raises(OSError):
        value()
    assert value() == 2 and value() == 2
    value.cache_clear()
    assert value() == 3
    assert value.__name__ == "value"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_while_another_thread_builds_can_build() -> None:
    release = threading.Event()
    building = threading.Event()

    @once
    def slow() -> str:
        building.set()
        release.wait(10)
        return "parent's"

    builder = threading.Thread(target=slow)
    builder.start()
    assert building.wait(10)
    pid = os.fork()
    if pid == 0:  # the builder thread is not here; the lock it held must not be either
        release.set()
        os._exit(0 if _builds_within(slow, 5) else 1)
    release.set()
    builder.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _builds_within(slow: Callable[[], object], seconds: float) -> bool:
    result: list[object] = []
    caller = threading.Thread(target=lambda: result.append(slow()), daemon=True)
    caller.start()
    caller.join(seconds)
    return result == ["parent's"]
