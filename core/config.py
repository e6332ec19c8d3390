"""``<home>/config.toml``: the host's memory settings, validated before anything uses them.

A bad file is never a traceback and never silently ignored: :class:`ConfigError` names the
file, the key, what was found and what is expected. A missing file means every default.
Writes go through :func:`update_config`, which keeps comments and key order (tomlkit) and
validates the whole result before replacing the file.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Any

import tomlkit
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tomlkit.exceptions import TOMLKitError

from memhost.errors import ConfigError
from memhost.files import atomic_write_text, locked
from memhost.home import config_path

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)

CharLimit = Annotated[int, Field(ge=0, le=1_000_000)]
Seconds = Annotated[float, Field(ge=0.05, le=600.0)]


class MemorySettings(BaseModel):
    """The ``[memory]`` table."""

    model_config = _STRICT

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: CharLimit = 2200
    user_char_limit: CharLimit = 1375
    nudge_interval: Annotated[int, Field(ge=0, le=10_000)] = 10
    provider: str = ""
    prefetch_timeout: Seconds = 8.0
    shutdown_timeout: Seconds = 5.0
    hook_timeout: Seconds = 15.0
    write_retry_budget: Annotated[float, Field(ge=0.05, le=604_800.0)] = 600.0
    write_approval: bool = False
    # TOML arrays arrive as lists, which a strict tuple refuses; lax here, items stay strict str.
    reserved_tools: Annotated[tuple[Annotated[str, Field(strict=True)], ...], Field(strict=False)] = ()


class ReviewSettings(BaseModel):
    """The ``[review]`` table: the model that runs the background review."""

    model_config = _STRICT

    enabled: bool = True
    base_url: str = ""
    model: str = ""
    api_key_env: str = "MEMHOST_REVIEW_API_KEY"
    timeout: Seconds = 60.0
    max_iterations: Annotated[int, Field(ge=1, le=64)] = 8
    #: Retries of one model call after HTTP 429 or 5xx (with backoff, honouring Retry-After).
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3
    #: Characters of conversation transcript one review sends (the oldest part is left out).
    max_chars: Annotated[int, Field(ge=1_000, le=1_000_000)] = 24_000


class CuratorSettings(BaseModel):
    """The ``[curator]`` table."""

    model_config = _STRICT

    merge: bool = False
    stale_after_days: Annotated[int, Field(ge=1, le=36_500)] = 90
    archive_after_days: Annotated[int, Field(ge=1, le=36_500)] = 180
    max_archive_per_run: Annotated[int, Field(ge=1, le=1_000)] = 10


class Config(BaseModel):
    model_config = _STRICT

    memory: MemorySettings = MemorySettings()
    review: ReviewSettings = ReviewSettings()
    curator: CuratorSettings = CuratorSettings()
    providers: dict[str, dict[str, Any]] = {}


_EXPECTED = {
    "bool_type": "true or false",
    "int_type": "a whole number",
    "float_type": "a number",
    "string_type": "a quoted string",
    "greater_than_equal": "a number of at least {ge}",
    "less_than_equal": "a number of at most {le}",
    "dict_type": "a table",
    # A scalar where a table belongs (`memory = 5`): pydantic's own text names a Python class.
    "model_type": "a table",
    "model_attributes_type": "a table",
    "tuple_type": "a list of strings",
}


def _describe(error: dict[str, Any], path: Path, data: dict[str, Any]) -> str:
    parts = list(error["loc"])
    item = ""
    while parts and isinstance(parts[-1], int):  # a bad element of a list value
        item = f" (item {parts.pop() + 1})" + item
    loc = [str(part) for part in parts]
    table, key = (".".join(loc[:-1]), loc[-1]) if len(loc) > 1 else ("", loc[0])
    where = (f"[{table}] {key}" if table else key) + item
    if error["type"] == "extra_forbidden":
        known = _known_keys(loc[:-1])
        hint = difflib.get_close_matches(key, known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        return (f"{path}: unknown key {where}{suggestion} Known keys here: "
                f"{', '.join(sorted(known))}.")
    expected = _EXPECTED.get(error["type"], error["msg"])
    expected = expected.format(**(error.get("ctx") or {}))
    return f"{path}: {where} = {_as_toml(error.get('input'))} is not valid; expected {expected}."


def _as_toml(value: Any) -> str:
    """Show a value the way the user wrote it in config.toml (``true``, not ``True``)."""
    if isinstance(value, (bool, int, float, str, list)):
        try:
            return tomlkit.item(value).as_string()
        except (TypeError, ValueError):
            pass
    return repr(value)


def _known_keys(table: list[str]) -> list[str]:
    model: type[BaseModel] = Config
    for part in table:
        annotation = model.model_fields[part].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def validate(data: dict[str, Any], path: Path) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = [_describe(err, path, data) for err in exc.errors()]
        raise ConfigError("\n".join(problems)) from None


def _read_document(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return tomlkit.document()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc}). Fix its permissions or encoding.") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def load_config(home: Path) -> Config:
    """Read and validate ``<home>/config.toml``; a missing file gives the defaults."""
    path = config_path(home)
    return validate(_read_document(path).unwrap(), path)


def update_config(home: Path, changes: dict[tuple[str, ...], Any]) -> Config:
    """Apply ``{(table..., key): value}`` to config.toml, keeping comments and order.

    A value of ``None`` removes the key. The whole result is validated before the file is
    replaced, so an invalid change leaves the file exactly as it was.
    """
    path = config_path(home)
    with locked(path):
        document = _read_document(path)
        for (*tables, key), value in changes.items():
            container: Any = document
            for name in tables:
                if name not in container:
                    if value is None:
                        break
                    container[name] = tomlkit.table()
                container = container[name]
            else:
                if value is None:
                    container.pop(key, None)
                else:
                    container[key] = value
        config = validate(document.unwrap(), path)
        atomic_write_text(path, tomlkit.dumps(document))
    return config
