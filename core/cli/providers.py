"""``memhost providers``: list, show, choose, scaffold and check memory providers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memhost.cli import _common


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "providers", help="list, show, choose, scaffold and check memory providers",
        description="Memory providers are found in memhost's bundled folder, in <home>/plugins/ "
                    "and through the 'memhost.providers' entry point of installed packages "
                    "(first one seen wins).")
    sub = parser.add_subparsers(dest="providers_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda _args: (parser.print_help(), 2)[1])

    p = sub.add_parser("list", help="every provider found, with its source and status",
                       description="List providers from manifests and entry-point metadata "
                                   "(no provider code runs unless --check is given).")
    _common.add_json_flag(p)
    p.add_argument("--check", action="store_true",
                   help="load each provider and ask whether it is available")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="one provider's manifest, hooks, tools and settings")
    p.add_argument("name")
    _common.add_json_flag(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("use", help="make NAME the external provider ('builtin' for none)",
                       description="Validate NAME against the providers found and write it to "
                                   "memory.provider in config.toml; 'builtin' or 'none' switch "
                                   "back to the builtin memory only.")
    p.add_argument("name")
    p.set_defaults(func=cmd_use)

    p = sub.add_parser("new", help="scaffold a working provider to start from",
                       description="Write a small working provider (plugin.toml, provider "
                                   "module, config_schema.py, README.md and a test) into "
                                   "<home>/plugins/NAME, or with --package a pip package that "
                                   "exposes it through the memhost.providers entry point.")
    p.add_argument("name")
    p.add_argument("--package", action="store_true",
                   help="a pip package (default location: ./memhost-NAME)")
    p.add_argument("--dir", type=Path, help="create it inside this folder instead")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("check", help="load a provider in isolation and check it; exit 1 on "
                                     "any failure",
                       description="Check NAME (a discovered provider) or PATH (a provider "
                                   "folder): manifest, requirements, hooks against the spec, "
                                   "tool schemas, config schema, check_available, and a "
                                   "scripted session in a scratch home with time bounds.")
    p.add_argument("target", metavar="NAME|PATH")
    _common.add_json_flag(p)
    p.set_defaults(func=cmd_check)


# -- helpers ----------------------------------------------------------------------------------


def _configured(home: Path) -> tuple[str, dict[str, dict[str, Any]], str | None]:
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

    configured, tables, config_error = _configured(home)
    found = discovery.discover(home)
    rows = []
    for candidate in found.candidates:
        row = candidate.as_dict()
        row["configured"] = candidate.name == configured
        if check:
            from memhost.authoring.checker import availability

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


def _status_text(row: dict[str, Any]) -> str:
    status = row["status"]
    if status in ("unavailable", "failed") and row.get("reason"):
        return f"{status}: {row['reason']}"
    return status


# -- commands ---------------------------------------------------------------------------------


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
                  f"{_status_text(row)}")
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


def cmd_show(args: argparse.Namespace) -> int:
    from memhost import discovery
    from memhost.authoring.checker import HookRunner, _error
    from memhost.errors import ProviderError
    from memhost.toolschemas import RESERVED_TOOL_NAMES, SchemaProblem, normalise_tool_schema

    home = _common.home(args)
    found = discovery.discover(home, strict=False)
    candidate = found.get(args.name)
    if candidate is None:
        raise ProviderError(discovery.unknown_name_message(args.name, found.names(), home))
    configured, _tables, _error_text = _configured(home)
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
        data["load_error"] = _error(exc)
    try:
        from memhost.schema.settings import SettingsService

        described = SettingsService(home).describe(candidate.name)
        data["settings"] = {k: described[k] for k in ("label", "docs_url", "storage",
                                                      "has_schema", "fields", "missing",
                                                      "unknown_keys") if k in described}
    except Exception as exc:
        data["settings_error"] = _error(exc)
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
    print(f"  status:   {_status_text(data)}"
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


def cmd_use(args: argparse.Namespace) -> int:
    from memhost import discovery
    from memhost.config import update_config

    home = _common.home(args)
    name = discovery.validate_provider_name(args.name, home)
    update_config(home, {("memory", "provider"): name or None})
    if not name:
        print("memory.provider: builtin (the builtin memory only)")
        return 0
    candidate = discovery.discover(home, strict=False).get(name)
    print(f"memory.provider = {name!r}")
    if candidate is not None and candidate.status != "available":
        print(f"warning: {name!r} is {candidate.status}: {candidate.reason}; until that is fixed "
              "only the builtin memory is active", file=sys.stderr)
    else:
        print(f"Run `memhost providers check {name}` to check that it loads and is available.")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from memhost import discovery
    from memhost.authoring.scaffold import ScaffoldError, check_name, scaffold

    home = _common.home(args)
    names = check_name(args.name)
    if args.package:
        target = (args.dir or Path.cwd()) / names.distribution
    else:
        target = (args.dir or discovery.user_root(home)) / names.name
        existing = discovery.discover(home, strict=False).get(names.name)
        if args.dir is None and existing is not None and existing.source == "bundled":
            raise ScaffoldError(f"{names.name!r} is already a bundled provider "
                                f"({existing.path}); a user folder of that name would be "
                                "shadowed by it. Choose another name.")
    written = scaffold(names.name, target, package=args.package)
    print(f"Created {target}:")
    for path in written:
        print(f"  {path.relative_to(target)}")
    print()
    if args.package:
        print(f"Next: cd {target} && pip install -e . && python -m pytest\n"
              f"      memhost providers check {names.name}")
    else:
        check = names.name if args.dir is None else str(target)
        print(f"Next: memhost providers check {check}\n"
              f"      python -m pytest {target / 'tests'}\n"
              f"      memhost providers use {names.name}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from memhost.authoring.checker import check_provider

    home = _common.home(args)
    report = check_provider(args.target, home)
    if args.json:
        _common.print_json(report.as_dict())
        return 0 if report.ok else 1
    width = max(len(step.check) for step in report.steps) + 2
    for step in report.steps:
        print(f"{step.status}  {step.check:<{width}}{step.detail}")
    failed = sum(1 for s in report.steps if s.status == "FAIL")
    print()
    if failed:
        print(f"{report.name or args.target}: {failed} check{'s' if failed != 1 else ''} failed.")
        return 1
    print(f"{report.name or args.target}: all checks passed.")
    return 0


# -- memhost doctor ---------------------------------------------------------------------------


def _secrets(name: str, path: Path | None, home: Path) -> tuple[dict[str, bool], list[str], str]:
    """``({env_key: is_set}, [required secrets not set], schema error)`` — names only."""
    if path is None:
        return {}, [], ""
    from memhost.schema.envstore import EnvStore
    from memhost.schema.loader import load_config_schema

    try:
        schema = load_config_schema(path)
    except Exception as exc:
        from memhost.authoring.checker import _error

        return {}, [], _error(exc)
    env = EnvStore(home)
    state = {f.env_key or "": env.is_set(f.env_key or "") for f in schema.secret_fields()}
    missing = [f.key for f in schema.secret_fields() if f.required and not state[f.env_key or ""]]
    return state, missing, ""


def doctor_section(ctx: Any) -> dict[str, Any]:
    """The providers section of ``memhost doctor``: the configured provider and whether it is
    active (and why not), every provider found, load failures, shadows, blocked names and which
    secrets are set (names only)."""
    from memhost import discovery
    from memhost.authoring.checker import availability
    from memhost.cli.config import table_problems
    from memhost.cli.doctor import section
    from memhost.health import probe
    from memhost.healthrecord import describe, read_record

    home = ctx.home
    problems: list[str] = []
    notes: list[str] = []
    lines: list[str] = []
    found = discovery.discover(home, strict=False)
    tables = dict(ctx.config.providers) if ctx.config is not None else {}
    configured = ctx.settings.provider.strip()
    configured = "" if configured.lower() in discovery.BUILTIN_ONLY else configured
    rows, secrets, active = [], {}, None
    secret_lines: list[str] = []
    for candidate in found.candidates:
        status, reason = availability(candidate, home, tables.get(candidate.name))
        is_configured = candidate.name == configured
        if is_configured and status == "available":
            # check_available never touches the network; starting it shows a service it
            # cannot reach.
            state, reason = probe(candidate, home, tables.get(candidate.name),
                                  ctx.settings.hook_timeout)
            active = state != "unavailable"
            status = "active" if state == "ok" else state
            if state == "degraded":
                problems.append(f"provider {candidate.name!r} is degraded: its recall failed "
                                f"when doctor asked: {reason}")
            elif state == "ok" and (seen := read_record(home, candidate.name)):
                # It answers doctor, but a running host saw its calls keep failing.
                status, reason = "degraded", describe(seen)
                problems.append(f"provider {candidate.name!r} is {reason}")
        rows.append({**candidate.as_dict(), "status": status, "reason": reason,
                     "configured": is_configured})
        state, missing, schema_error = _secrets(
            candidate.name, discovery.schema_path(candidate.name, home) if candidate.path else None,
            home)
        if schema_error:
            problems.append(f"provider {candidate.name!r}: its config schema cannot be loaded: "
                            f"{schema_error}")
        else:
            problems += table_problems(home, candidate.name)
        if state:
            secrets[candidate.name] = state
            shown = ", ".join(f"{key} {'set' if is_set else 'not set'}"
                              for key, is_set in state.items())
            secret_lines.append(f"secrets of {candidate.name}: {shown}")
        if missing and is_configured:
            problems.append(f"provider {candidate.name!r}: required secret(s) not set: "
                            f"{', '.join(missing)} (set them with `memhost config set "
                            f"providers.{candidate.name}.<key>`)")
        mark = "* " if is_configured else ""
        text = f"{status}: {reason}" if reason and status not in ("active", "available") else status
        lines.append(f"{mark}{candidate.name} ({candidate.source} {candidate.where}, "
                     f"{candidate.version or '-'}): {text}")
    lines += secret_lines
    if not found.candidates:
        lines.append(f"no providers found (folders go in {discovery.user_root(home)}/<name>/)")
    if not configured:
        lines.insert(0, "memory.provider: builtin (no external provider)")
    else:
        candidate = found.get(configured)
        if candidate is None:
            why = discovery.unknown_name_message(configured, found.names(), home)
        else:
            row = next(r for r in rows if r["name"] == configured)
            running = row["status"] in ("active", "degraded")  # degraded: listed as a problem
            why = "" if running else f"{row['status']}: {row['reason']}"
        if why:
            active = False
            problems.insert(0, f"configured provider {configured!r} (memory.provider) is not "
                               f"active: {why}. Only the builtin memory is active.")
        lines.insert(0, f"memory.provider = {configured!r}: "
                        f"{'active' if active else 'NOT active (builtin memory only)'}")
    failures = {(f.name, f.source): f for f in found.failures}
    for failure in discovery.recorded_failures():
        if any(r["name"] == failure.name and r["source"] == failure.source for r in rows):
            failures.setdefault((failure.name, failure.source), failure)
    for failure in failures.values():
        if failure.name != configured:
            where = failure.path or f"{failure.distribution} {failure.dist_version}"
            problems.append(f"provider {failure.name!r} ({failure.source} {where}) cannot be "
                            f"loaded: {failure.error}")
    for copy in found.shadowed:
        notes.append(f"provider {copy.name!r} from {copy.describe()} is shadowed by the one from "
                     f"{copy.shadowed_by}; rename one of them to use both")
    if found.blocked:
        notes.append(f"blocked by {discovery.DISABLED_ENV}: {', '.join(found.blocked)}")
    return section("providers", "Providers", lines=lines, problems=problems, notes=notes,
                   configured=configured or "builtin",
                   configured_active=bool(active) or not configured,
                   providers=rows, shadowed=[c.as_dict() for c in found.shadowed],
                   blocked=found.blocked, failures=[f.as_dict() for f in failures.values()],
                   secrets=secrets)
