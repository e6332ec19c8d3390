"""``memhost providers show``: one provider's manifest, hooks, tools (with what is wrong with
them) and settings, found by loading it."""

from __future__ import annotations

import argparse
from typing import Any

from memhost.cli import _common
from memhost.cli.providers_list import configured_provider, status_text


def cmd_show(args: argparse.Namespace) -> int:
    from memhost import discovery
    from memhost.authoring.hookrunner import HookRunner, error_text
    from memhost.errors import ProviderError
    from memhost.toolschemas import RESERVED_TOOL_NAMES, SchemaProblem, normalise_tool_schema

    home = _common.home(args)
    found = discovery.discover(home, strict=False)
    candidate = found.get(args.name)
    if candidate is None:
        raise ProviderError(discovery.unknown_name_message(args.name, found.names(), home))
    configured, _tables, _error_text = configured_provider(home)
    data: dict[str, Any] = {**candidate.as_dict(), "configured": candidate.name == configured,
                            "shadowed_copies": [c.as_dict() for c in found.shadowed
                                                if c.name == candidate.name],
                            "load_error": None, "hooks": [], "tools": [], "tool_problems": [],
                            "settings": None, "settings_error": None}
    try:
        provider = discovery.load_candidate(candidate, timeout=discovery.import_timeout(home))
        runner = HookRunner(provider)
        data["hooks"] = sorted(runner.hooks)
        if runner.implements("tool_schemas"):
            raw = runner.call("tool_schemas", 5.0)
            for item in raw if isinstance(raw, list | tuple) else []:
                try:
                    schema = normalise_tool_schema(item)
                except SchemaProblem as exc:
                    data["tool_problems"].append(str(exc))
                    continue
                if schema["name"] in RESERVED_TOOL_NAMES:
                    data["tool_problems"].append(f"tool {schema['name']!r} uses a reserved "
                                                 "core tool name and would be ignored")
                data["tools"].append(schema)
    except ProviderError as exc:
        data["load_error"] = str(exc)
    except Exception as exc:
        data["load_error"] = error_text(exc)
    try:
        from memhost.schema.settings import SettingsService

        described = SettingsService(home).describe(candidate.name)
        data["settings"] = {k: described[k] for k in ("label", "docs_url", "storage",
                                                      "has_schema", "fields", "missing",
                                                      "unknown_keys") if k in described}
    except Exception as exc:
        data["settings_error"] = error_text(exc)
    if args.json:
        _common.print_json(data)
    else:
        _print_show(data)
    return 1 if data["load_error"] or data["settings_error"] else 0


def _print_show(data: dict[str, Any]) -> None:
    where = data["path"] or ""
    if data["source"] == "entrypoint":
        where = f"{data['distribution']} {data['distribution_version']}" + (
            f" ({data['path']})" if data["path"] else "")
    print(f"{data['name']} {data['version']}".rstrip())
    if data["description"]:
        print(f"  {data['description']}")
    print(f"  source:   {data['source']} {where}")
    print(f"  entry:    {data['entry'] or '-'}")
    if data["requires"]:
        print(f"  requires: {', '.join(data['requires'])}")
    print(f"  status:   {status_text(data)}"
          + ("  (memory.provider)" if data["configured"] else ""))
    for copy in data["shadowed_copies"]:
        print(f"  shadows:  {copy['source']} {copy['path'] or copy['distribution']}")
    if data["load_error"]:
        print(f"  load:     FAILED: {data['load_error']}")
    else:
        print(f"  hooks:    {', '.join(data['hooks']) or 'none'}")
        if data["tools"]:
            print("  tools:")
            for tool in data["tools"]:
                print(f"    {tool['name']}: {_common.preview(tool['description'] or '-', 70)}")
        else:
            print("  tools:    none")
        for problem in data["tool_problems"]:
            print(f"  ! {problem}")
    if data["settings_error"]:
        print(f"  settings: FAILED: {data['settings_error']}")
    elif data["settings"] and data["settings"].get("has_schema"):
        settings = data["settings"]
        print(f"  settings ({settings['storage']} storage):")
        for item in settings["fields"]:
            if item["kind"] == "secret":
                value = f"secret in .env as {item['env_key']}: " \
                        f"{'set' if item.get('is_set') else 'not set'}"
            else:
                value = f"= {item.get('value')!r} ({item.get('source')})"
            required = ", required" if item.get("required") else ""
            print(f"    {item['key']} [{item['kind']}{required}] {value}")
        if settings.get("missing"):
            print(f"  ! required settings not set: {', '.join(settings['missing'])}")
    else:
        print("  settings: no config schema; the provider gets its raw "
              f"[providers.{data['name']}] table")
