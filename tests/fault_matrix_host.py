"""A host session against a provider that fails one hook in one way, for the fault matrix.

``python tests/fault_matrix_host.py HOOK MODE`` runs it as a real host process (``MEMHOST_HOME``
names the home) and prints one JSON line: what the host saw, and when ``shutdown`` returned.
:func:`run_session` is the same session in the caller's process.

Modes: ``raises`` (an ordinary exception), ``hangs`` (never returns), ``wrong_type`` (a value
of the wrong type), ``retryable`` (``RetryableError`` on every call) and ``service_down`` (the
hook connects to its service, at a port where nothing listens, and gets the OS's refusal).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from memhost import MemoryManager, RetryableError, hookimpl

MODES = ("raises", "hangs", "wrong_type", "retryable", "service_down")
#: Text a failing hook puts in its exception or wrong-typed value: it must never reach the user.
LEAK = "MATRIX-LEAK"
#: What a healthy prefetch recalls: it may reach the model only inside a <memory-context> fence.
RECALLED = "MATRIX-RECALLED the user deploys on Tuesdays"
BOUNDS = {"prefetch_timeout": 0.3, "hook_timeout": 0.5, "shutdown_timeout": 1.0}
TURNS = 3


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MatrixProvider:
    """Healthy in every hook but ``hook``, which fails as ``mode`` says."""

    def __init__(self, hook: str, mode: str) -> None:
        self.hook, self.mode = hook, mode
        self.port = closed_port()
        self.delivered: list[str] = []  # the writes it took, one label each
        self._lock = threading.Lock()

    def _maybe_fail(self, hook: str, wrong: Any) -> Any:
        """``None`` when ``hook`` is healthy, else fail (or return the wrong-typed ``wrong``)."""
        if hook != self.hook:
            return None
        if self.mode == "raises":
            raise RuntimeError(f"{LEAK}: {hook} broke")
        if self.mode == "hangs":
            threading.Event().wait()
        if self.mode == "retryable":
            raise RetryableError(f"{LEAK}: {hook} is waiting for a service")
        if self.mode == "service_down":
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        return wrong

    def _took(self, label: str) -> None:
        with self._lock:
            self.delivered.append(label)

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        return self._maybe_fail("check_available", 42)

    @hookimpl
    def initialize(self, session_id: str) -> None:
        return self._maybe_fail("initialize", {"leak": LEAK})

    @hookimpl
    def prompt_fragment(self) -> str | None:
        wrong = self._maybe_fail("prompt_fragment", {"leak": LEAK})
        return wrong if wrong is not None else "The matrix provider keeps notes."

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        wrong = self._maybe_fail("tool_schemas", LEAK)
        return wrong if wrong is not None else [{
            "name": "matrix_tool", "description": "Look something up.",
            "parameters": {"type": "object", "properties": {}}}]

    @hookimpl
    def handle_tool_call(self, tool_name: str) -> str:
        wrong = self._maybe_fail("handle_tool_call", {"leak": LEAK})
        return wrong if wrong is not None else json.dumps({"success": True, "tool": tool_name})

    @hookimpl
    def prefetch(self, query: str) -> str | None:
        wrong = self._maybe_fail("prefetch", [LEAK])
        return wrong if wrong is not None else RECALLED

    @hookimpl
    def queue_prefetch(self, query: str) -> None:
        return self._maybe_fail("queue_prefetch", {"leak": LEAK})

    def _write(self, hook: str, label: str | None) -> Any:
        """A write hook: fail as told, else record ``label`` as delivered."""
        wrong = self._maybe_fail(hook, {"leak": LEAK})
        if label is not None:
            self._took(label)
        return wrong

    @hookimpl
    def sync_turn(self, user_content: str) -> None:
        return self._write("sync_turn", f"sync {user_content}")

    @hookimpl
    def on_builtin_write(self, content: str) -> None:
        return self._write("on_builtin_write", f"mirror {content}")

    @hookimpl
    def on_subtask(self, task: str) -> None:
        return self._write("on_subtask", f"subtask {task}")

    @hookimpl
    def session_end(self, session_id: str) -> None:
        # m2's own session end counts; m1's travels with the rotation and counts there.
        return self._write("session_end", "end m2" if session_id == "m2" else None)

    @hookimpl
    def rotate(self, new_session_id: str) -> None:
        return self._write("rotate", f"rotate {new_session_id}")

    @hookimpl
    def pre_compress(self) -> str | None:
        wrong = self._maybe_fail("pre_compress", 7)
        return wrong if wrong is not None else "keep the deployment day"

    @hookimpl
    def shutdown(self) -> dict[str, Any] | None:
        return self._maybe_fail("shutdown", LEAK)


def run_session(home: Path, hook: str, mode: str) -> dict[str, Any]:
    """A whole session; returns what the host saw, JSON-ready."""
    manager = MemoryManager.from_home(home, **BOUNDS)
    provider = MatrixProvider(hook, mode)
    seen: dict[str, Any] = {"registered": manager.register_provider(provider, name="matrix")}
    written = 0  # writes the host handed memhost for the provider
    manager.start_session("m1")
    seen["prompt"] = manager.system_prompt()
    seen["tools"] = [s["name"] for s in manager.tool_schemas()]
    seen["turns"], seen["answers"] = [], []
    transcript: list[dict[str, Any]] = []
    for n in range(TURNS):
        text = f"what did we decide about deployments, part {n}?"
        turn = manager.begin_turn(text)
        seen["turns"].append({"context": turn.context, "recall": turn.recall})
        seen["answers"].append(manager.call_tool("memory", {
            "action": "add", "target": "memory", "content": f"Matrix fact number {n}"}))
        if "matrix_tool" in seen["tools"]:
            seen["answers"].append(manager.call_tool("matrix_tool", {}))
        reply = f"Noted, part {n}."
        transcript += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        manager.finish_turn(text, reply, messages=transcript)
        written += 2  # the sync and the mirrored memory add
    seen["kept"] = manager.pre_compress(transcript)
    manager.subtask_finished("summarise the notes", "done", "child-1")
    manager.rotate("m2", "new", messages=transcript)
    manager.end_session([])
    written += 3
    started = time.monotonic()
    report = manager.shutdown()
    seen["shutdown_returned"] = time.monotonic()
    seen["shutdown_took"] = seen["shutdown_returned"] - started
    status = manager.status()
    seen["report"] = report.as_dict()
    seen["status"] = {k: status[k] for k in ("problems", "failed_writes", "outbox_pending",
                                             "configured_provider_active")}
    entry = next((p for p in status["providers"] if p["name"] == "matrix"), None)
    seen["health"] = entry["health"] if entry else None
    seen["hook_errors"] = {h: c["errors"] for h, c in entry["calls"].items()} if entry else {}
    seen["written"] = written if seen["registered"] else 0
    with provider._lock:
        seen["delivered"] = len(provider.delivered)
    seen["memory_file"] = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    return seen


if __name__ == "__main__":
    result = run_session(Path(__import__("os").environ["MEMHOST_HOME"]), sys.argv[1], sys.argv[2])
    print(json.dumps(result), flush=True)
