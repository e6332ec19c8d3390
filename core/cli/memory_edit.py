"""``memhost memory add|replace|remove|history|restore``: change entries by hand through the same
``memory`` tool the model uses (same rules, same JSON answers), list the archive of replaced and
removed entries, and bring one back."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memhost.cli import _common
from memhost.cli.memory_show import enabled_reason

ORIGIN = "cli"


def _read_content(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def cmd_write(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.tool import MemoryTool

    home = _common.home(args)
    tool = MemoryTool(_common.store(home, args, writes=True), origin=ORIGIN)
    arguments: dict[str, Any] = {"action": args.action, "target": args.target}
    if args.action in ("add", "replace"):
        arguments["content"] = _read_content(args.content)
    if args.action in ("replace", "remove"):
        arguments["old_text"] = args.old_text
    with _common.io_errors():
        response = tool.call(arguments)
    return _report(response, args.json)


def _report(response: dict[str, Any], as_json: bool, lead: str = "") -> int:
    return _common.report(response, as_json, lambda answer: print_success(answer, lead))


def print_success(response: dict[str, Any], lead: str) -> None:
    """A successful write, with the store's new usage and what went to the archive."""
    from memhost.builtin_providers.store import FILENAMES

    name = FILENAMES.get(response.get("target", ""), response.get("target", ""))
    print(f"{lead}{name}: {response.get('message', 'done.')}")
    print(f"  now {response.get('usage')}, {_common.entries_phrase(response.get('entry_count', 0))}")
    previous = [response[k] for k in ("replaced_entry", "removed_entry") if k in response]
    for key in ("replaced_entries", "removed_entries"):
        previous += list(response.get(key, {}).values())
    for text in previous:
        print(f"  archived: {_common.preview(text)}")
    if previous:
        print("  (see `memhost memory history`; `memhost memory restore ID` brings one back)")


# -- history / restore ------------------------------------------------------------------------


def _archived(archive: Any) -> list[Any]:
    """The archive's records; an archive that cannot be read is a clean error."""
    from memhost.errors import MemhostError

    try:
        return archive.entries()
    except OSError as exc:
        raise MemhostError(f"{archive.path} cannot be read ({exc.strerror or exc}). Fix its "
                           "permissions; `memhost doctor` checks it.") from None


def cmd_history(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    home = _common.home(args)
    archive = _common.store(home, args).archive
    everything = _archived(archive)
    records = [r for r in everything if not args.target or r.target == args.target]
    records.reverse()  # newest first
    if args.limit is not None:
        records = records[: max(0, args.limit)]
    if args.json:
        _common.print_json({"path": str(archive.path), "entries": [asdict(r) for r in records]})
        return 0
    if not records:
        print("The archive is empty: no entry has been replaced or removed yet."
              if not everything else "No archived entry matches.")
        return 0
    print(f"{'ID':<8}  {'TIME':<19}  {'TARGET':<6}  {'ACTION':<7}  {'ORIGIN':<10}  TEXT")
    for r in records:
        print(f"{r.id:<8}  {_common.local_time(r.time):<19}  {r.target:<6}  {r.action:<7}  "
              f"{r.origin or '-':<10}  {_common.preview(r.text, 60)}")
    print(f"\n{_common.entries_phrase(len(records))} archived (newest first) "
          f"in {archive.path}. Bring one back with `memhost memory restore ID`.")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.store import FILENAMES

    home = _common.home(args)
    settings = _common.config(home, writes=True).memory
    store = _common.store(home, args, writes=True)
    record = next((r for r in reversed(_archived(store.archive)) if r.id == args.archive_id), None)
    if record is not None and not store.enabled.get(record.target, False):
        _, reason = enabled_reason(settings, record.target)
        response: dict[str, Any] = {
            "success": False, "target": record.target,
            "error": f"Entry {args.archive_id} belongs to {FILENAMES[record.target]}, which is "
                     f"disabled ({reason}). Enable it under [memory] in config.toml first."}
    else:
        with _common.io_errors():
            response = store.restore(args.archive_id).response
    return _report(response, args.json, lead=f"restored {args.archive_id} to " if
                   response.get("success") else "")
