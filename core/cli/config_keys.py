"""``memhost config`` keys and values: a dotted key taken apart and checked, a command-line
string read as the type its setting expects, and a value shown as it would be written in TOML."""

from __future__ import annotations

import json
import re
from typing import Any

TABLES = ("memory", "review", "chat", "curator", "injection")


def parse_key(key: str) -> tuple[str, ...]:
    """``("memory", "nudge_interval")`` or ``("providers", name, field)``."""
    from memhost.errors import ConfigError

    parts = tuple(key.split("."))
    if parts[0] == "providers":
        if len(parts) != 3 or not all(parts):
            raise ConfigError(f"{key!r}: a provider setting is written providers.NAME.FIELD "
                              "(see `memhost config schema NAME` for the fields)")
        return parts
    if parts[0] not in TABLES:
        raise ConfigError(f"{key!r}: unknown key; keys start with "
                          f"{', '.join(TABLES + ('providers',))} (see `memhost config show`)")
    if len(parts) != 2 or not parts[1]:
        raise ConfigError(f"{key!r}: write it as TABLE.KEY, e.g. memory.nudge_interval")
    return parts


def _model(table: str) -> Any:
    """The settings model of one of memhost's tables."""
    from memhost.config import Config

    return Config.model_fields[table].annotation


def known_field(table: str, name: str) -> Any:
    """The pydantic field of ``[table] name``; an unknown key is a config error with hints."""
    import difflib

    from memhost.errors import ConfigError

    fields = _model(table).model_fields
    if name not in fields:
        hint = difflib.get_close_matches(name, list(fields), n=1)
        suggestion = f"; did you mean {table}.{hint[0]}?" if hint else "."
        raise ConfigError(f"unknown key {table}.{name}"
                          f"{suggestion} Known keys of [{table}]: {', '.join(fields)}.")
    return fields[name]


def parse_value(annotation: Any, raw: str) -> Any:
    """A command-line string as the type the setting expects. What does not parse is passed on
    as text, so the config validation refuses it with its usual message."""
    from typing import get_origin

    text = raw.strip()
    if annotation is bool:
        lowered = text.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        return raw
    if annotation is int:
        return int(text) if re.fullmatch(r"[+-]?\d+", text) else raw
    if annotation is float:
        try:
            return float(text)
        except ValueError:
            return raw
    if get_origin(annotation) in (tuple, list):
        if text.startswith("["):
            import tomlkit
            from tomlkit.exceptions import TOMLKitError

            try:
                return list(tomlkit.parse(f"v = {text}").unwrap()["v"])
            except TOMLKitError:
                return raw
        return [part.strip() for part in text.split(",") if part.strip()]
    return raw


def as_toml(value: Any) -> str:
    """A value as it would be written in TOML (roughly): true, 3, "text", ["a"]."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "(no value)"
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def as_plain(value: Any) -> str:
    """A value for ``config get``: text as is (for scripts), everything else as in TOML."""
    return value if isinstance(value, str) else as_toml(value)
