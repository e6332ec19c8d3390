"""``memhost config show``: every setting gathered with its value and where it comes from —
memhost's own tables, the review model's key (only whether it is set), and each provider's
settings through its schema (a table without one has its secret-looking values hidden)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from memhost.cli import _common
from memhost.cli.config_keys import TABLES, as_toml

#: Provider table keys that look like secrets: a table without a schema shows them as hidden.
SECRET_LOOKING = re.compile(r"(key|token|secret|passw|pwd|credential|auth|dsn|cookie)", re.I)
NO_PROVIDER = ("", "builtin", "none")


def settings_service(home: Path) -> Any:
    """The one settings service every UI reads and writes provider settings through."""
    from memhost.schema.settings import SettingsService

    return SettingsService(home)


def memhost_settings(home: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``{table: {key: {value, default, source}}}`` for memhost's own tables."""
    config = _common.config(home)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for table in TABLES:
        settings = getattr(config, table)
        rows = {}
        for key, info in type(settings).model_fields.items():
            value = getattr(settings, key)
            rows[key] = {"value": list(value) if isinstance(value, tuple) else value,
                         "default": list(info.default) if isinstance(info.default, tuple)
                         else info.default,
                         "source": "config.toml" if key in settings.model_fields_set
                         else "default"}
        out[table] = rows
    return out


LIMIT_KEYS = {"memory_char_limit": "memory", "user_char_limit": "user"}
FILENAME_OF = {"memory_char_limit": "MEMORY.md", "user_char_limit": "USER.md"}


def limit_warnings(home: Path, settings: Any, *, which: str = "its limit") -> list[str]:
    """For each store holding more than its ``[memory]`` limit: what that limit does to it."""
    from memhost.builtin_providers import budget
    from memhost.builtin_providers.store import FILENAMES, MemoryStore, Unreadable

    store = MemoryStore.from_settings(home, settings)
    warnings = []
    for key, target in LIMIT_KEYS.items():
        try:
            entries = store.entries(target)
        except Unreadable:
            continue  # doctor and memory show report an unreadable file
        found = budget.consequence(FILENAMES[target], entries, getattr(settings, key),
                                   which=which)
        if found:
            warnings.append(found)
    return warnings


def _raw_table(values: dict[str, Any]) -> dict[str, Any]:
    """A provider table without a schema: values that look secret are hidden."""
    from memhost.security.redact import redact

    shown: dict[str, Any] = {}
    for key, value in values.items():
        if SECRET_LOOKING.search(key):
            shown[key] = {"hidden": True, "note": "looks like a secret; secrets belong in .env"}
        else:
            shown[key] = {"value": redact(value), "source": "config.toml"}
    return shown


def provider_settings(home: Path, name: str, table: dict[str, Any] | None,
                      active: bool) -> dict[str, Any]:
    """One provider's settings for ``config show``: through its schema when it has one."""
    from memhost.errors import MemhostError

    entry: dict[str, Any] = {"active": active, "has_schema": False, "error": None}
    described = None
    try:
        described = settings_service(home).describe(name)
    except (MemhostError, ImportError) as exc:
        entry["error"] = f"settings schema not available: {exc}"
    if described is None or not described["has_schema"]:
        entry["storage"] = "config"
        entry["fields"] = _raw_table(table or {})
        return entry
    entry.update(has_schema=True, storage=described["storage"], label=described["label"],
                 missing=described["missing"], unknown_keys=described["unknown_keys"])
    fields: dict[str, Any] = {}
    for item in described["fields"]:
        if item["kind"] == "secret":
            fields[item["key"]] = {"secret": True, "is_set": item["is_set"],
                                   "env_key": item["env_key"], "error": item["error"]}
        else:
            fields[item["key"]] = {"value": item["value"], "source": item["source"],
                                   "error": item["error"]}
    entry["fields"] = fields
    return entry


def table_problems(home: Path, name: str) -> list[str]:
    """What is wrong in provider ``name``'s stored settings against its config schema: unknown
    keys and values of the wrong type or range (empty without a schema)."""
    from memhost.errors import MemhostError

    try:
        described = settings_service(home).describe(name)
    except (MemhostError, ImportError):
        return []  # a schema that cannot be loaded is reported on its own
    where = (f"[providers.{name}] in config.toml" if described["storage"] == "config"
             else f"{name}/config.json")
    problems = [f"{where}: unknown key {key!r} (not a field of {name}'s schema; a typo?); "
                f"remove it with `memhost config unset providers.{name}.{key}`"
                for key in described["unknown_keys"]]
    problems += [f"{where}: {item['key']} = {as_toml(item.get('value'))}: {item['error']}; fix "
                 f"it with `memhost config set providers.{name}.{item['key']} VALUE`"
                 for item in described["fields"] if item.get("error")]
    return problems


def _with_schema(home: Path) -> list[str]:
    """Discovered providers that declare settings (found from their folders; no code runs)."""
    from memhost.errors import MemhostError

    try:
        from memhost import discovery

        return [name for name in discovery.known_names(home)
                if discovery.schema_path(name, home) is not None]
    except (MemhostError, ImportError, OSError):
        return []


def gather(home: Path) -> dict[str, Any]:
    from memhost.home import config_path

    config = _common.config(home)
    path = config_path(home)
    provider = config.memory.provider
    names = list(config.providers)
    if provider.strip().lower() not in NO_PROVIDER and provider not in names:
        names.insert(0, provider)
    names += [name for name in _with_schema(home) if name not in names]
    from memhost.schema.envstore import EnvStore

    review_key = config.review.api_key_env
    return {
        "home": str(home),
        "config_file": str(path),
        "exists": path.exists(),
        "tables": memhost_settings(home),
        "limit_warnings": limit_warnings(home, config.memory),
        # The review model's API key: only whether the variable it names is set.
        "review_api_key": {"env_key": review_key,
                           "is_set": bool(review_key) and EnvStore(home).is_set(review_key)},
        "providers": {name: provider_settings(home, name, config.providers.get(name),
                                              name == provider) for name in names},
    }


# -- commands ---------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    home = _common.home(args)
    data = gather(home)
    if args.json:
        _common.print_json(data)
        return 0
    state = "" if data["exists"] else " (not present: every setting is at its default)"
    print(f"{data['config_file']}{state}")
    for table, rows in data["tables"].items():
        print(f"\n[{table}]")
        width = max(len(key) for key in rows)
        for key, row in rows.items():
            print(f"  {key:<{width}} = {as_toml(row['value'])}  ({row['source']})")
        if table == "memory":
            for warning in data["limit_warnings"]:
                print(f"  ! {warning}")
        if table == "review":
            secret = data["review_api_key"]
            print(f"  (API key: {secret['env_key']} is "
                  f"{'set' if secret['is_set'] else 'not set'})")
    for name, entry in data["providers"].items():
        flags = [f for f, on in (("active", entry["active"]),
                                 ("no config schema", not entry["has_schema"])) if on]
        print(f"\n[providers.{name}]" + (f"  ({', '.join(flags)})" if flags else ""))
        if entry["storage"] == "json_file":
            print(f"  stored in {Path(data['home']) / name / 'config.json'}")
        if entry["error"]:
            print(f"  ! {entry['error']}")
        for key, row in entry["fields"].items():
            if row.get("secret"):
                state = "set" if row["is_set"] else "not set"
                print(f"  {key}: secret, {state} (env {row['env_key']})")
            elif row.get("hidden"):
                print(f"  {key}: (hidden: {row['note']})")
            else:
                print(f"  {key} = {as_toml(row['value'])}  ({row['source']})")
            if row.get("error"):
                print(f"    ! {row['error']}")
        for key in entry.get("unknown_keys") or []:
            print(f"  ! {key}: not a field of this provider's schema (a typo?); remove it with "
                  f"`memhost config unset providers.{name}.{key}`")
        if entry.get("missing"):
            print(f"  ! required but not set: {', '.join(entry['missing'])}")
    return 0
