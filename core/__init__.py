"""memhost: a plugin host for agent memory.

A host embeds :class:`MemoryManager`; providers mark their hook implementations with
:data:`hookimpl`. Everything heavier than the hook markers is imported on first use, so
``import memhost`` stays cheap and never pulls in a web server, a model client or a database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from memhost.errors import ConfigError, MemhostError, ProviderError, RetryableError

__version__ = "0.1.0"

#: Marks a provider method as the implementation of a memhost hook.
hookimpl = pluggy.HookimplMarker("memhost")

_LAZY = {
    "MemoryEntry": "memhost.builtin_providers.view",
    "MemoryHub": "memhost.hub",
    "MemoryManager": "memhost.manager",
    "Turn": "memhost.manager",
    "ShutdownReport": "memhost.worker",
    "StreamScrubber": "memhost.fencing",
}

__all__ = [
    "ConfigError",
    "MemhostError",
    "MemoryEntry",
    "MemoryHub",
    "MemoryManager",
    "ProviderError",
    "RetryableError",
    "ShutdownReport",
    "StreamScrubber",
    "Turn",
    "__version__",
    "hookimpl",
]

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.view import MemoryEntry
    from memhost.hub import MemoryHub
    from memhost.fencing import StreamScrubber
    from memhost.manager import MemoryManager, Turn
    from memhost.worker import ShutdownReport


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memhost' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
