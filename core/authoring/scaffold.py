"""``memhost providers new``: write a small, working provider to start from.

Two forms: a *folder* provider (``<home>/plugins/<name>/``, found by discovery as a user
provider) and a pip *package* exposing the provider through the ``memhost.providers`` entry point.
Both hold the same provider: notes kept in a JSON-lines file under the memhost home, a tool to add
and search them, recall of matching notes before each turn, a config schema, a README and a test
that runs memhost's provider contract suite. The files' text is in
:mod:`memhost.authoring.templates`; this module fills it in and writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from memhost.authoring.templates import (
    CONFIG_SCHEMA,
    FOLDER_MANIFEST,
    FOLDER_TEST,
    NOTES,
    PACKAGE_PYPROJECT,
    PACKAGE_TEST,
    PROVIDER,
    README,
)
from memhost.discovery.manifest import NAME_PATTERN, RESERVED_NAMES
from memhost.errors import MemhostError


class ScaffoldError(MemhostError):
    """The provider could not be scaffolded; nothing was written."""


@dataclass(frozen=True)
class Names:
    name: str

    @property
    def ident(self) -> str:
        return re.sub(r"[^A-Za-z0-9_]", "_", self.name).lower()

    @property
    def cls(self) -> str:
        words = re.split(r"[^A-Za-z0-9]+", self.name)
        camel = "".join(w[:1].upper() + w[1:] for w in words if w)
        if camel[:1].isdigit():
            camel = "P" + camel
        return f"{camel}Provider"

    @property
    def tool(self) -> str:
        return f"{self.ident}_notes"

    @property
    def label(self) -> str:
        return " ".join(w.capitalize() for w in re.split(r"[-_]+", self.name) if w) or self.name

    @property
    def package(self) -> str:
        ident = self.ident if self.ident[:1].isalpha() else f"p{self.ident}"
        return f"memhost_{ident}" if not ident.startswith("memhost_") else ident

    @property
    def distribution(self) -> str:
        return f"memhost-{self.name.lower().replace('_', '-')}"

    def mapping(self) -> dict[str, str]:
        return {"name": self.name, "ident": self.ident, "cls": self.cls, "tool": self.tool,
                "label": self.label, "package": self.package, "distribution": self.distribution}


def check_name(name: str) -> Names:
    if not NAME_PATTERN.match(name):
        raise ScaffoldError(f"{name!r} cannot name a provider: use letters, digits, '_' and '-', "
                            "starting with a letter or digit (at most 64 characters)")
    if name.lower() in RESERVED_NAMES:
        raise ScaffoldError(f"{name!r} is reserved (it means the builtin memory only)")
    return Names(name)


def _render(template: str, values: dict[str, str]) -> str:
    return Template(template).substitute(values)


def folder_files(names: Names) -> dict[str, str]:
    values = {**names.mapping(), "test_command": "python -m pytest tests"}
    return {
        "plugin.toml": _render(FOLDER_MANIFEST, values),
        "provider.py": _render(PROVIDER, values),
        "notes.py": NOTES,
        "config_schema.py": _render(CONFIG_SCHEMA, values),
        "README.md": _render(README, values),
        "tests/test_provider.py": _render(FOLDER_TEST, values),
    }


def package_files(names: Names) -> dict[str, str]:
    values = {**names.mapping(),
              "test_command": "pip install -e . && python -m pytest"}
    pkg = f"src/{names.package}"
    return {
        "pyproject.toml": _render(PACKAGE_PYPROJECT, values),
        "README.md": _render(README, values),
        f"{pkg}/__init__.py": f'"""The {names.name} memory provider for memhost."""\n',
        f"{pkg}/provider.py": _render(PROVIDER, values),
        f"{pkg}/notes.py": NOTES,
        f"{pkg}/config_schema.py": _render(CONFIG_SCHEMA, values),
        "tests/test_provider.py": _render(PACKAGE_TEST, values),
    }


def scaffold(name: str, target: Path, *, package: bool = False) -> list[Path]:
    """Write the provider's files into ``target`` (which must not exist yet, or be empty)."""
    names = check_name(name)
    files = package_files(names) if package else folder_files(names)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"{target} already exists and is not empty; choose another name or "
                            "--dir, or remove it first")
    written = []
    try:
        for relative, text in files.items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise ScaffoldError(f"cannot write {target}: {exc}") from None
    return written


__all__ = ["Names", "ScaffoldError", "check_name", "folder_files", "package_files", "scaffold"]
