"""``memhost recall``: see, fix and look after the recall store of a bundled recall provider.

``search``, ``list``, ``show``, ``forget``, ``export`` and ``import`` are in
:mod:`memhost.cli.recall_items`; ``stats`` and ``vacuum`` are here.

The provider is loaded through discovery, like any provider, and does the work itself (it knows
its own tables): ``stats`` counts what is stored, by kind and state, with the file or table
sizes; ``vacuum`` compacts (SQLite: merge the full-text index, checkpoint the log, rebuild the
file; PostgreSQL: ``VACUUM (ANALYZE)``). Neither creates a database that is not there.
"""

from __future__ import annotations

import argparse
from typing import Any

from memhost.cli import _common

PROVIDERS = ("sqlite", "postgres")


def register(subparsers: argparse._SubParsersAction) -> None:
    from memhost.cli import recall_items

    parser = subparsers.add_parser(
        "recall", help="see, search, fix and look after the recall store (sqlite, postgres)",
        description="See and fix what the recall store of a recall provider holds, and look "
                    "after its database: the configured provider's when it is sqlite or "
                    "postgres, else sqlite (--provider chooses).")
    actions = parser.add_subparsers(dest="recall_action", metavar="ACTION", required=True)
    recall_items.add_actions(actions, _provider_flag, cmd_recall_items)
    for name, text in (("stats", "what is stored: items by kind and state, sizes"),
                       ("vacuum", "compact the database (safe while agents run)")):
        action = actions.add_parser(name, help=text, description=text)
        _provider_flag(action)
        _common.add_json_flag(action)
        action.set_defaults(func=cmd_recall)


def _provider_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", choices=PROVIDERS,
                        help="which provider's store (default: the configured one, if it is "
                             "one of these, else sqlite)")


def cmd_recall_items(args: argparse.Namespace) -> int:
    from memhost.cli import recall_items
    from memhost.errors import MemhostError, RetryableError

    home = _common.home(args)
    name = _provider(args, home)
    try:
        return recall_items.run(args, name, home)
    except RetryableError as exc:
        raise MemhostError(f"the {name} recall store cannot be reached: {exc}") from None


def _provider(args: argparse.Namespace, home: Any) -> str:
    if args.provider:
        return str(args.provider)
    configured = _common.config(home).memory.provider.strip()
    return configured if configured in PROVIDERS else "sqlite"


def cmd_recall(args: argparse.Namespace) -> int:
    from memhost import discovery
    from memhost.errors import RetryableError

    home = _common.home(args)
    name = _provider(args, home)
    plugin = discovery.load_provider(name, home)
    try:
        data = plugin.maintenance(home, discovery.runtime_config(name, home),
                                  args.recall_action)
    except FileNotFoundError as exc:
        _common.eprint(f"memhost: {exc}")
        return 1
    except RetryableError as exc:
        _common.eprint(f"memhost: the {name} recall database cannot be reached: {exc}")
        return 1
    data = {"provider": name, **data}
    if args.json:
        _common.print_json(data)
    elif args.recall_action == "vacuum":
        _print_vacuum(data)
    else:
        _print_stats(data)
    return 0


def _mib(size: int) -> str:
    return f"{size / 1048576:.1f} MiB" if size >= 1048576 else f"{size / 1024:.0f} KiB"


def _print_stats(data: dict[str, Any]) -> None:
    where = data.get("path") or f"schema {data.get('schema')}, user {data.get('user_id')}"
    print(f"{data['provider']} recall: {where} (schema version {data.get('schema_version')})")
    counts: dict[str, dict[str, int]] = data.get("counts") or {}
    if not counts:
        print("  nothing stored yet")
    for kind in sorted(counts):
        states = ", ".join(f"{n} {state}" for state, n in sorted(counts[kind].items()))
        print(f"  {kind:<8} {states}")
    print(f"  {data.get('live', 0)} item(s) can be recalled")
    if data.get("first"):
        print(f"  from {_common.local_time(data['first'])} to {_common.local_time(data['last'])}")
    if isinstance(data.get("bytes"), dict):
        sizes = ", ".join(f"{name} {_mib(size)}" for name, size in data["bytes"].items() if size)
        print(f"  files: {sizes}; journal mode {data.get('journal_mode')}; "
              f"{data.get('freelist_count', 0)} free page(s)")
    elif "table_bytes_all_users" in data:
        print(f"  tables (all users): {_mib(int(data['table_bytes_all_users']))}")


def _print_vacuum(data: dict[str, Any]) -> None:
    if "bytes_before" in data:
        print(f"vacuumed {data['path']}: {_mib(data['bytes_before'])} -> "
              f"{_mib(data['bytes_after'])}")
    else:
        print(f"vacuumed {', '.join(data.get('vacuumed', []))} in schema {data.get('schema')}")
