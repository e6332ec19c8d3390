"""Whether a provider's ``requires`` (pip requirement strings) are installed, from metadata only."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable

import importlib_metadata
from packaging.requirements import Requirement


def missing_requirements(requires: Iterable[str]) -> list[str]:
    """The requirements that are not installed, or installed at a version they exclude
    (shown as ``"pkg>=2 (installed: 1.4)"``). Requirements whose marker does not apply here
    are skipped."""
    missing = []
    for text in requires:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = importlib_metadata.version(requirement.name)
        except importlib_metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if requirement.specifier and not requirement.specifier.contains(installed, prereleases=True):
            missing.append(f"{text} (installed: {installed})")
    return missing


def pip_command(missing: Iterable[str]) -> str:
    """The command that installs ``missing`` into the running interpreter's environment."""
    wanted = [text.split(" (installed:", 1)[0] for text in missing]
    return f"{shlex.quote(sys.executable)} -m pip install {' '.join(shlex.quote(w) for w in wanted)}"


__all__ = ["missing_requirements", "pip_command"]
