"""What the tests of the bundled recall providers (sqlite, postgres) share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tomlkit

from memhost.home import config_path
from memhost.manager import MemoryManager

REPO = Path(__file__).resolve().parents[1]
PLUGINS = REPO / "plugins"


def configure(home: Path, provider: str, settings: dict[str, Any] | None = None, *,
              memory: dict[str, Any] | None = None) -> None:
    """Make ``provider`` the home's external provider; ``settings`` go through the settings
    service (secrets to .env), exactly as `memhost config set` would store them."""
    from memhost.schema.settings import SettingsService

    path = config_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else \
        tomlkit.document()
    table = document.setdefault("memory", tomlkit.table())
    table["provider"] = provider
    for key, value in (memory or {}).items():
        table[key] = value
    path.write_text(tomlkit.dumps(document), encoding="utf-8")
    if settings:
        SettingsService(home).update(provider, settings)


def manager(home: Path, session: str = "session-1", **memory: Any) -> MemoryManager:
    """A manager from ``home``'s config, with its session started and its provider active."""
    made = MemoryManager.from_home(home, **memory)
    status = made.status()
    assert status["external_provider"] is not None, status["problems"]
    made.start_session(session)
    return made


def sync_turns(provider: Any, session_id: str, *turns: tuple[str, str]) -> None:
    """Hand ``provider`` each ``(user, reply)`` turn of ``session_id`` directly, in order, as the
    manager's worker would (with no transcript)."""
    for user, reply in turns:
        provider.sync_turn(user_content=user, assistant_content=reply, session_id=session_id,
                           messages=[])


def turn(made: MemoryManager, user: str, reply: str) -> str:
    """One whole turn; returns the recall block the turn got."""
    context = made.begin_turn(user).context
    made.finish_turn(user, reply, messages=[{"role": "user", "content": user},
                                            {"role": "assistant", "content": reply}])
    return context


def search(made: MemoryManager, query: str, **arguments: Any) -> dict[str, Any]:
    answer = json.loads(made.call_tool("recall_search", {"query": query, **arguments}))
    assert answer["success"], answer
    return answer


def provider_errors(made: MemoryManager) -> dict[str, Any]:
    entry = next(p for p in made.status()["providers"] if p["role"] == "external")
    return {hook: stats for hook, stats in entry["calls"].items() if stats["errors"]}
