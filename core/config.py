"""``<home>/config.toml``: the host's memory settings, validated before anything uses them.

A bad file is never a traceback and never silently ignored: :class:`ConfigError` names the
file, the key, what was found, what is expected and the command that repairs it. A missing file
means every default. :func:`load_config` (hosts, memory writes) refuses a bad file;
:func:`read_config` (commands that only look) keeps every valid setting and says what is wrong.
Writes go through :func:`update_config`, which keeps comments and key order (tomlkit) and
refuses a change that makes any key wrong, so a broken file can be repaired key by key.
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Annotated, Any

import tomlkit
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from tomlkit.exceptions import TOMLKitError

from memhost.errors import ConfigError
from memhost.files import atomic_write_text, locked, refuse_shared_dir
from memhost.home import config_path
from memhost.security.text import NOT_TEXT, half_character

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
    #: Seconds a provider's import (and instantiation) may take before it is reported as failed.
    provider_import_timeout: Seconds = 10.0
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


class ChatSettings(BaseModel):
    """The ``[chat]`` table: the model ``memhost chat`` talks to (the review has its own)."""

    model_config = _STRICT

    base_url: str = ""
    model: str = ""
    api_key_env: str = "MEMHOST_CHAT_API_KEY"
    timeout: Seconds = 120.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3


class InjectionSettings(BaseModel):
    """The ``[injection]`` table: how memory writes are screened (see docs/security.md)."""

    model_config = _STRICT

    #: Risk score from which a write waits for a person's approval (and a hand-planted entry is
    #: withheld from the prompt).
    stage_at: Annotated[float, Field(ge=0.5, le=100.0)] = 3.0
    #: Risk score from which a write is refused outright (and any entry withheld).
    refuse_at: Annotated[float, Field(ge=0.5, le=100.0)] = 6.0
    #: Ask the ``[review]`` model about entries between the two thresholds, when one is set.
    model_judge: bool = True
    #: Seconds the judge may take; no answer in time leaves the entry staged.
    judge_timeout: Seconds = 10.0

    @model_validator(mode="after")
    def _ordered(self) -> InjectionSettings:
        if self.refuse_at < self.stage_at:
            raise ValueError(f"refuse_at ({self.refuse_at:g}) must not be below stage_at "
                             f"({self.stage_at:g})")
        return self


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
    chat: ChatSettings = ChatSettings()
    curator: CuratorSettings = CuratorSettings()
    injection: InjectionSettings = InjectionSettings()
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


def _location(error: dict[str, Any]) -> tuple[list[str], str]:
    """The error's key path (list items left out) and how a person names it: ``[memory] key``."""
    parts = list(error["loc"])
    item = ""
    while parts and isinstance(parts[-1], int):  # a bad element of a list value
        item = f" (item {parts.pop() + 1})" + item
    loc = [str(part) for part in parts]
    table, key = (".".join(loc[:-1]), loc[-1]) if len(loc) > 1 else ("", loc[0])
    return loc, (f"[{table}] {key}" if table else key) + item


def _describe(error: dict[str, Any], path: Path, *, refused: bool = False) -> str:
    """What is wrong with one key, and how to fix it. ``refused``: the value is a change
    :func:`update_config` turned down, so the file does not hold it and there is nothing to fix
    in it."""
    loc, where = _location(error)
    dotted = ".".join(loc)
    if error["type"] == "extra_forbidden":
        known = _known_keys(loc[:-1])
        hint = difflib.get_close_matches(loc[-1], known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else "."
        problem = f"unknown key {where}{suggestion} Known keys here: {', '.join(sorted(known))}."
        fix = f" Remove it with `memhost config unset {dotted}`."
    else:
        expected = _EXPECTED.get(error["type"], error["msg"])
        expected = expected.format(**(error.get("ctx") or {}))
        problem = f"{where} = {_as_toml(error.get('input'))} is not valid; expected {expected}."
        fix = (f" Fix it with `memhost config set {dotted} VALUE`, or go back to the default with "
               f"`memhost config unset {dotted}`." if len(loc) == 2 else "")
    if refused:
        return f"{problem} Nothing was saved; {path} is as it was."
    return f"{path}: {problem}{fix}"


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
    """``data`` as a :class:`Config`; :class:`ConfigError` names every key that is wrong."""
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = [_describe(err, path) for err in exc.errors()]
        raise ConfigError("\n".join(problems)) from None


def _problems(data: dict[str, Any], path: Path, *,
              refused: bool = False) -> tuple[Config, dict[tuple[str, ...], str]]:
    """The config with every wrong key left out (so it takes its default), and what was wrong,
    by key path (``refused``: see :func:`_describe`). A key that cannot be used never hides the
    valid keys around it."""
    data = copy.deepcopy(data)
    found: dict[tuple[str, ...], str] = {}
    for _ in range(64):  # each round drops at least one key; a bound against surprises
        try:
            return Config.model_validate(data), found
        except ValidationError as exc:
            for err in exc.errors():
                loc, _where = _location(err)
                found.setdefault(tuple(loc), _describe(err, path, refused=refused))
                _drop(data, loc)
    return Config(), found


def _drop(data: dict[str, Any], loc: list[str]) -> None:
    container: Any = data
    for part in loc[:-1]:
        container = container.get(part) if isinstance(container, dict) else None
    if isinstance(container, dict):
        container.pop(loc[-1], None)


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
    """Read and validate ``<home>/config.toml``; a missing file gives the defaults. Anything
    wrong raises :class:`ConfigError` naming the key: a host does not start on a config it
    would misread."""
    refuse_shared_dir(home, "the memhost home")  # its config says which code runs
    path = config_path(home)
    return validate(_read_document(path).unwrap(), path)


def read_config(home: Path) -> tuple[Config, str | None]:
    """The config for commands that only look (and for repairing it): every valid setting, the
    default for each wrong one, and what is wrong (``None`` when nothing is). A file that is not
    TOML at all gives every default. A home other users can write is refused all the same: its
    config says which code runs, so there is nothing safe to show from it."""
    refuse_shared_dir(home, "the memhost home")
    path = config_path(home)
    try:
        document = _read_document(path)
    except ConfigError as exc:
        return Config(), str(exc)
    config, found = _problems(document.unwrap(), path)
    return config, "\n".join(found.values()) or None


def written_in_file(home: Path, keys: tuple[str, ...]) -> bool:
    """Whether config.toml holds ``keys`` (a table path and key), valid or not."""
    try:
        container: Any = _read_document(config_path(home)).unwrap()
    except ConfigError:
        return False
    for key in keys:
        if not isinstance(container, dict) or key not in container:
            return False
        container = container[key]
    return True


def update_config(home: Path, changes: dict[tuple[str, ...], Any]) -> Config:
    """Apply ``{(table..., key): value}`` to config.toml, keeping comments and order.

    A value of ``None`` removes the key. The result is validated before the file is replaced:
    a change that makes any key wrong is refused and leaves the file exactly as it was. Keys
    that were already wrong do not block a change, so a broken file can be repaired one key at
    a time (a file that is not TOML at all must be fixed in an editor).
    """
    path = config_path(home)
    with locked(path):
        document = _read_document(path)
        _, before = _problems(document.unwrap(), path)
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
        config, after = _problems(document.unwrap(), path, refused=True)
        new = [message for where, message in after.items()
               if where not in before or any(where[: len(c)] == c or c[: len(where)] == where
                                             for c in changes)]
        if new:
            raise ConfigError("\n".join(new))
        unwritable = [where for where, value in changes.items() if half_character(value)]
        if unwritable:  # config.toml is UTF-8
            raise ConfigError("\n".join(f"{'.'.join(where)}: {NOT_TEXT}" for where in unwritable))
        atomic_write_text(path, tomlkit.dumps(document))
    return config
