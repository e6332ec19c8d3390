"""``memhost config get|set|unset``: read and change one setting.

memhost's keys are written with :func:`memhost.config.update_config` (validated, comments kept);
provider fields go through :class:`memhost.schema.settings.SettingsService`. A secret is never
taken as a command-line argument: it is prompted for without echo, or read as one line from stdin
when stdin is not a terminal, and never printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memhost.cli import _common
from memhost.cli.config_keys import as_plain, as_toml, known_field, parse_key, parse_value
from memhost.cli.config_show import (FILENAME_OF, LIMIT_KEYS, limit_warnings, memhost_settings,
                                     settings_service)


def _provider_field(home: Path, name: str, key: str) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    from memhost.schema.settings import SettingsError

    service = settings_service(home)
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
        known_field(table, key)
        row = memhost_settings(home)[table][key]
        value, source = row["value"], row["source"]
    if args.json:
        _common.print_json({"key": args.key, "value": value, "source": source})
    else:
        print(as_plain(value))
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
        info = known_field(table, key)
        value = parse_value(info.annotation, args.value)
        if (table, key) == ("memory", "provider"):
            from memhost.discovery import validate_provider_name

            value = validate_provider_name(value, home)  # an unknown name is refused
        config = update_config(home, {(table, key): value})
        print(f"{args.key} = {as_toml(memhost_settings(home)[table][key]['value'])}")
        if table == "memory" and key in LIMIT_KEYS:
            for warning in limit_warnings(home, config.memory, which="the new limit"):
                if warning.startswith(FILENAME_OF[key]):
                    _common.eprint(f"memhost: warning: {warning}")
        return 0

    _, name, key = parts
    service, described, item = _provider_field(home, name, key)
    if item["kind"] == "secret":
        if args.value not in (None, "-"):  # "-": read it, as `memhost memory add -` does
            _common.eprint(
                f"memhost: error: {args.key} is a secret, and secrets are not taken on the "
                "command line (they would stay in your shell history). Leave the value out to "
                f"be prompted: `memhost config set {args.key}`, or pipe it in: "
                f"`memhost config set {args.key} - < file`. Nothing was changed.")
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
        print(f"{args.key} = {as_toml(after['value'])}")
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
        if _remove_stray_key(home, parts, args.key, lambda: known_field(table, key)):
            return 0
        update_config(home, {(table, key): None})
        print(f"{args.key} = {as_toml(memhost_settings(home)[table][key]['value'])} (default)")
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
    print(f"{args.key} = {as_toml(after['value'])} ({after['source']})")
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
