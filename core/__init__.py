"""memhost: a plugin host for agent memory.

A host embeds :class:`MemoryManager`; providers mark their hook implementations with
:data:`hookimpl`. Everything heavier than the hook markers is imported on first use, so
``import memhost`` stays cheap and never pulls in a web server, a model client or a database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from memhost.errors import ConfigError, MemhostError, ProviderError, RetryableError
from memhost.lazy import lazy_names

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


__getattr__, __dir__ = lazy_names(globals(), _LAZY, __all__)
