"""recall_sqlite, recall_postgres: a recall provider's prefetch latency and ingest rate at scale.

For each provider and each size (10,000 and 100,000 turns; 1,000 with --quick) the rows
report the ingest rate (turns/s through the provider's ``sync_turn``) and the latency of a turn's
recall as the host sees it (``MemoryManager.begin_turn`` with the provider active: p50, with the
p95 in ``extra``).

The providers are bundled separately. Until a provider is discovered its rows say
``provider not installed``; the code below already drives any provider through the public hooks.
What a provider's author fills in is :func:`provider_config` (the settings the benchmark
passes, e.g. a database URL) and, optionally, :func:`baseline_recall` (the same query run on the
bare database, for a ratio).
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import corpus
from benchmarks.harness import (
    NOT_INSTALLED,
    UNAVAILABLE,
    Context,
    Row,
    Target,
    benchmark,
    percentile,
    unavailable,
)

SIZES = (10_000, 100_000)
#: Prefetch p95 pass marks (ms), set for 100,000 stored turns and held at every size.
P95_TARGET_MS = {"sqlite": 20.0, "postgres": 50.0}
QUICK_SIZE = 1_000
QUERIES = 200
#: Turns ingested one sync_turn at a time, for the ingest rate; the rest are bulk-loaded.
INGEST_MEASURED = 2_000
BULK = 1_000


def provider_config(provider: str, home: Path) -> dict[str, Any]:
    """The ``[providers.<name>]`` settings the benchmark runs ``provider`` with.

    They are saved through the settings service, so a secret lands in the home's ``.env``.
    Postgres reads its server from ``MEMHOST_BENCH_POSTGRES_DSN`` (CI starts one on
    127.0.0.1:5432, database ``test``, trust authentication); every run uses a fresh schema.
    """
    if provider == "postgres":
        return {"dsn": os.environ.get("MEMHOST_BENCH_POSTGRES_DSN",
                                      "postgresql://postgres@127.0.0.1:5432/test"),
                "schema": f"memhost_bench_{os.getpid()}_{home.name.replace('-', '_')}"}
    return {}


def baseline_recall(provider: str, home: Path, config: dict[str, Any]) -> Callable[[str], Any] | None:
    """A function running the provider's recall query on the bare database, or ``None``.

    With one, the p50 row gets a baseline and a ratio (host + provider over the bare query).
    Fill in with the provider: e.g. an FTS5 ``MATCH`` on the provider's own table.
    """
    return None


def cleanup(provider: str, home: Path, settings: dict[str, Any]) -> None:
    """Remove what a run left outside its home (the postgres schema); the home itself goes."""
    if provider != "postgres" or not settings.get("schema"):
        return
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        return
    try:
        with psycopg.connect(settings["dsn"], autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(settings["schema"])))
    except psycopg.Error:
        pass  # no server, so nothing was created there


class Unavailable(Exception):
    """The provider is installed but cannot run here (no server, missing driver)."""


def _size(turns: int) -> str:
    return f"{turns // 1000}k turns"


def _discovered(provider: str, home: Path) -> bool:
    try:
        from memhost import discovery
    except ImportError:
        return False
    return discovery.discover(home, strict=False).get(provider) is not None


def open_manager(provider: str, home: Path, **settings: Any) -> tuple[Any, dict[str, Any]]:
    """A manager for a fresh ``home`` with ``provider`` active (and ``settings`` over the
    benchmark's own), and the provider settings used; :class:`Unavailable` when the provider
    cannot run here."""
    import tomlkit

    from memhost.home import config_path
    from memhost.manager import MemoryManager

    # Generous bounds: a machine under load must slow the figures down, not turn the run into
    # one that measures nothing (an initialize past memory.hook_timeout leaves the provider
    # resting for the session, and every recall then returns at once, empty).
    config_path(home).write_text(tomlkit.dumps({
        "memory": {"provider": provider, "prefetch_timeout": 30.0, "hook_timeout": 120.0}}),
        encoding="utf-8")
    settings = {**provider_config(provider, home), **settings}
    if settings:
        # Through the settings service, as a settings UI saves them: secrets (a DSN) go to the
        # home's .env, the rest to config.toml.
        from memhost.schema.settings import SettingsService

        SettingsService(home).update(provider, settings)
    manager = MemoryManager.from_home(home)
    status = manager.status()
    if status["external_provider"] != provider:
        manager.shutdown(10)
        cleanup(provider, home, settings)
        raise Unavailable("; ".join(p["problem"] for p in status["problems"]) or "not active")
    return manager, settings


def measure_recall(ctx: Context, provider: str, turns: int, home: Path) -> list[Row]:
    """Ingest ``turns`` synthetic turns into ``provider`` (in a fresh ``home``), then time
    ``QUERIES`` recalls through the manager."""
    from memhost.providers import FAILED

    manager, settings = open_manager(provider, home)
    manager.start_session("bench-recall")
    external = manager._external  # the registered provider, as the background worker calls it
    rng = random.Random(turns)
    try:
        if external.health.unavailable:
            # Resting providers take no call: sync_turn would store nothing and every recall
            # return empty at once, a figure that measures nothing.
            raise Unavailable(f"initialize failed: {external.health.unavailable}")
        # Ingest: the provider's sync_turn called in line through the hook dispatch (which
        # passes only the arguments the provider accepts), so the rate is the provider's own.
        # One commit (and fsync) per turn makes the full sizes take many minutes on a busy
        # machine, so the rate is measured over the first INGEST_MEASURED turns and the rest
        # go in through the store's add_many, a thousand turns a transaction (the same items,
        # terms and statistics; only the commits are fewer).
        measured = min(turns, INGEST_MEASURED)
        started = time.perf_counter()
        for number in range(measured):
            user, answer = corpus.recall_turn(rng)
            result = manager._providers.call(
                external, "sync_turn", user_content=f"[{number}] {user}",
                assistant_content=answer, session_id="bench-recall", messages=[])
            if result is FAILED:
                if number == 0:  # nothing stored at all: the provider cannot work here
                    raise Unavailable(external.last_error)
                raise RuntimeError(f"sync_turn failed: {external.last_error}")
        ingest = measured / (time.perf_counter() - started)
        store = getattr(external.plugin, "store", None)
        if hasattr(store, "add_many"):
            _bulk_load(store, rng, measured, turns)
        else:  # a provider without a bulk path: every turn through sync_turn
            for number in range(measured, turns):
                user, answer = corpus.recall_turn(rng)
                manager._providers.call(external, "sync_turn", user_content=f"[{number}] {user}",
                                        assistant_content=answer, session_id="bench-recall",
                                        messages=[])

        _check_stored(store, turns)
        queries = [corpus.recall_query(rng) for _ in range(QUERIES)]
        latencies: list[float] = []
        cpu: list[float] = []
        recalled = 0
        outcomes: Counter[str] = Counter()
        for query in queries:
            start, used = time.perf_counter(), time.process_time()
            turn = manager.begin_turn(query)
            latencies.append(time.perf_counter() - start)
            # The process's CPU time over the call (the worker threads are idle meanwhile): what
            # the recall costs, whatever else the machine is running.
            cpu.append(time.process_time() - used)
            recalled += bool(turn.context)
            outcomes[turn.recall] += 1
        if not recalled:
            raise RuntimeError(f"no turn got recall ({_outcomes(outcomes)}): the latency of an "
                               "empty answer is no recall latency")
        bare = baseline_recall(provider, home, settings)
        bare_latencies: list[float] = []
        if bare is not None:
            for query in queries:
                start = time.perf_counter()
                bare(query)
                bare_latencies.append(time.perf_counter() - start)
    finally:
        manager.shutdown(10)
        cleanup(provider, home, settings)
    p50, p95 = statistics.median(latencies) * 1e3, percentile(latencies, 95) * 1e3
    cpu50, cpu95 = statistics.median(cpu) * 1e3, percentile(cpu, 95) * 1e3
    b50 = statistics.median(bare_latencies) * 1e3 if bare_latencies else None
    name = f"recall_{provider}"
    size = _size(turns)
    return [
        Row(name, f"{size} p50", p50, b50, p50 / b50 if b50 else None, "ms", QUERIES,
            note=f"p95 {p95:.2f} ms; CPU p50 {cpu50:.2f} / p95 {cpu95:.2f} ms; "
                 f"{recalled}/{QUERIES} turns got recall ({_outcomes(outcomes)}); "
                 f"load average {os.getloadavg()[0]:.1f}",
            extra={"p95_ms": p95, "recalled": recalled, "cpu_p50_ms": cpu50,
                   "cpu_p95_ms": cpu95, "outcomes": dict(outcomes)}).judge(
                *([Target("p95_ms", "<", P95_TARGET_MS[provider])]
                  if provider in P95_TARGET_MS else [])),
        Row(name, f"{size} ingest", ingest, None, None, "turns/s", 1,
            note=f"sync_turn, one commit a turn, over the first {min(turns, INGEST_MEASURED):,}"),
    ]


def _outcomes(outcomes: Counter[str]) -> str:
    """How the turns' recalls went (``Turn.recall``), e.g. ``ok 197, empty 3``."""
    return ", ".join(f"{name} {count}" for name, count in outcomes.most_common())


def _check_stored(store: Any, turns: int) -> None:
    """Every turn is in the store (two items each), or the run stops: a recall over a store
    that silently took fewer turns measures a smaller store."""
    stats = getattr(store, "stats", None)
    if stats is None:
        return
    live = stats().get("live")
    if live is not None and live != 2 * turns:
        raise RuntimeError(f"the store holds {live} items after {turns:,} turns, not "
                           f"{2 * turns:,}")


def _bulk_load(store: Any, rng: random.Random, start: int, turns: int) -> None:
    """Turns ``start`` to ``turns`` into ``store``, :data:`BULK` a transaction."""
    from memhost import recall

    for first in range(start, turns, BULK):
        batch = []
        for number in range(first, min(turns, first + BULK)):
            user, answer = corpus.recall_turn(rng)
            key = recall.turn_key("bench-recall", f"[{number}] {user}", answer, None)
            batch += recall.turn_items(key, f"[{number}] {user}", answer, "bench-recall")
        store.add_many(batch)


def _recall_rows(ctx: Context, provider: str) -> list[Row]:
    name = f"recall_{provider}"
    with ctx.folder(name) as root:
        if not _discovered(provider, root):
            return [unavailable(name, NOT_INSTALLED, f"no provider named {provider!r} was "
                                "discovered (bundled, user folder or entry point)",
                                case=_size(n)) for n in SIZES]
        rows: list[Row] = []
        # Ingesting commits (and fsyncs) once per turn, so the full sizes take minutes; a quick
        # run measures a small store and lists the full sizes as skipped.
        for turns in (QUICK_SIZE,) if ctx.quick else SIZES:
            home = root / f"{provider}-{turns}"
            home.mkdir()
            try:
                rows.extend(measure_recall(ctx, provider, turns, home))
            except Unavailable as exc:
                return [unavailable(name, UNAVAILABLE, str(exc)[:300], case=_size(n))
                        for n in SIZES]
        if ctx.quick:
            rows += [unavailable(name, "skipped", f"not run with --quick (it measures "
                                 f"{QUICK_SIZE:,} turns)", case=_size(n)) for n in SIZES]
        return rows


@benchmark("recall_sqlite", "sqlite provider: prefetch p50/p95 and ingest rate at 10k and 100k turns")
def recall_sqlite(ctx: Context) -> list[Row]:
    return _recall_rows(ctx, "sqlite")


@benchmark("recall_postgres", "postgres provider: prefetch p50/p95 and ingest rate at 10k and 100k turns")
def recall_postgres(ctx: Context) -> list[Row]:
    return _recall_rows(ctx, "postgres")
