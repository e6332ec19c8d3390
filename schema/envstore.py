"""``<home>/.env``: where secrets live, and the only place they live.

Secrets are written here (mode 0600, atomic replace) under the env key a config field names,
never into config.toml. Reading back for display is only ever ``is_set``; :meth:`EnvStore.get`
exists for the runtime that needs the value (a provider's DSN, the review model's API key).
A variable already set in the process environment wins over the file, so deployments can
inject secrets without touching disk.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memhost.files import atomic_write_text, locked
from memhost.home import env_path
from memhost.security.masking import remember

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _quote(value: str) -> str:
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r"))
    return f'"{escaped}"'


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        body, out, i = raw[1:-1], [], 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                out.append({"n": "\n", "r": "\r", '"': '"', "\\": "\\"}.get(body[i + 1],
                                                                          body[i + 1]))
                i += 2
            else:
                out.append(body[i])
                i += 1
        return "".join(out)
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    return raw


class EnvStore:
    def __init__(self, home: Path) -> None:
        self.path = env_path(home)

    def _read(self) -> tuple[list[str], dict[str, str]]:
        try:
            # Split on newlines only: str.splitlines() would also break a line at characters
            # such as U+2028 or \x0c that a quoted value may hold.
            lines = self.path.read_text(encoding="utf-8").split("\n")
        except FileNotFoundError:
            return [], {}
        if lines and lines[-1] == "":
            lines.pop()  # the final newline ends the last line; it does not start another
        values: dict[str, str] = {}
        for line in lines:
            stripped = line.strip()
            if not stripped or stripped.startswith("#") or "=" not in stripped:
                continue
            key, _, raw = stripped.removeprefix("export ").partition("=")
            if KEY.match(key.strip()):
                values[key.strip()] = _unquote(raw)
                remember(values[key.strip()])  # every value here is a secret: mask it anywhere
        return lines, values

    def get(self, key: str) -> str | None:
        """The secret's value: the process environment first, then the file."""
        if os.environ.get(key):
            remember(os.environ[key])
            return os.environ[key]
        return self._read()[1].get(key) or None

    def remember_all(self) -> None:
        """Have every value in the file masked wherever it appears in this process's output
        (:mod:`memhost.security.masking`), whether or not it is read later."""
        self._read()

    def is_set(self, key: str) -> bool:
        return self.get(key) is not None

    def set(self, key: str, value: str) -> None:
        remember(value)
        self._update(key, value)

    def unset(self, key: str) -> None:
        self._update(key, None)

    def _update(self, key: str, value: str | None) -> None:
        if not KEY.match(key):
            raise ValueError(f"{key!r} is not a valid environment variable name")
        with locked(self.path):
            lines, _ = self._read()
            kept = [line for line in lines
                    if line.strip().removeprefix("export ").partition("=")[0].strip() != key]
            if value is not None:
                kept.append(f"{key}={_quote(value)}")
            atomic_write_text(self.path, "\n".join(kept) + ("\n" if kept else ""))
