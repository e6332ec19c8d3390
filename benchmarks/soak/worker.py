"""One soak worker process: sessions of turns with random memory writes, as a host would run them.

``python -m benchmarks.soak.worker --run DIR --worker N --incarnation K --home HOME --seed S``

Each session builds a :class:`memhost.MemoryManager` for its home, registers the logging
provider, and runs turns: ``begin_turn``, zero to two ``memory`` tool calls (add, replace,
remove or a batch; a refused add for lack of room is followed by a consolidating batch, as a
model would), ``finish_turn``. Some sessions run with ``memory.write_approval`` on, so their
writes are staged for the harness to approve. Sessions end with ``end_session`` or
``rotate(new)``, then ``shutdown``.

Every write the worker saw committed, every sync it queued and every session boundary is logged
(one flushed line each, after memhost returned and before the worker goes on) to
``logs/w<N>.<K>.jsonl``: that log is what the audit holds memhost to. The worker stops after its
current session when the ``stop`` file appears.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import corpus

ID = re.compile(r"^\[([^\]\s]+)\]")
PROVIDER = "soaklog"


class Worker:
    def __init__(self, run: Path, worker: int, incarnation: int, home: Path, seed: int) -> None:
        self.run = run
        self.name = f"w{worker}"
        self.tag = f"w{worker}.{incarnation}"
        self.home = home
        self.rng = random.Random(seed)
        self.counter = 0
        self.turns = 0
        self.sessions = 0
        self.managers = 0
        self.mgr = ""
        logs = run / "logs"
        self._log_fd = os.open(logs / f"{self.tag}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.provider_log = logs / f"provider-{self.tag}.jsonl"
        self.fault_file = run / "faults" / f"{self.name}.json"
        self.stop_file = run / "stop"

    def log(self, **record: Any) -> None:
        # One write per line on an O_APPEND descriptor: flushed to the OS before returning.
        record["mgr"] = self.mgr
        os.write(self._log_fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))

    def next_id(self) -> str:
        self.counter += 1
        return f"{self.tag}.{self.counter}"

    def fact(self) -> str:
        return corpus.entry(self.rng, f"[{self.next_id()}]")

    # -- sessions ----------------------------------------------------------------------------

    def loop(self) -> None:
        while not self.stop_file.exists():
            self.session()

    def session(self) -> None:
        from memhost import MemoryManager
        from benchmarks.soak.provider import SoakProvider

        approval = self.rng.random() < 0.2
        manager = MemoryManager.from_home(self.home, write_approval=approval, prefetch_timeout=0.5,
                                          shutdown_timeout=3.0)
        # The provider's label names this manager, so the audit can tell a write delivered by
        # the manager that queued it from one replayed from the outbox by a later manager.
        self.managers += 1
        self.mgr = f"{self.tag}.m{self.managers}"
        provider = SoakProvider(self.provider_log, self.fault_file, self.mgr)
        if not manager.register_provider(provider, name=PROVIDER):
            raise RuntimeError(f"the soak provider was refused: {manager.status()['problems']}")
        self.sessions += 1
        session_id = f"{self.tag}.s{self.sessions}"
        manager.start_session(session_id)
        self.log(kind="session", session=session_id, approval=approval)
        while True:
            messages = self.turns_of(manager, self.rng.randint(2, 10))
            if self.rng.random() < 0.3 and not self.stop_file.exists():
                self.sessions += 1
                new_id = f"{self.tag}.s{self.sessions}"
                manager.rotate(new_id, "new", messages=messages)
                self.log(kind="session_end", session=session_id)
                self.log(kind="rotate", old=session_id, new=new_id)
                session_id = new_id
                continue
            manager.end_session(messages)
            self.log(kind="session_end", session=session_id)
            break
        report = manager.shutdown()
        self.log(kind="shutdown", status=report.status, abandoned=report.abandoned_writes,
                 kept=report.kept_in_outbox)

    def turns_of(self, manager: Any, count: int) -> list[dict[str, str]]:
        messages: list[dict[str, str]] = []
        for _ in range(count):
            if self.stop_file.exists():
                break
            self.turns += 1
            sync = f"{self.tag}.t{self.turns}"
            user = f"[sync {sync}] {corpus.user_message(self.rng)}"
            manager.begin_turn(user)
            for _ in range(self.rng.choice((0, 1, 1, 2))):
                self.memory_op(manager)
            reply = corpus.reply(self.rng, paragraphs=1)
            messages += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
            manager.finish_turn(user, reply, messages=messages[-2:])
            self.log(kind="sync", id=sync)
            time.sleep(self.rng.uniform(0.005, 0.02))  # the model's turn
        return messages

    # -- memory writes -----------------------------------------------------------------------

    def memory_op(self, manager: Any) -> None:
        target = "memory" if self.rng.random() < 0.7 else "user"
        try:
            entries = [e for e in manager.store.entries(target) if ID.match(e)]
        except Exception:  # unreadable right now: the tool call below says so
            entries = []
        roll = self.rng.random()
        if roll < 0.45 or not entries:
            self.call(manager, {"action": "add", "target": target, "content": self.fact()},
                      consolidate=True)
        elif roll < 0.65:
            old = self.rng.choice(entries)
            self.call(manager, {"action": "replace", "target": target,
                                "old_text": ID.match(old).group(0), "content": self.fact()})
        elif roll < 0.8:
            old = self.rng.choice(entries)
            self.call(manager, {"action": "remove", "target": target,
                                "old_text": ID.match(old).group(0)})
        else:
            ops: list[dict[str, str]] = []
            for old in self.rng.sample(entries, min(len(entries), self.rng.randint(1, 3))):
                if self.rng.random() < 0.5:
                    ops.append({"action": "remove", "old_text": ID.match(old).group(0)})
                else:
                    ops.append({"action": "replace", "old_text": ID.match(old).group(0),
                                "content": self.fact()})
            ops.append({"action": "add", "content": self.fact()})
            self.call(manager, {"target": target, "operations": ops})

    def call(self, manager: Any, args: dict[str, Any], *, consolidate: bool = False) -> None:
        answer = json.loads(manager.call_tool("memory", args))
        action = args.get("action", "batch")
        if not answer.get("success"):
            self.log(kind="refused", action=action, error=str(answer.get("error", ""))[:120])
            if consolidate and "budget" in str(answer.get("error", "")):
                # What a model does with a full store: free room and add, in one batch.
                entries = [e for e in manager.store.entries(args["target"]) if ID.match(e)]
                ops = [{"action": "remove", "old_text": ID.match(e).group(0)}
                       for e in self.rng.sample(entries, min(len(entries), 2))]
                ops.append({"action": "add", "content": args["content"]})
                self.call(manager, {"target": args["target"], "operations": ops})
            return
        if answer.get("staged"):
            self.log(kind="staged", pending=answer.get("pending_id"), action=action)
            return
        self.log(kind="commit", by=self.tag, home=str(self.home), mirrored=True,
                 **committed(args, answer))


def committed(args: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """What a successful ``memory`` call committed: texts now stored (``new``), texts it replaced
    or removed (``gone``, which the archive must hold), and the mirror calls it implies."""
    target = args["target"]
    new: list[str] = []
    gone: list[str] = []
    mirrors: list[list[Any]] = []
    ops = args.get("operations") or [args]
    replaced = answer.get("replaced_entries") or {}
    removed = answer.get("removed_entries") or {}
    for number, op in enumerate(ops, 1):
        action = op["action"]
        previous = (replaced.get(str(number)) or removed.get(str(number))
                    if "operations" in args else
                    answer.get("replaced_entry") or answer.get("removed_entry"))
        if action == "add":
            new.append(op["content"])
            mirrors.append(["add", op["content"], None])
        elif action == "replace":
            new.append(op["content"])
            gone.append(previous)
            mirrors.append(["replace", op["content"], previous])
        else:
            gone.append(previous)
            mirrors.append(["remove", "", previous])
    return {"target": target, "new": new, "gone": gone, "mirrors": mirrors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak.worker")
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--incarnation", type=int, required=True)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.ERROR, format="%(name)s: %(levelname)s: %(message)s")
    Worker(args.run, args.worker, args.incarnation, args.home, args.seed).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
