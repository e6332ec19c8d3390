"""``plugin.toml``: what a folder provider says about itself, read without running its code.

A folder provider's manifest names the provider, its version, a one-line description, the object
memhost loads (``entry = "module:Class"``, relative to the folder) and, optionally, the pip
requirements it needs. A broken manifest is a :class:`ManifestError` naming the file, the key and
what is expected.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from memhost.errors import ProviderError

MANIFEST_NAME = "plugin.toml"
#: What a provider name may look like: it names a config table, an env key prefix and a folder.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
ENTRY_PATTERN = re.compile(rf"^{_DOTTED}(?::{_DOTTED})?$")
#: Names that mean "no external provider", and names of memhost's own folders in the home (a
#: provider's json_file settings live in ``<home>/<name>/``), so neither can name a provider.
RESERVED_NAMES = frozenset({"builtin", "none", "default",
                            "memories", "plugins", "pending", "outbox", "chats"})


class ManifestError(ProviderError):
    """``plugin.toml`` is missing, unreadable or invalid."""


class Manifest(BaseModel):
    """The validated contents of ``plugin.toml``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    version: str
    description: str = ""
    entry: str
    requires: list[str] = []

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_PATTERN.match(value):
            raise ValueError("letters, digits, '_' and '-' only, starting with a letter or digit, "
                             "at most 64 characters")
        if value.lower() in RESERVED_NAMES:
            raise ValueError(f"{value!r} is reserved (it means the builtin memory only, or names "
                             "one of memhost's own folders in the home); choose another name")
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        try:
            Version(value)
        except InvalidVersion:
            raise ValueError("a version like '0.1.0' (PEP 440)") from None
        return value

    @field_validator("entry")
    @classmethod
    def _entry(cls, value: str) -> str:
        if value.partition(":")[0].endswith(".py"):
            raise ValueError("a module name without '.py', then ':' and the provider class, "
                             "e.g. 'provider:NotesProvider'")
        if not ENTRY_PATTERN.match(value):
            raise ValueError("'module:Class' (a module of the folder, then the provider class, "
                             "instance or factory in it), e.g. 'provider:NotesProvider'")
        return value

    @field_validator("requires")
    @classmethod
    def _requires(cls, value: list[str]) -> list[str]:
        for index, text in enumerate(value):
            try:
                Requirement(text)
            except InvalidRequirement as exc:
                raise ValueError(f"requires[{index}] = {text!r} is not a pip requirement "
                                 f"({exc})") from None
        return value

    @property
    def module(self) -> str:
        return self.entry.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.entry.partition(":")[2]


_EXPECTED = {
    "missing": "is required",
    "string_type": "must be a quoted string",
    "list_type": "must be a list of strings, e.g. [\"requests>=2\"]",
}


def _message(error: dict[str, Any], path: Path) -> str:
    loc = [str(part) for part in error["loc"]]
    key = loc[0] if loc else "?"
    if error["type"] == "extra_forbidden":
        hint = difflib.get_close_matches(key, list(Manifest.model_fields), n=1)
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
        return (f"{path}: unknown key {key!r}{suggestion}; known keys: "
                f"{', '.join(Manifest.model_fields)}")
    if len(loc) > 1:
        key = f"{key}[{loc[1]}]"
    expected = _EXPECTED.get(error["type"])
    if expected is None:
        expected = "must be " + str(error["msg"]).removeprefix("Value error, ")
    shown = "" if error["type"] == "missing" else f" = {error.get('input')!r}"
    return f"{path}: key {key!r}{shown} {expected}"


def parse_manifest(data: dict[str, Any], path: Path) -> Manifest:
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError("; ".join(_message(e, path) for e in exc.errors())) from None


def read_manifest(folder: Path) -> Manifest:
    """Read and validate ``<folder>/plugin.toml``; :class:`ManifestError` says what is wrong."""
    path = folder / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ManifestError(f"{path}: missing; a provider folder needs a plugin.toml with name, "
                            "version, description and entry = \"module:Class\"") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot be read ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise ManifestError(f"{path}: not valid TOML: it nests too deeply") from None
    return parse_manifest(data, path)


__all__ = ["MANIFEST_NAME", "Manifest", "ManifestError", "NAME_PATTERN", "read_manifest"]
