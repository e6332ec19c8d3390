"""Which provider answers which tool name, and the tool schemas the model is shown.

Schemas are normalised as they come in (:mod:`memhost.toolschemas`); a schema that cannot be, a
reserved core name taken by an external provider, or a name already taken is refused with a
reason the manager reports, and never reaches the model. The first provider to claim a name
keeps it: the builtin memory registers first, so its tools always win.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memhost.providers import Provider
from memhost.toolschemas import SchemaProblem, normalise_tool_schema


class ToolRouter:
    def __init__(self, reserved: Iterable[str]) -> None:
        self.reserved = frozenset(reserved)
        self.providers: dict[str, Provider] = {}  # tool name -> the provider that answers it
        self.schemas: list[dict[str, Any]] = []  # in registration order, as the model sees them

    def route(self, provider: Provider, schemas: list[Any]) -> list[str]:
        """Take ``provider``'s tools; the reasons any of them were refused."""
        refused = []
        for raw in schemas:
            try:
                schema = normalise_tool_schema(raw)
            except SchemaProblem as exc:
                refused.append(f"tool schema dropped: {exc}")
                continue
            name = schema["name"]
            if not provider.is_builtin and name in self.reserved:
                refused.append(f"tool {name!r} ignored: it is a reserved core tool name and core "
                               "tools always win; rename the tool")
            elif name in self.providers:
                refused.append(f"tool {name!r} ignored: already provided by "
                               f"{self.providers[name].name!r} (the first one wins)")
            else:
                self.providers[name] = provider
                self.schemas.append(schema)
        return refused

    def get(self, name: str) -> Provider | None:
        return self.providers.get(name)

    def count(self, provider: Provider) -> int:
        return sum(1 for p in self.providers.values() if p is provider)

    def names(self) -> list[str]:
        return sorted(self.providers)

    def owners(self) -> dict[str, str]:
        """Tool name -> provider name, for ``status()``."""
        return {name: p.name for name, p in self.providers.items()}
