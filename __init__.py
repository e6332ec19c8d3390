"""Python imports this file only when it runs from the folder that holds a clone of memhost named
``memhost/``: the current folder comes first on ``sys.path``, so the clone is found as ``memhost``
before the installed package (and an editable install's finder is never asked).

Rather than let the clone's root pass for the package, load the real one from ``core/`` with the
layout pyproject.toml's package-dir describes: ``memhost`` is ``core/``, and ``memhost.schema``,
``memhost.builtin_providers`` and ``memhost.plugins`` are the folders of those names beside it.
Imported under any other name (a tool walking the repository), it does nothing.
"""

import importlib.util
import sys
from pathlib import Path

if __name__ == "memhost":
    _root = Path(__file__).resolve().parent
    _spec = importlib.util.spec_from_file_location(
        __name__, _root / "core" / "__init__.py",
        submodule_search_locations=[str(_root / "core"), str(_root)])
    if _spec is None or _spec.loader is None:  # pragma: no cover - every clone has core/
        raise ImportError(f"{_root} looks like a clone of memhost, but core/__init__.py is "
                          "missing; run Python from another folder, or reinstall memhost")
    _package = importlib.util.module_from_spec(_spec)
    sys.modules[__name__] = _package  # the import statement hands back what sys.modules holds
    _spec.loader.exec_module(_package)
