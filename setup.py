"""The package list, computed from the folders (everything else is in pyproject.toml).

``[tool.setuptools] package-dir`` maps four folders onto the one ``memhost`` namespace, and
setuptools' own find directive names a package after its folder, not after that mapping. So this
file runs the find over each mapped folder and prefixes what it finds: every importable folder,
including the bundled provider folders (``memhost.plugins.<name>``, loaded by path at run time)
and data-only folders such as ``memhost.web.static``, is declared as a package, and a new one
needs no edit here.
"""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent


def package_dir() -> dict[str, str]:
    """pyproject.toml's ``[tool.setuptools] package-dir``: import path -> folder."""
    config = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["package-dir"]


def packages() -> list[str]:
    """Every importable folder under the mapped folders, by its installed import path."""
    found: list[str] = []
    for package, folder in package_dir().items():
        found.append(package)
        found += [f"{package}.{sub}" for sub in
                  find_namespace_packages(where=str(HERE / folder), exclude=["*__pycache__*"])]
    return sorted(found)


if __name__ == "__main__":  # a build (tests import this file for packages())
    from setuptools.warnings import InformationOnly  # setuptools>=77, as pyproject.toml requires

    # setuptools notes on every editable install that a folder named like the package in the
    # working directory can shadow it. For memhost that folder is a clone of this repository,
    # and its top-level __init__.py loads the package from core/ (see there), so the note does
    # not apply and would only read as a broken install.
    warnings.filterwarnings("ignore", message=r"Editable installation\.", category=InformationOnly)
    setup(packages=packages())
