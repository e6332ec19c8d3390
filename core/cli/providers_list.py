"""``memhost providers list``: every provider found, with its source, version and status, and
which one config.toml names (``--check`` loads each to ask whether it is available)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memhost.cli import _common


def configured_provider(home: Path
                        ) -> tuple[str, dict[str, dict[str, Any]], str | None]:
    """``memory.provider`` (``""`` for builtin only), the provider tables, and a config error."""
    from memhost.discovery import BUILTIN_ONLY
    from memhost.errors import ConfigError

    try:
        config = _common.config(home)
    except ConfigError as exc:
        return "", {}, str(exc)
    name = config.memory.provider.strip()
    return ("" if name.lower() in BUILTIN_ONLY else name), dict(config.providers), None


def provider_rows(home: Path, *, check: bool = False) -> dict[str, Any]:
    """What ``providers list`` shows, JSON-ready (also used by ``memhost doctor``)."""
    from memhost import discovery

    configured, tables, config_error = configured_provider(home)
    found = discovery.discover(home)
    rows = []
    for candidate in found.candidates:
        row = candidate.as_dict()
        row["configured"] = candidate.name == configured
        if check:
            from memhost.authoring.availability import availability

            status, reason = availability(candidate, home, tables.get(candidate.name))
            if status == "available" and row["configured"]:
                status = "active"
            row["status"], row["reason"] = status, reason
        rows.append(row)
    failures = [f.as_dict() for f in found.failures]
    if check:  # failures seen while loading just now
        seen = {(f["name"], f["source"]) for f in failures}
        failures += [f.as_dict() for f in discovery.recorded_failures()
                     if (f.name, f.source) not in seen
                     and any(r["name"] == f.name and r["source"] == f.source for r in rows)]
    return {
        "home": str(home),
        "configured": configured or "builtin",
        "configured_known": not configured or found.get(configured) is not None,
        "config_error": config_error,
        "checked": check,
        "providers": rows,
        "shadowed": [c.as_dict() for c in found.shadowed],
        "blocked": found.blocked,
        "failures": failures,
    }


def status_text(row: dict[str, Any]) -> str:
    """A row's status, with the reason when it is unavailable or failed."""
    status = row["status"]
    if status in ("unavailable", "failed") and row.get("reason"):
        return f"{status}: {row['reason']}"
    return status



def cmd_list(args: argparse.Namespace) -> int:
    home = _common.home(args)
    data = provider_rows(home, check=args.check)
    if args.json:
        _common.print_json(data)
        return 0
    rows = data["providers"]
    if not rows:
        print(f"No memory providers found. Put one in {home / 'plugins'}/<name>/ "
              "(`memhost providers new NAME` writes a working one), or install a package with "
              "a 'memhost.providers' entry point.")
    else:
        width = max(len(r["name"]) for r in rows) + 2
        print(f"  {'NAME':<{width}}{'SOURCE':<12}{'VERSION':<10}STATUS")
        for row in rows:
            mark = "*" if row["configured"] else " "
            print(f"{mark} {row['name']:<{width}}{row['source']:<12}{row['version'] or '-':<10}"
                  f"{status_text(row)}")
            if row["description"]:
                print(f"  {'':<{width}}{_common.preview(row['description'], 70)}")
    for row in data["shadowed"]:
        where = row["path"] or f"{row['distribution']} {row['distribution_version']}"
        print(f"shadowed: {row['name']} from {row['source']} {where} "
              f"(the one from {row['shadowed_by']} wins)")
    if data["blocked"]:
        print(f"blocked by MEMHOST_DISABLED_PROVIDERS: {', '.join(data['blocked'])}")
    print()
    if data["config_error"]:
        print(f"config.toml is invalid, so the configured provider is unknown: "
              f"{data['config_error']}")
    elif data["configured"] == "builtin":
        print("memory.provider: builtin (no external provider)")
    elif not data["configured_known"]:
        print(f"memory.provider = {data['configured']!r} names no provider found; only the "
              "builtin memory is active. Fix it with `memhost providers use NAME`.")
    elif not args.check:
        print(f"* memory.provider = {data['configured']!r}; `memhost providers list --check` "
              "loads it to confirm it is active.")
    else:
        row = next(r for r in rows if r["configured"])
        if row["status"] == "active":
            print(f"* memory.provider = {data['configured']!r} is active.")
        else:
            print(f"* memory.provider = {data['configured']!r} is not active ({row['status']}); "
                  "only the builtin memory is active.")
    return 0
