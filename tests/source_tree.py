"""A clean copy of the project's source, for tests that build or install it.

Builds start from a copy, not the working tree: an in-tree ``build/`` folder left by an earlier
build could carry modules that no longer exist and make a missing one look present, and a build
must not leave files behind in the working tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: folder in the repository -> import path in the installed package
ROOTS = {
    "core": "memhost",
    "schema": "memhost.schema",
    "builtin_providers": "memhost.builtin_providers",
    "plugins": "memhost.plugins",
}
#: Files at the top of the repository that a build or an import from the clone reads.
TOP_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in", "__init__.py")


def copy_source(dest: Path) -> Path:
    """Copy what a build needs (the top files and the four package folders) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in TOP_FILES:
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, dest / name)
    for root in ROOTS:
        shutil.copytree(REPO / root, dest / root,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return dest
