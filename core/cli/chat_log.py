"""``memhost chat``'s conversation log: ``<home>/chats/<session>.jsonl``, one message a line
(clean user text; the recall sent with a turn is not stored), appended after each turn and read
back by ``--session`` to resume. Part of :class:`~memhost.cli.chat.ChatHost`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memhost import jsondoc


class SessionLog:
    """Reading and appending the conversation of ``session_id`` under ``folder`` (mixed into
    ``ChatHost``)."""

    folder: Path
    session_id: str

    def _log_path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.jsonl"

    def _load(self, session_id: str) -> list[dict[str, Any]]:
        path = self._log_path(session_id)
        messages: list[dict[str, Any]] = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            try:
                message = jsondoc.loads(line)
            except ValueError:
                continue  # a line cut off by a crash
            if isinstance(message, dict) and message.get("role"):
                messages.append(message)
        return messages

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        from memhost.files import ensure_private_dir, open_append_private

        ensure_private_dir(self.folder)
        path = self._log_path(self.session_id)
        data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode("utf-8")
        fd = open_append_private(path)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
