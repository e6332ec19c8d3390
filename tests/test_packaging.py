"""Packaging: every importable folder is declared as a package, the wheel carries the whole package
(every module of the four roots, py.typed, and every file of every bundled plugin folder), building
and pip-installing it in each form prints no warning, and Python run beside a clone named
``memhost/`` still imports the package."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from source_tree import REPO, ROOTS, copy_source

SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = {".pyc", ".pyo"}


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not SKIP_DIRS & set(p.relative_to(folder).parts)
                  and p.suffix not in SKIP_SUFFIXES)


def _in_wheel(root: str, path: Path) -> str:
    return "/".join([*ROOTS[root].split("."), *path.relative_to(REPO / root).parts])


def expected_wheel_files() -> set[str]:
    """Every file of the four roots: modules, py.typed, the settings page's static files, and
    every file of every bundled plugin folder."""
    return {_in_wheel(root, p) for root in ROOTS for p in _files(REPO / root)}


def importable_folders() -> dict[str, Path]:
    """Every folder under the four roots that Python can import, by its installed import path:
    with or without ``__init__.py`` (a bundled provider folder has none), data-only ones too."""
    found = {}
    for root, package in ROOTS.items():
        base = REPO / root
        for folder in [base, *(p for p in base.rglob("*") if p.is_dir())]:
            parts = folder.relative_to(base).parts
            if SKIP_DIRS & set(parts) or not all(part.isidentifier() for part in parts):
                continue
            found[".".join([*package.split("."), *parts])] = folder
    return found


def declared_packages() -> list[str]:
    """The package list setup.py hands to setuptools."""
    return runpy.run_path(str(REPO / "setup.py"), run_name="memhost_setup")["packages"]()


def test_every_importable_folder_is_declared_as_a_package() -> None:
    # An importable folder left out of the package list is what setuptools warns about ("would be
    # ignored"), and its files would travel, if at all, as data.
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tool = config["tool"]["setuptools"]
    assert tool["package-dir"] == {package: root for root, package in ROOTS.items()}
    assert "packages" not in tool, "the package list is computed in setup.py"
    declared = declared_packages()
    assert len(declared) == len(set(declared))
    assert set(declared) == set(importable_folders())
    assert {"memhost.plugins.sqlite", "memhost.plugins.postgres", "memhost.web.static"} <= set(declared)


def test_a_new_folder_is_declared_without_editing_anything(tmp_path: Path) -> None:
    source = copy_source(tmp_path / "src")
    (source / "plugins" / "example" / "sql").mkdir(parents=True)
    (source / "plugins" / "example" / "plugin.toml").write_text("x")
    (source / "core" / "newroom").mkdir()
    (source / "core" / "newroom" / "__init__.py").write_text("")
    found = runpy.run_path(str(source / "setup.py"), run_name="memhost_setup")["packages"]()
    assert {"memhost.plugins.example", "memhost.plugins.example.sql", "memhost.newroom"} <= set(found)


def test_expected_list_covers_plugin_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The expectation is computed from the tree, so a plugin folder added later is checked."""
    fake = tmp_path / "repo"
    for root in ROOTS:
        (fake / root).mkdir(parents=True)
        (fake / root / "__init__.py").write_text("")
    (fake / "core" / "py.typed").write_text("")
    (fake / "core" / "web" / "static").mkdir(parents=True)
    (fake / "core" / "web" / "static" / "app.js").write_text("x")
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
        "memhost/plugins/example/sql/schema.sql", "memhost/web/static/app.js",
    }


# --- built and installed: one sdist and one wheel, built the way a user builds them ---------------

#: A line a build or an install printed that a user would read as a problem.
WARNING = re.compile(r"warning|would be ignored|deprecat", re.IGNORECASE)
BUILT = pytest.mark.xdist_group("built-dist")  # the tests sharing one build run on one worker


def quiet_env() -> dict[str, str]:
    """The environment of a user with a plain setup. This machine's own pip config files name an
    index folder that may be missing (pip notes each lookup there) and PYTHONDONTWRITEBYTECODE
    makes distutils note "byte-compiling is disabled": notices about the machine, not memhost."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def run(args: list[str], *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=quiet_env(), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{args}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result


def warnings_in(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if WARNING.search(line)]


def fresh_venv(path: Path) -> Path:
    """A new virtualenv that sees memhost's dependencies (linked from the running environment,
    so nothing is downloaded) but no memhost; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    deps = path / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(("memhost", "__editable__", "_memhost")):
            (deps / entry.name).symlink_to(entry)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    (Path(site) / "memhost_test_deps.pth").write_text(f"{deps}\n")
    return python


def pip_install(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                *args])


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source in a folder named ``memhost/``, as a clone of the repository is named."""
    return copy_source(tmp_path_factory.mktemp("clone") / "memhost").resolve()


@pytest.fixture(scope="module")
def dist(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sdist, and the wheel built from it, as ``python -m build`` makes them."""
    out = tmp_path_factory.mktemp("dist")
    result = run([sys.executable, "-m", "build", "--outdir", str(out), str(clone)])
    sdists, wheels = list(out.glob("memhost-*.tar.gz")), list(out.glob("memhost-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(out.iterdir())
    return {"sdist": sdists[0], "wheel": wheels[0], "build": result}


@pytest.fixture(scope="module")
def editable(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh virtualenv with the clone installed in editable form (``pip install -e``)."""
    python = fresh_venv(tmp_path_factory.mktemp("editable") / "venv")
    return {"python": python, "install": pip_install(python, "-e", str(clone))}


@pytest.mark.slow
@BUILT
def test_building_the_sdist_and_the_wheel_prints_no_warning(dist: dict[str, Any]) -> None:
    assert warnings_in(dist["build"]) == []
    assert "Successfully built" in dist["build"].stdout


@pytest.mark.slow
@BUILT
def test_wheel_contains_every_module_and_plugin_file(dist: dict[str, Any]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
        entry_points = next((wheel.read(n).decode() for n in names
                             if n.endswith(".dist-info/entry_points.txt")), "")
    missing = sorted(expected_wheel_files() - names)
    assert not missing, f"the wheel lacks: {missing}"
    assert "memhost = memhost.cli:main" in entry_points
    assert not any(n.startswith(("core/", "builtin_providers/", "tests/")) for n in names)


#: Run in the installed environment: the package imports and a bundled provider folder is there.
IMPORT_CHECK = """
from pathlib import Path
import memhost, memhost.plugins
from memhost import MemoryManager, hookimpl
plugins = Path(next(iter(memhost.plugins.__path__)))
assert (plugins / "sqlite" / "plugin.toml").is_file(), plugins
print(memhost.__file__)
"""


@pytest.mark.slow
@BUILT
@pytest.mark.parametrize("form", ["wheel", "sdist", "editable"])
def test_pip_install_prints_no_warning(form: str, clone: Path, tmp_path: Path,
                                       request: pytest.FixtureRequest) -> None:
    # The dependencies come from the running environment (see fresh_venv); memhost is installed.
    if form == "editable":
        python, result = request.getfixturevalue("editable").values()
    else:
        python = fresh_venv(tmp_path / "venv")
        result = pip_install(python, str(request.getfixturevalue("dist")[form]))
    assert warnings_in(result) == [], result.stdout + result.stderr
    assert "Successfully installed memhost" in result.stdout
    where = Path(run([str(python), "-c", IMPORT_CHECK], cwd=tmp_path).stdout.strip())
    assert where.is_relative_to(clone) == (form == "editable"), where


@pytest.mark.slow
@BUILT
def test_python_run_beside_a_clone_named_memhost_imports_the_package(
        clone: Path, editable: dict[str, Any], tmp_path: Path) -> None:
    # The clone's folder comes first on sys.path when Python runs from the folder holding it; the
    # editable install's finder is asked only after that, so without the clone's top-level
    # __init__.py the folder would be taken as a namespace package with nothing in it.
    python = editable["python"]
    check = "from memhost import MemoryManager; import memhost; print(memhost.__file__)"
    for where in (clone.parent, tmp_path):
        result = run([str(python), "-c", check], cwd=where)
        assert Path(result.stdout.strip()) == clone / "core" / "__init__.py"
    bundled = run([str(python), "-c", "import memhost.schema, memhost.builtin_providers;"
                   "from memhost.discovery import scan; print(scan.bundled_root())"],
                  cwd=clone.parent)
    assert Path(bundled.stdout.strip()) == clone / "plugins"

    # What the top-level __init__.py prevents: the same run without it fails.
    shim = (clone / "__init__.py").read_bytes()
    (clone / "__init__.py").unlink()
    try:
        shadowed = subprocess.run([str(python), "-c", check], cwd=clone.parent,
                                  capture_output=True, text=True, timeout=120)
    finally:
        (clone / "__init__.py").write_bytes(shim)
    assert shadowed.returncode != 0 and "cannot import name 'MemoryManager'" in shadowed.stderr
