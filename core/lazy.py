"""A package's public names imported on first use (PEP 562), so importing it stays cheap.

``__getattr__, __dir__ = lazy_names(globals(), {"Name": "module.path"}, __all__)`` at the end of
a package's ``__init__``: reading ``package.Name`` imports its module then, and keeps the value
in the package, and ``dir(package)`` (what an editor's completion lists) gives the public
names, those not imported yet included, and none of the helpers the package imports itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any


def lazy_names(namespace: dict[str, Any], lazy: dict[str, str], public: Sequence[str],
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
