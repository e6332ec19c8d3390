"""The soak harness: run workers, inject faults, stop cleanly, audit.

Faults, each at random moments:

* SIGKILL of a random worker, restarted at once as a new incarnation;
* a hand edit that drifts a memory file (a shell-like ``>>`` append of a long blob, outside
  memhost's lock), repaired a few seconds later (under the lock, as a careful tool would);
* a provider that raises (``RetryableError`` for writes: the database is down) or hangs
  (``prefetch`` blocks), for a few seconds, in one worker;
* a full store: the harness adds a large entry that leaves no room, and removes it later;
* staged writes (sessions with ``memory.write_approval`` on) approved or rejected by the harness.

At the end: faults cleared, workers asked to stop (stragglers are killed), remaining staged
writes approved or rejected, drift repaired, each home's outbox drained by a final manager (which
replays what killed workers left), one no-op write per memory file (which sweeps temp files a
killed writer left, as a store's first write does), then the audit.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.soak.audit import Audit, run_audit
from benchmarks.soak.worker import PROVIDER, committed

ROOT = Path(__file__).resolve().parents[2]
#: Seconds before an action that found nothing to act on yet is tried again.
RETRY = 0.25


@dataclass
class Proc:
    index: int
    incarnation: int
    popen: subprocess.Popen[bytes]

    @property
    def tag(self) -> str:
        return f"w{self.index}.{self.incarnation}"


@dataclass
class Stats:
    kills: int = 0
    crashes: list[str] = field(default_factory=list)
    drifts: int = 0
    repairs: int = 0
    provider_faults: int = 0
    fillers: int = 0
    already_full: int = 0
    approved: int = 0
    rejected: int = 0


class Soak:
    def __init__(self, run: Path, *, workers: int, homes: int, seconds: float, seed: int) -> None:
        self.run = run
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.seed = seed
        self.homes = [run / "homes" / f"h{i}" for i in range(homes)]
        for path in (run / "logs", run / "faults", *self.homes):
            path.mkdir(parents=True, exist_ok=True)
        self.workers: list[Proc | None] = [None] * workers
        self.killed: set[str] = set()
        self.stats = Stats()
        self.drifted: list[tuple[Path, str, float]] = []  # (file, blob, repair at)
        self.fillers: list[tuple[Path, str, str, float]] = []  # (home, target, label, remove at)
        self.faulted: dict[int, float] = {}  # worker -> clear at
        self.fault_modes: dict[int, str] = {}
        self._log_fd = os.open(run / "logs" / "harness.jsonl",
                               os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._serial = 0

    # -- logging and helpers -----------------------------------------------------------------

    def log(self, **record: Any) -> None:
        os.write(self._log_fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))

    def home_of(self, index: int) -> Path:
        return self.homes[index % len(self.homes)]

    def store(self, home: Path) -> Any:
        from memhost.builtin_providers.store import MemoryStore
        from memhost.config import load_config

        return MemoryStore.from_settings(home, load_config(home).memory)

    # -- workers -----------------------------------------------------------------------------

    def start(self, index: int, incarnation: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        env.pop("MEMHOST_HOME", None)
        tag = f"w{index}.{incarnation}"
        stderr = open(self.run / "logs" / f"{tag}.stderr", "wb")  # noqa: SIM115 - owned by the child
        popen = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.soak.worker", "--run", str(self.run),
             "--worker", str(index), "--incarnation", str(incarnation),
             "--home", str(self.home_of(index)), "--seed", str(self.seed * 1000 + index * 97 + incarnation)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        self.workers[index] = Proc(index, incarnation, popen)

    def kill(self, proc: Proc) -> None:
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait()
        self.killed.add(proc.tag)
        self.stats.kills += 1
        self.log(kind="kill", tag=proc.tag)

    def check_workers(self) -> None:
        for proc in self.workers:
            if proc is not None and proc.popen.poll() is not None:
                tail = (self.run / "logs" / f"{proc.tag}.stderr").read_text(errors="replace")[-600:]
                self.stats.crashes.append(f"{proc.tag} exited {proc.popen.returncode}: {tail.strip()}")
                self.start(proc.index, proc.incarnation + 1)

    # -- faults ------------------------------------------------------------------------------

    def kill_one(self) -> None:
        # Often the worker whose provider is refusing writes: its outbox is backed up, so the
        # kill abandons queued writes that a later manager must replay.
        backed_up = [self.workers[i] for i, mode in self.fault_modes.items() if mode == "raise"]
        if backed_up and self.rng.random() < 0.6:
            proc = self.rng.choice(backed_up)
        else:
            proc = self.rng.choice([p for p in self.workers if p is not None])
        self.kill(proc)
        self.start(proc.index, proc.incarnation + 1)

    def set_fault(self, index: int, mode: str) -> None:
        path = self.run / "faults" / f"w{index}.json"
        tmp = path.with_suffix(".new")
        tmp.write_text(json.dumps({"mode": mode}), encoding="utf-8")
        os.replace(tmp, path)

    def provider_fault(self, now: float) -> None:
        index = self.rng.randrange(len(self.workers))
        if index in self.faulted:
            return
        mode = self.rng.choice(("raise", "hang"))
        self.set_fault(index, mode)
        self.fault_modes[index] = mode
        self.faulted[index] = now + self.rng.uniform(1.5, 4.0)
        self.stats.provider_faults += 1
        self.log(kind="provider_fault", worker=index, mode=mode)

    def drift(self, now: float) -> bool:
        """Append a blob to a memory file the workers have written; False when there is none yet
        (on a slow machine the first writes can come after the first drift is due)."""
        from memhost.builtin_providers.store import FILENAMES
        from memhost.home import memories_dir

        files = [memories_dir(home) / FILENAMES[target] for home in self.homes
                 for target in ("memory", "user")]
        files = [p for p in files if p.exists() and not any(d[0] == p for d in self.drifted)]
        if not files:
            return False
        path = self.rng.choice(files)
        self._serial += 1
        blob = f"\n[pasted log {self._serial}] " + "tail -f build.log: step ok; " * 120
        with open(path, "a", encoding="utf-8") as handle:  # what `cat >> MEMORY.md` does
            handle.write(blob)
        self.drifted.append((path, blob, now + self.rng.uniform(1.5, 4.0)))
        self.stats.drifts += 1
        self.log(kind="drift", path=str(path))
        return True

    def repair(self, path: Path, blob: str) -> None:
        from memhost.files import atomic_write_text, locked

        with locked(path):
            raw = path.read_text(encoding="utf-8")
            if blob in raw:
                atomic_write_text(path, raw.replace(blob, "", 1))
                self.stats.repairs += 1
                self.log(kind="repair", path=str(path))

    def fill(self, now: float) -> bool:
        """Fill a store nearly to its budget; False when the add was refused for another reason
        (the file drifted a moment ago, its lock was busy): tried again shortly."""
        home = self.rng.choice(self.homes)
        target = self.rng.choice(("memory", "user"))
        store = self.store(home)
        self._serial += 1
        label = f"[filler.{self._serial}]"
        # Take (nearly) all the room left, so the next adds are refused until space is made.
        room = store.limits[target] - len("\n§\n".join(store.entries(target))) - 3 - len(label) - 1
        if room < 40:
            self.stats.already_full += 1
            return True
        text = f"{label} " + ("The user keeps a long list of project conventions. " * 40)[:room - 5].strip()
        args = {"action": "add", "target": target, "content": text}
        outcome = store.add(target, text, origin="foreground", session_id="harness")
        if outcome.ok:
            self.log(kind="commit", by="harness", home=str(home), mirrored=False,
                     **committed(args, outcome.response))
            self.fillers.append((home, target, label, now + self.rng.uniform(2.0, 5.0)))
            self.stats.fillers += 1
        return outcome.ok

    def unfill(self, home: Path, target: str, label: str) -> None:
        outcome = self.store(home).remove(target, label, session_id="harness")
        if outcome.ok:
            args = {"action": "remove", "target": target, "old_text": label}
            self.log(kind="commit", by="harness", home=str(home), mirrored=False,
                     **committed(args, outcome.response))

    def review_pending(self, *, everything: bool = False) -> None:
        """Approve or reject staged writes (all of them when ``everything``)."""
        from memhost.review.approval import PendingStore, approve, reject

        for home in self.homes:
            for record in PendingStore(home).list():
                if not everything and self.rng.random() < 0.5:
                    continue  # leave it for a later pass
                if self.rng.random() < 0.75:
                    answer = approve(self.store(home), record.id, home=home)
                    if answer.get("success"):
                        payload = record.payload
                        args = ({"target": payload["target"], "operations": payload["operations"]}
                                if payload.get("action") == "batch" else dict(payload))
                        self.log(kind="commit", by="harness-approval", home=str(home),
                                 mirrored=False, **committed(args, answer))
                        self.stats.approved += 1
                        continue
                reject(home, record.id)
                self.stats.rejected += 1

    # -- the run -----------------------------------------------------------------------------

    def go(self) -> Audit:
        for index in range(len(self.workers)):
            self.start(index, 0)
        started = time.monotonic()
        deadline = started + self.seconds
        next_at = {"kill": started + self.rng.uniform(1.5, 3.0),
                   "drift": started + self.rng.uniform(2.0, 5.0),
                   "fault": started + self.rng.uniform(1.0, 3.0),
                   "fill": started + self.rng.uniform(2.0, 4.0),
                   "review": started + 1.0}
        gaps = {"kill": (2.0, 5.0), "drift": (4.0, 9.0), "fault": (3.0, 6.0), "fill": (4.0, 8.0),
                "review": (1.0, 2.0)}
        actions = {"kill": lambda now: self.kill_one(), "drift": self.drift,
                   "fault": self.provider_fault, "fill": self.fill,
                   "review": lambda now: self.review_pending()}
        while (now := time.monotonic()) < deadline:
            self.check_workers()
            for name, at in next_at.items():
                if now >= at:
                    # An action that found nothing to act on yet is tried again shortly, so a
                    # short run still injects every kind of fault.
                    injected = actions[name](now)
                    next_at[name] = now + (RETRY if injected is False else self.rng.uniform(*gaps[name]))
            for index, clear_at in list(self.faulted.items()):
                if now >= clear_at:
                    self.set_fault(index, "")
                    del self.faulted[index]
                    self.fault_modes.pop(index, None)
            for item in [d for d in self.drifted if now >= d[2]]:
                self.repair(item[0], item[1])
                self.drifted.remove(item)
            for item in [f for f in self.fillers if now >= f[3]]:
                self.unfill(*item[:3])
                self.fillers.remove(item)
            time.sleep(0.05)
        return self.finish()

    def finish(self) -> Audit:
        for index in list(self.faulted):
            self.set_fault(index, "")
        self.faulted.clear()
        (self.run / "stop").touch()
        deadline = time.monotonic() + 60
        for proc in self.workers:
            assert proc is not None
            try:
                proc.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill(proc)  # a straggler: what it left is replayed below
                continue
            if proc.popen.returncode != 0:
                tail = (self.run / "logs" / f"{proc.tag}.stderr").read_text(errors="replace")[-600:]
                self.stats.crashes.append(f"{proc.tag} exited {proc.popen.returncode}: {tail.strip()}")
        self.review_pending(everything=True)
        for path, blob, _ in self.drifted:
            self.repair(path, blob)
        self.drifted.clear()
        for home in self.homes:
            self.drain(home)
            self.touch_files(home)
        return run_audit(self.run, self.homes, self.killed, PROVIDER)

    def drain(self, home: Path) -> None:
        """Replay every write killed workers left in the outbox, through a last manager."""
        from memhost import MemoryManager

        from benchmarks.soak.provider import SoakProvider

        label = f"drain.{home.name}"
        for _ in range(3):
            manager = MemoryManager.from_home(home)
            provider = SoakProvider(self.run / "logs" / f"provider-{label}.jsonl", None, label)
            manager.register_provider(provider, name=PROVIDER)
            # The replay runs once the provider is initialised, which a session start does; a
            # manager that never starts one never replays (a straggler killed at the end, or a
            # worker killed just before the stop, left its journal to this drain alone).
            manager.start_session(label)
            manager.flush(60)
            manager.shutdown(30)
            if not manager.status()["outbox_pending"]:
                return

    def touch_files(self, home: Path) -> None:
        """A no-op write to each memory file: a store sweeps a killed writer's temp files at
        its first write, and this is that write (adding an entry that is already there)."""
        store = self.store(home)
        for target in ("memory", "user"):
            entries = store.entries(target)
            if entries:
                store.add(target, entries[0])
