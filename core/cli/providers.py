"""``memhost providers``: list, show, choose, scaffold and check memory providers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memhost.cli import _common

# The larger commands live in their own modules; their public names stay importable from here.
from memhost.cli.providers_doctor import doctor_section
from memhost.cli.providers_list import cmd_list, provider_rows
from memhost.cli.providers_show import cmd_show

__all__ = ["cmd_check", "cmd_list", "cmd_new", "cmd_show", "cmd_use", "doctor_section",
           "provider_rows", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "providers", help="list, show, choose, scaffold and check memory providers",
        description="Memory providers are found in memhost's bundled folder, in <home>/plugins/ "
                    "and through the 'memhost.providers' entry point of installed packages "
                    "(first one seen wins).")
    sub = parser.add_subparsers(dest="providers_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _common.usage(parser))

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


# -- commands ---------------------------------------------------------------------------------


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
