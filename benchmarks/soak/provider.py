"""The soak test's external provider: it appends every write it receives to a log file.

One JSON line per delivered call (``sync_turn``, ``on_builtin_write``, ``session_end``,
``rotate``), written with one ``write`` on an ``O_APPEND`` descriptor, so a SIGKILL never leaves
half a line. The harness switches faults on and off through a small JSON file:

* ``raise``: ``sync_turn`` and the other writes raise :class:`memhost.RetryableError` (a database
  that is down: memhost must keep them and retry in order), ``prefetch`` raises ``RuntimeError``;
* ``hang``: ``prefetch`` blocks until the fault is cleared (memhost must bound the turn), and
  each write takes 50 ms.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from memhost import RetryableError, hookimpl

#: The longest a hanging prefetch blocks, even if the harness never clears the fault.
MAX_HANG = 20.0


class SoakProvider:
    def __init__(self, log: Path, fault_file: Path | None, label: str) -> None:
        self.label = label
        self.fault_file = fault_file
        self._fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._lock = threading.Lock()
        self._seq = 0

    # -- faults ------------------------------------------------------------------------------

    def fault(self) -> str:
        if self.fault_file is None:
            return ""
        try:
            return str(json.loads(self.fault_file.read_text(encoding="utf-8")).get("mode", ""))
        except (OSError, ValueError):
            return ""

    def _write_fault(self, hook: str) -> None:
        mode = self.fault()
        if mode == "raise":
            raise RetryableError(f"soak fault: {hook} refused (database unavailable)")
        if mode == "hang":
            time.sleep(0.05)

    # -- logging -----------------------------------------------------------------------------

    def _log(self, hook: str, **fields: Any) -> None:
        with self._lock:
            if self._fd < 0:
                raise RuntimeError("the soak provider was shut down")
            self._seq += 1
            # "at": the audit orders one write's deliveries across processes by it.
            record = {"hook": hook, "by": self.label, "pid": os.getpid(), "seq": self._seq,
                      "at": time.time(), **fields}
            os.write(self._fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))

    # -- hooks -------------------------------------------------------------------------------

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        mode = self.fault()
        if mode == "raise":
            raise RuntimeError("soak fault: prefetch failed")
        if mode == "hang":
            deadline = time.monotonic() + MAX_HANG
            while self.fault() == "hang" and time.monotonic() < deadline:
                time.sleep(0.05)
        return "- The user prefers short answers."

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str) -> None:
        self._write_fault("sync_turn")
        self._log("sync_turn", session=session_id, text=user_content[:80])

    @hookimpl
    def on_builtin_write(self, action: str, target: str, content: str,
                         previous_content: str | None, session_id: str, origin: str) -> None:
        self._write_fault("on_builtin_write")
        self._log("on_builtin_write", action=action, target=target, content=content,
                  previous=previous_content, origin=origin)

    @hookimpl
    def session_end(self, session_id: str) -> None:
        self._write_fault("session_end")
        self._log("session_end", session=session_id)

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        self._write_fault("rotate")
        self._log("rotate", old=old_session_id, new=new_session_id, reason=reason)

    @hookimpl
    def shutdown(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
