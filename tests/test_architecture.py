"""docs/architecture.md names real modules, and every documented public name imports.

The page is checked for what it names, not for completeness: a module added later needs no edit
here, and a module renamed or removed without updating the page fails.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pluggy
import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
#: A dotted name in backticks: ``memhost.x.y`` (a module, or a name inside one).
DOTTED = re.compile(r"`(memhost(?:\.[A-Za-z_]\w*)*)`")
#: A path in backticks: ``core/manager.py``, ``plugins/sqlite/provider.py``, ``core/web/``.
PATH = re.compile(r"`((?:core|schema|builtin_providers|plugins|tests|docs|benchmarks)/[\w./]*)`")
CODE_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def resolve(dotted: str) -> Any:
    """The module a dotted name is, or the object it names inside the longest importable module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is None or not ".".join(parts[:cut]).startswith(exc.name):
                raise  # the module exists but one of its own imports is missing
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)  # AttributeError names what is missing
        return found
    raise ModuleNotFoundError(dotted)


def section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_module_and_name_the_page_gives_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    names = sorted(set(DOTTED.findall(text)))
    assert len(names) > 40  # the page names modules, not just rooms
    missing = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{name}: {exc}")
    assert not missing, missing
    paths = sorted(set(PATH.findall(text)))
    assert paths and not [p for p in paths if not (REPO / p).exists()]


def test_every_package_the_page_gives_a_paragraph_is_a_real_room() -> None:
    rooms = re.findall(r"^## (\w+) \(`core/(\w+)/`\)$", PAGE.read_text(encoding="utf-8"), re.M)
    assert {"discovery", "recall", "review", "authoring", "security", "mcp", "web"} <= \
        {title for title, _ in rooms}
    for title, folder in rooms:
        assert title == folder and (REPO / "core" / folder / "__init__.py").is_file(), folder


@pytest.mark.parametrize("title, first, last", [
    ("The way of a turn", "begin_turn", "provider"),
    ("The way of a memory write", "call_tool", "mirror"),
])
def test_every_step_of_each_way_names_its_module(title: str, first: str, last: str) -> None:
    steps = re.findall(r"^\d+\. \*\*`?([\w ]+?)`?\*\* — (.*?)(?=^\d+\. |\Z)", section(title),
                       re.M | re.S)
    assert steps[0][0] == first and steps[-1][0] == last
    for step, text in steps:
        assert DOTTED.search(text) or PATH.search(text), f"step {step!r} names no module"


# -- module size ---------------------------------------------------------------------------------

#: A module over this many lines holds more than one concept: split it by concept.
MAX_MODULE_LINES = 400


def module_lengths() -> dict[str, int]:
    """Lines of every Python module memhost installs from core/, builtin_providers/, plugins/."""
    lengths = {}
    for folder in ("core", "builtin_providers", "plugins"):
        for path in sorted((REPO / folder).rglob("*.py")):
            lengths[path.relative_to(REPO).as_posix()] = len(
                path.read_text(encoding="utf-8").splitlines())
    return lengths


def test_no_module_is_over_the_line_limit() -> None:
    lengths = module_lengths()
    assert "core/manager.py" in lengths and "plugins/sqlite/provider.py" in lengths
    too_long = {path: lines for path, lines in lengths.items() if lines > MAX_MODULE_LINES}
    assert not too_long, f"over {MAX_MODULE_LINES} lines, split by concept: {too_long}"


# -- documented public names ---------------------------------------------------------------------

def test_the_documented_top_level_names_import() -> None:
    import memhost

    for name in memhost.__all__:
        assert getattr(memhost, name) is not None, name
    assert isinstance(memhost.hookimpl, pluggy.HookimplMarker)
    assert memhost.MemoryManager.__name__ == "MemoryManager"
    # dir() (and an editor's completion) lists the public names, lazy ones too, and nothing else
    assert dir(memhost) == sorted(memhost.__all__)
    import memhost.schema

    assert dir(memhost.schema) == sorted(memhost.schema.__all__)
    for name in memhost.schema.__all__:
        assert getattr(memhost.schema, name) is not None, name
    from memhost.recall import RecallProvider

    assert isinstance(RecallProvider, type)
    import memhost.testing

    for name in memhost.testing.__all__:
        assert getattr(memhost.testing, name) is not None, name


def test_the_testing_plugin_fixtures_are_served(memhost_home: Path,
                                                memhost_no_network: list[str],
                                                request: pytest.FixtureRequest) -> None:
    # memhost.testing is a pytest plugin (entry point pytest11): its fixtures reach any test run.
    assert memhost_home.is_dir() and isinstance(memhost_no_network, list)
    with pytest.raises(pytest.fail.Exception, match="memhost_provider"):
        request.getfixturevalue("memhost_provider")  # a provider's own tests must define it


def documented_imports() -> list[tuple[str, str, str]]:
    """Every ``import memhost...`` / ``from memhost... import ...`` in a code block of the docs
    pages and the README: (file, module, name or "")."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in CODE_BLOCK.findall(page.read_text(encoding="utf-8")):
            try:
                statements = [node for node in ast.walk(ast.parse(block))
                              if isinstance(node, ast.Import | ast.ImportFrom)]
            except SyntaxError:  # a shell session or a fragment: its import lines alone
                lines = "\n".join(line.strip() for line in block.splitlines()
                                  if re.match(r"\s*(from|import)\s+memhost\b", line)
                                  and not line.rstrip().endswith(("(", "\\")))
                statements = [node for node in ast.walk(ast.parse(lines))
                              if isinstance(node, ast.Import | ast.ImportFrom)]
            for node in statements:
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memhost"):
                    found += [(page.name, node.module, alias.name) for alias in node.names]
                elif isinstance(node, ast.Import):
                    found += [(page.name, alias.name, "") for alias in node.names
                              if alias.name.split(".")[0] == "memhost"]
    return found


def test_every_import_the_docs_show_works() -> None:
    imports = documented_imports()
    assert ("hosts.md", "memhost", "MemoryManager") in imports  # the scan reads the pages
    broken = []
    for page, module, name in imports:
        try:
            imported = importlib.import_module(module)
            if name and name != "*" and not hasattr(imported, name):
                importlib.import_module(f"{module}.{name}")  # a submodule, as `from` allows
        except ImportError as exc:
            broken.append(f"{page}: from {module} import {name}: {exc}")
    assert not broken, broken
