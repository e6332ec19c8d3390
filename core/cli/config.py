"""``memhost config``: show and change the settings in ``<home>/config.toml`` and the providers'
settings.

Keys are dotted: ``memory.nudge_interval``, ``review.model``, ``curator.merge`` for memhost's own
tables, ``providers.<name>.<field>`` for a provider's fields. memhost's keys are written with
:func:`memhost.config.update_config` (validated, comments kept); provider fields go through
:class:`memhost.schema.settings.SettingsService`, so a CLI save follows the same rules as any
other settings UI. A secret is never taken as a command-line argument (it would stay in the
shell history): it is prompted for without echo, or read as one line from stdin when stdin is
not a terminal. No output ever shows a secret's value, only whether it is set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from memhost.cli import _common

TABLES = ("memory", "review", "curator", "injection")
#: Provider table keys that look like secrets: a table without a schema shows them as hidden.
SECRET_LOOKING = re.compile(r"(key|token|secret|passw|pwd|credential|auth|dsn|cookie)", re.I)
NO_PROVIDER = ("", "builtin", "none")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config", help="show and change settings (config.toml, provider settings, secrets)",
        description="Show and change memhost's settings ([memory], [review], [curator], "
                    "[injection] in config.toml) and each provider's settings "
                    "(providers.<name>.<field>). Secrets are prompted for, never taken on the "
                    "command line, and never shown.")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _common.usage(parser))

    show = actions.add_parser("show", help="every setting with its value and where it comes from")
    _common.add_json_flag(show)
    show.set_defaults(func=cmd_show)

    get = actions.add_parser("get", help="print one setting's value")
    get.add_argument("key", metavar="KEY", help="e.g. memory.nudge_interval or "
                                                "providers.NAME.FIELD")
    _common.add_json_flag(get)
    get.set_defaults(func=cmd_get)

    set_ = actions.add_parser(
        "set", help="change one setting",
        description="Change one setting. For a provider's secret field leave VALUE out: it is "
                    "prompted for without echo, or read as one line from stdin when stdin is not "
                    "a terminal.")
    set_.add_argument("key", metavar="KEY")
    set_.add_argument("value", metavar="VALUE", nargs="?",
                      help="the new value (not for secrets)")
    set_.set_defaults(func=cmd_set)

    unset = actions.add_parser("unset", help="put a setting back to its default (a secret: "
                                             "remove it from the env store)")
    unset.add_argument("key", metavar="KEY")
    unset.set_defaults(func=cmd_unset)

    schema = actions.add_parser("schema", help="a provider's config schema")
    schema.add_argument("name", metavar="NAME", help="the provider")
    form = schema.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the schema's fields as JSON")
    form.add_argument("--json-schema", action="store_true",
                      help="the schema as JSON Schema (draft 2020-12)")
    form.add_argument("--ui-schema", action="store_true", help="the uiSchema for form renderers")
    schema.set_defaults(func=cmd_schema)


# -- keys -------------------------------------------------------------------------------------


def parse_key(key: str) -> tuple[str, ...]:
    """``("memory", "nudge_interval")`` or ``("providers", name, field)``."""
    from memhost.errors import ConfigError

    parts = tuple(key.split("."))
    if parts[0] == "providers":
        if len(parts) != 3 or not all(parts):
            raise ConfigError(f"{key!r}: a provider setting is written providers.NAME.FIELD "
                              "(see `memhost config schema NAME` for the fields)")
        return parts
    if parts[0] not in TABLES:
        raise ConfigError(f"{key!r}: unknown key; keys start with "
                          f"{', '.join(TABLES + ('providers',))} (see `memhost config show`)")
    if len(parts) != 2 or not parts[1]:
        raise ConfigError(f"{key!r}: write it as TABLE.KEY, e.g. memory.nudge_interval")
    return parts


def _model(table: str) -> Any:
    from memhost.config import Config

    return Config.model_fields[table].annotation


def _check_known(table: str, name: str) -> Any:
    """The pydantic field of ``[table] name``; an unknown key is a config error with hints."""
    import difflib

    from memhost.errors import ConfigError

    fields = _model(table).model_fields
    if name not in fields:
        hint = difflib.get_close_matches(name, list(fields), n=1)
        suggestion = f"; did you mean {table}.{hint[0]}?" if hint else ""
        raise ConfigError(f"unknown key {table}.{name}"
                          f"{suggestion} Known keys of [{table}]: {', '.join(fields)}.")
    return fields[name]


def parse_value(annotation: Any, raw: str) -> Any:
    """A command-line string as the type the setting expects. What does not parse is passed on
    as text, so the config validation refuses it with its usual message."""
    from typing import get_origin

    text = raw.strip()
    if annotation is bool:
        lowered = text.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        return raw
    if annotation is int:
        return int(text) if re.fullmatch(r"[+-]?\d+", text) else raw
    if annotation is float:
        try:
            return float(text)
        except ValueError:
            return raw
    if get_origin(annotation) in (tuple, list):
        if text.startswith("["):
            import tomlkit
            from tomlkit.exceptions import TOMLKitError

            try:
                return list(tomlkit.parse(f"v = {text}").unwrap()["v"])
            except TOMLKitError:
                return raw
        return [part.strip() for part in text.split(",") if part.strip()]
    return raw


def _fmt(value: Any) -> str:
    """A value as it would be written in TOML (roughly): true, 3, "text", ["a"]."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "(no value)"
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def _plain(value: Any) -> str:
    """A value for ``config get``: text as is (for scripts), everything else as in TOML."""
    return value if isinstance(value, str) else _fmt(value)


# -- gathering --------------------------------------------------------------------------------


def _service(home: Path) -> Any:
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
        described = _service(home).describe(name)
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
        described = _service(home).describe(name)
    except (MemhostError, ImportError):
        return []  # a schema that cannot be loaded is reported on its own
    where = (f"[providers.{name}] in config.toml" if described["storage"] == "config"
             else f"{name}/config.json")
    problems = [f"{where}: unknown key {key!r} (not a field of {name}'s schema; a typo?); "
                f"remove it with `memhost config unset providers.{name}.{key}`"
                for key in described["unknown_keys"]]
    problems += [f"{where}: {item['key']} = {_fmt(item.get('value'))}: {item['error']}; fix "
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
            print(f"  {key:<{width}} = {_fmt(row['value'])}  ({row['source']})")
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
                print(f"  {key} = {_fmt(row['value'])}  ({row['source']})")
            if row.get("error"):
                print(f"    ! {row['error']}")
        for key in entry.get("unknown_keys") or []:
            print(f"  ! {key}: not a field of this provider's schema (a typo?); remove it with "
                  f"`memhost config unset providers.{name}.{key}`")
        if entry.get("missing"):
            print(f"  ! required but not set: {', '.join(entry['missing'])}")
    return 0


def _provider_field(home: Path, name: str, key: str) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    from memhost.schema.settings import SettingsError

    service = _service(home)
    described = service.describe(name)
    if not described["has_schema"]:
        raise SettingsError(f"provider {name!r} declares no config schema; edit "
                            f"[providers.{name}] in config.toml by hand")
    for item in described["fields"]:
        if item["key"] == key:
            return service, described, item
    raise SettingsError(f"settings of {name} not changed", {key: (
        "unknown field; the fields of " + name + " are: "
        + ", ".join(f["key"] for f in described["fields"]))})


def cmd_get(args: argparse.Namespace) -> int:
    home = _common.home(args)
    parts = parse_key(args.key)
    if parts[0] == "providers":
        _, _, item = _provider_field(home, parts[1], parts[2])
        if item["kind"] == "secret":
            if args.json:
                _common.print_json({"key": args.key, "secret": True, "is_set": item["is_set"]})
            else:
                state = "set" if item["is_set"] else "not set"
                _common.eprint(f"{args.key} is a secret: {state} (env {item['env_key']}). "
                               "Secret values are never printed.")
            return 0 if item["is_set"] else 1
        value, source = item["value"], item["source"]
    else:
        table, key = parts
        _check_known(table, key)
        row = memhost_settings(home)[table][key]
        value, source = row["value"], row["source"]
    if args.json:
        _common.print_json({"key": args.key, "value": value, "source": source})
    else:
        print(_plain(value))
    return 0


def read_secret(label: str) -> str:
    """One secret: prompted for without echo on a terminal, else one line of stdin."""
    if sys.stdin is not None and sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"{label} (input hidden): ")
    line = sys.stdin.readline() if sys.stdin is not None else ""
    return line.rstrip("\r\n")


def cmd_set(args: argparse.Namespace) -> int:
    home = _common.home(args)
    parts = parse_key(args.key)
    if parts[0] != "providers":
        from memhost.config import update_config

        table, key = parts
        if args.value is None:
            _common.eprint(f"memhost: error: give a value: memhost config set {args.key} VALUE")
            return 2
        info = _check_known(table, key)
        value = parse_value(info.annotation, args.value)
        if (table, key) == ("memory", "provider"):
            from memhost.discovery import validate_provider_name

            value = validate_provider_name(value, home)  # an unknown name is refused
        config = update_config(home, {(table, key): value})
        print(f"{args.key} = {_fmt(memhost_settings(home)[table][key]['value'])}")
        if table == "memory" and key in LIMIT_KEYS:
            for warning in limit_warnings(home, config.memory, which="the new limit"):
                if warning.startswith(FILENAME_OF[key]):
                    _common.eprint(f"memhost: warning: {warning}")
        return 0

    _, name, key = parts
    service, described, item = _provider_field(home, name, key)
    if item["kind"] == "secret":
        if args.value is not None:
            _common.eprint(
                f"memhost: error: {args.key} is a secret, and secrets are not taken on the "
                "command line (they would stay in your shell history). Leave the value out to "
                f"be prompted: `memhost config set {args.key}`, or pipe it in: "
                f"`memhost config set {args.key} < file`. Nothing was changed.")
            return 2
        value = read_secret(f"{item['label']} for {name}")
        if not value.strip():
            _common.eprint(f"memhost: error: no value given for {args.key}; nothing was changed "
                           f"(to remove it, run `memhost config unset {args.key}`)")
            return 2
    else:
        if args.value is None:
            _common.eprint(f"memhost: error: give a value: memhost config set {args.key} VALUE")
            return 2
        value = args.value
    described = service.update(name, {key: value})
    after = next(f for f in described["fields"] if f["key"] == key)
    if after["kind"] == "secret":
        print(f"{args.key}: set (stored in {service.env.path} as {after['env_key']})")
    else:
        print(f"{args.key} = {_fmt(after['value'])}")
    if not described["active"]:
        print(f"note: {name} is not the active provider; settings were saved, the active provider "
              "is unchanged ([memory] provider)")
    return 0


def cmd_unset(args: argparse.Namespace) -> int:
    import os

    home = _common.home(args)
    parts = parse_key(args.key)
    if parts[0] != "providers":
        from memhost.config import update_config

        table, key = parts
        if _remove_stray_key(home, parts, args.key, lambda: _check_known(table, key)):
            return 0
        update_config(home, {(table, key): None})
        print(f"{args.key} = {_fmt(memhost_settings(home)[table][key]['value'])} (default)")
        return 0
    _, name, key = parts
    if _remove_stray_key(home, parts, args.key, lambda: _provider_field(home, name, key)):
        return 0
    service, _, item = _provider_field(home, name, key)
    if item["kind"] == "secret":
        service.clear_secret(name, key)
        print(f"{args.key}: removed from {service.env.path}")
        if os.environ.get(item["env_key"]):
            print(f"note: {item['env_key']} is also set in this process's environment, which "
                  "still provides it")
        return 0
    described = service.update(name, {key: None})
    after = next(f for f in described["fields"] if f["key"] == key)
    print(f"{args.key} = {_fmt(after['value'])} ({after['source']})")
    return 0


def _remove_stray_key(home: Path, parts: tuple[str, ...], dotted: str, check: Any) -> bool:
    """Remove a key that ``check`` refuses as unknown but config.toml holds (a typo): the way
    to repair a file the other commands complain about. False when ``check`` accepts the key."""
    from memhost.config import update_config, written_in_file
    from memhost.errors import MemhostError

    try:
        check()
        return False
    except MemhostError:
        if not written_in_file(home, parts):
            raise
    update_config(home, {parts: None})
    print(f"{dotted}: removed from config.toml (it is not a known setting)")
    return True


def cmd_schema(args: argparse.Namespace) -> int:
    home = _common.home(args)
    schema = _service(home).schema(args.name)
    if schema is None:
        _common.eprint(f"memhost: provider {args.name!r} declares no config schema "
                       "(it has no settings)")
        return 1
    if args.json_schema:
        _common.print_json(schema.to_json_schema())
        return 0
    if args.ui_schema:
        _common.print_json(schema.ui_schema())
        return 0
    if args.json:
        _common.print_json({"name": schema.name, "label": schema.label,
                            "storage": schema.storage, "docs_url": schema.docs_url,
                            "fields": [item.to_dict() for item in schema.fields]})
        return 0
    where = (f"[providers.{schema.name}] in config.toml" if schema.storage == "config"
             else f"{schema.name}/config.json in the home")
    print(f"{schema.name}: {schema.label}")
    print(f"  values stored in {where}; secrets in .env")
    if schema.docs_url:
        print(f"  docs: {schema.docs_url}")
    for item in schema.fields:
        facts = [item.kind]
        if item.is_secret:
            facts.append(f"env {item.env_key}")
        elif item.default is not None:
            facts.append(f"default {_fmt(item.default_value())}")
        if item.required:
            facts.append("required")
        if item.kind == "number":
            facts += [f"{word} {value:g}" for word, value in
                      (("min", item.min), ("max", item.max), ("step", item.step))
                      if value is not None]
        if item.options:
            facts.append("one of " + ", ".join(
                _fmt(o.value) + (f" ({o.label})" if o.label != str(o.value) else "")
                for o in item.options))
        if item.when:
            facts.append("only when " + ", ".join(f"{k} = {_fmt(v)}"
                                                  for k, v in item.when.items()))
        if item.group:
            facts.append(f"group {item.group!r}")
        print(f"\n  providers.{schema.name}.{item.key}: {item.label}")
        print(f"    {'; '.join(facts)}")
        if item.description:
            print(f"    {item.description}")
    return 0
