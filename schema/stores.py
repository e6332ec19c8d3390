"""Where a provider's non-secret settings live.

``config``: the ``[providers.<name>]`` table of ``<home>/config.toml``, changed through
:func:`memhost.config.update_config` so comments and key order survive and the whole file is
validated before it is replaced. ``json_file``: ``<home>/<name>/config.json``, owned by the
provider, replaced atomically with mode 0600.

Both take a batch of changes (``None`` removes a key) and apply it in one write. Secrets never go
into either store: they live in :class:`memhost.schema.envstore.EnvStore`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from memhost import jsondoc
from memhost.errors import ConfigError
from memhost.files import atomic_write_json, locked


class ValueStore(Protocol):
    path: Path

    def read(self) -> dict[str, Any]: ...

    def write(self, changes: Mapping[str, Any]) -> None: ...


class ConfigTableStore:
    """The ``[providers.<name>]`` table of config.toml."""

    def __init__(self, home: Path, name: str) -> None:
        from memhost.home import config_path

        self.home, self.name, self.path = home, name, config_path(home)

    def read(self) -> dict[str, Any]:
        from memhost.config import read_config

        # Lenient, so a wrong key elsewhere in config.toml leaves this table readable.
        return dict(read_config(self.home)[0].providers.get(self.name, {}))

    def write(self, changes: Mapping[str, Any]) -> None:
        from memhost.config import update_config

        if changes:
            update_config(self.home, {("providers", self.name, key): value
                                      for key, value in changes.items()})


class JsonFileStore:
    """``<home>/<name>/config.json``: one JSON object."""

    def __init__(self, home: Path, name: str) -> None:
        self.home, self.name, self.path = home, name, home / name / "config.json"

    def read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.path}: cannot be read ({exc}); fix its permissions or "
                              "encoding") from None
        try:
            data = jsondoc.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{self.path}: not valid JSON ({exc}); fix or delete the file "
                              "(it holds only this provider's settings)") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path}: must hold a JSON object, not "
                              f"{type(data).__name__}")
        return data

    def write(self, changes: Mapping[str, Any]) -> None:
        if not changes:
            return
        with locked(self.path):
            data = self.read()  # an unreadable file is refused, never overwritten
            for key, value in changes.items():
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value
            atomic_write_json(self.path, data)


def store_for(home: Path, name: str, storage: str) -> ConfigTableStore | JsonFileStore:
    if storage == "json_file":
        return JsonFileStore(home, name)
    if storage == "config":
        return ConfigTableStore(home, name)
    raise ValueError(f"unknown storage {storage!r}")
