"""The wheel carries the whole package: every module of the four roots, py.typed, and every file
of every bundled plugin folder (plugin.toml, README.md and the rest travel as data)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# folder in the repository -> import path in the installed package
ROOTS = {
    "core": "memhost",
    "schema": "memhost.schema",
    "builtin_providers": "memhost.builtin_providers",
    "plugins": "memhost.plugins",
}
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = {".pyc", ".pyo"}


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not SKIP_DIRS & set(p.relative_to(folder).parts)
                  and p.suffix not in SKIP_SUFFIXES)


def _in_wheel(root: str, path: Path) -> str:
    return "/".join([*ROOTS[root].split("."), *path.relative_to(REPO / root).parts])


def expected_wheel_files() -> set[str]:
    expected = {"memhost/py.typed"}
    for root in ("core", "schema", "builtin_providers"):
        expected |= {_in_wheel(root, p) for p in _files(REPO / root) if p.suffix == ".py"}
    plugins = REPO / "plugins"
    expected |= {_in_wheel("plugins", p) for p in plugins.glob("*.py")}
    for folder in sorted(p for p in plugins.iterdir() if p.is_dir() and p.name not in SKIP_DIRS):
        expected |= {_in_wheel("plugins", p) for p in _files(folder)}
    return expected


def package_folders() -> dict[str, Path]:
    """Every folder with an ``__init__.py`` under the four roots, by its import path."""
    found = {}
    for root, package in ROOTS.items():
        for init in (REPO / root).rglob("__init__.py"):
            folder = init.parent
            if SKIP_DIRS & set(folder.relative_to(REPO).parts):
                continue
            found[".".join([*package.split("."), *folder.relative_to(REPO / root).parts])] = folder
    return found


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tool = config["tool"]["setuptools"]
    listed = set(tool["packages"])
    folders = package_folders()
    missing = sorted(set(folders) - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert tool["package-dir"] == {package: root for root, package in ROOTS.items()}
    for package in listed:  # a stale entry points at a folder that is gone
        root = max((r for r, p in ROOTS.items() if package == p or package.startswith(p + ".")),
                   key=lambda r: len(ROOTS[r]))
        rest = package.removeprefix(ROOTS[root]).strip(".")
        assert (REPO / root / Path(*rest.split(".")) / "__init__.py").is_file() if rest else \
            (REPO / root / "__init__.py").is_file(), package


def test_expected_list_covers_plugin_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The expectation is computed from the tree, so a plugin folder added later is checked."""
    fake = tmp_path / "repo"
    for root in ROOTS:
        (fake / root).mkdir(parents=True)
        (fake / root / "__init__.py").write_text("")
    plugin = fake / "plugins" / "example"
    (plugin / "sql").mkdir(parents=True)
    for name in ("plugin.toml", "README.md", "provider.py", "config_schema.py", "sql/schema.sql"):
        (plugin / name).write_text("x")
    (plugin / "__pycache__").mkdir()
    (plugin / "__pycache__" / "provider.cpython-311.pyc").write_bytes(b"")
    monkeypatch.setattr(sys.modules[__name__], "REPO", fake)
    assert expected_wheel_files() == {
        "memhost/py.typed", "memhost/__init__.py", "memhost/schema/__init__.py",
        "memhost/builtin_providers/__init__.py", "memhost/plugins/__init__.py",
        "memhost/plugins/example/plugin.toml", "memhost/plugins/example/README.md",
        "memhost/plugins/example/provider.py", "memhost/plugins/example/config_schema.py",
        "memhost/plugins/example/sql/schema.sql",
    }


@pytest.mark.slow
def test_wheel_contains_every_module_and_plugin_file(tmp_path: Path) -> None:
    # Build from a clean copy: an in-tree build/ folder left by an earlier build could carry
    # modules that no longer exist and make a missing one look present.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "setup.cfg"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, source / name)
    for root in ROOTS:
        shutil.copytree(REPO / root, source / root,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    out = tmp_path / "dist"
    result = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out),
                             str(source)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    wheels = list(out.glob("memhost-*.whl"))
    assert len(wheels) == 1, wheels

    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        entry_points = next((wheel.read(n).decode() for n in names
                             if n.endswith(".dist-info/entry_points.txt")), "")
    missing = sorted(expected_wheel_files() - names)
    assert not missing, f"the wheel lacks: {missing}"
    assert "memhost = memhost.cli:main" in entry_points
    assert not any(n.startswith(("core/", "builtin_providers/", "tests/")) for n in names)
