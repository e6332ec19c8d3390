"""turn_overhead and prefetch_hang: what the manager adds to each turn of its host.

turn_overhead times ``begin_turn`` + ``finish_turn`` as the host sees them (the caller's wall
time), once with the builtin provider alone and once with a no-op external provider, against
calling those providers' per-turn hooks directly. Between two turns the background queue is
drained, untimed, as the model's reply would let it drain in a real host; its time is reported
beside the row.

prefetch_hang registers a provider whose ``prefetch`` never returns (until the benchmark ends)
and checks that the first turn waits ``prefetch_timeout`` and no longer, and that later turns
skip the stuck provider at once.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from memhost import hookimpl

from benchmarks import corpus
from benchmarks.harness import Context, Row, Target, alternate, benchmark, percentile

OVERHEAD_TARGET = Target("overhead_us", "<", 100)


class NoOpProvider:
    """An external provider that implements the per-turn hooks and does nothing in them."""

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        return None

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        return None

    @hookimpl
    def queue_prefetch(self, query: str, session_id: str) -> None:
        return None


def _manager(home: Path, **memory: Any) -> Any:
    from memhost.config import validate
    from memhost.home import config_path
    from memhost.manager import MemoryManager

    config = validate({"memory": memory}, config_path(home))
    return MemoryManager(home, config)


@benchmark("turn_overhead", "begin_turn+finish_turn vs calling the providers' hooks directly (µs/turn)")
def turn_overhead(ctx: Context) -> list[Row]:
    turns = ctx.size(100, 400)
    rounds = ctx.size(5, 15)
    rng = random.Random(3)
    # Every round gets turns of its own, as a host's turns are new text: a script repeated from
    # round to round would reach the host's redaction as texts the secret detector has already
    # scanned (its cache keeps the last thousand), and leave the reply's scan out of the row.
    scripts = iter([[(corpus.user_message(rng), corpus.reply(rng)) for _ in range(turns)]
                    for _ in range(2 * (rounds + 1))])
    direct_script = [(corpus.user_message(rng), corpus.reply(rng)) for _ in range(turns)]
    rows: list[Row] = []
    with ctx.folder("turns") as root:
        for case in ("builtin", "one external"):
            home = root / case.replace(" ", "-")
            home.mkdir()
            manager = _manager(home)
            provider = NoOpProvider()
            if case == "one external":
                assert manager.register_provider(provider, name="noop")
            manager.start_session("bench-session")
            background: list[float] = []
            cpu: list[float] = []

            def host() -> float:
                spent = used = 0.0
                script = next(scripts)
                for user, answer in script:
                    messages = [{"role": "user", "content": user},
                                {"role": "assistant", "content": answer}]
                    start, start_cpu = time.perf_counter(), time.thread_time()
                    manager.begin_turn(user)
                    manager.finish_turn(user, answer, messages=messages)
                    spent += time.perf_counter() - start
                    used += time.thread_time() - start_cpu
                    drain = time.perf_counter()
                    manager.flush(5)
                    background.append(time.perf_counter() - drain)
                cpu.append(used / turns * 1e6)
                return spent / turns * 1e6

            def direct() -> float:
                # What the host would do without memhost: call the hooks itself, in line.
                spent = 0.0
                builtin = manager.builtin
                for user, answer in direct_script:  # they do nothing with the text
                    messages = [{"role": "user", "content": user},
                                {"role": "assistant", "content": answer}]
                    start = time.perf_counter()
                    builtin.tool.reset_turn()
                    if case == "one external":
                        provider.prefetch(user, "bench-session")
                        provider.sync_turn(user, answer, "bench-session", messages)
                        provider.queue_prefetch(user, "bench-session")
                    spent += time.perf_counter() - start
                return spent / turns * 1e6

            host()  # warm-up: threads started, caches filled
            background.clear()
            cpu.clear()
            paired = alternate(rounds, {"memhost": host, "baseline": direct})
            report = manager.shutdown(5)
            assert report.status == "drained", report
            m, b = paired.medians()
            overhead = statistics.median(x - y for x, y in zip(paired.memhost, paired.baseline,
                                                                strict=True))
            row = Row("turn_overhead", case, m, b, paired.ratio(), "µs/turn", paired.rounds,
                      note=f"host overhead {overhead:.0f} µs/turn, of which the host "
                           f"thread's CPU {statistics.median(cpu):.0f} µs", extra={
                          "overhead_us": overhead, "turns_per_round": turns,
                          # What the host's thread itself ran; the rest of the wall time is
                          # waiting for other threads to be scheduled (the prefetch hand-off).
                          "host_cpu_us": statistics.median(cpu),
                          "background_us_per_turn": statistics.median(background) * 1e6})
            rows.append(row.judge(OVERHEAD_TARGET) if case == "one external" else row)
    return rows


class HangingProvider:
    """An external provider whose ``prefetch`` blocks until the benchmark releases it."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        self.calls += 1
        self.release.wait()
        return "too late: this must never reach a turn"


@benchmark("prefetch_hang", "a prefetch that never returns: first turn ≤ 1.05 T, later turns < 1 ms")
def prefetch_hang(ctx: Context) -> list[Row]:
    import logging

    timeout = ctx.size(0.5, 1.0)
    rounds = ctx.size(3, 5)
    later_turns = ctx.size(50, 200)
    firsts: list[float] = []
    laters: list[float] = []
    calls = 0
    memhost_log = logging.getLogger("memhost")
    level = memhost_log.level
    memhost_log.setLevel(logging.ERROR)  # the timeout warning is expected here
    try:
        with ctx.folder("hang") as root:
            for number in range(rounds):
                home = root / f"r{number}"
                home.mkdir()
                manager = _manager(home, prefetch_timeout=timeout)
                provider = HangingProvider()
                assert manager.register_provider(provider, name="hang")
                manager.start_session("hang-session")
                try:
                    start = time.perf_counter()
                    turn = manager.begin_turn("Why does the deploy step time out?")
                    firsts.append(time.perf_counter() - start)
                    assert turn.recall == "timed-out" and not turn.context, turn
                    for i in range(later_turns):
                        start = time.perf_counter()
                        turn = manager.begin_turn(f"And what about step {i} of the deploy?")
                        laters.append(time.perf_counter() - start)
                        assert turn.recall == "skipped-stuck" and not turn.context, turn
                    calls += provider.calls
                finally:
                    provider.release.set()
                    manager.shutdown(2)
    finally:
        memhost_log.setLevel(level)
    first = statistics.median(firsts)
    worst_first = max(firsts)
    first_row = Row("prefetch_hang", "first turn", first * 1e3, timeout * 1e3, first / timeout,
                    "ms", rounds, note=f"T = {timeout:g} s; slowest first turn {worst_first * 1e3:.1f} ms",
                    extra={"timeout_s": timeout, "first_turn_max_ms": worst_first * 1e3,
                           "provider_calls": calls})
    first_row.judge(Target("ratio", "<=", 1.05))
    # p99 rather than the maximum: one turn in hundreds can lose the CPU to another process
    # for a millisecond, which says nothing about memhost; the maximum is in the note.
    later_row = Row("prefetch_hang", "later turns", percentile(laters, 99) * 1e3, None, None,
                    "ms (p99)", rounds,
                    note=f"{len(laters)} turns; p50 {statistics.median(laters) * 1e6:.0f} µs, "
                    f"max {max(laters) * 1e3:.2f} ms; the stuck call was made {calls} time(s) "
                    f"in {rounds} round(s)",
                    extra={"later_turn_p50_us": statistics.median(laters) * 1e6,
                           "later_turn_max_ms": max(laters) * 1e3, "later_turns": len(laters)})
    later_row.judge(Target("memhost", "<", 1.0))
    # A stuck provider must not be called again while its first call hangs.
    if calls != rounds:
        later_row.met = False
    return [first_row, later_row]
