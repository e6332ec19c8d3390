"""``memhost memory``: look at the builtin memory and change it by hand.

Writes go through the same ``memory`` tool the model uses, so they follow the same rules (budget,
threat scanning, drift and unreadable-file refusals, the archive) and give the same JSON answers.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from memhost.cli import _common

ORIGIN = "cli"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "memory", help="show, edit, and restore the builtin memory (MEMORY.md, USER.md)",
        description="Show and edit the builtin memory. Edits follow the same rules as the model's "
                    "`memory` tool; every replaced or removed entry is kept in the archive.")
    actions = parser.add_subparsers(dest="memory_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _common.usage(parser))

    show = actions.add_parser("show", help="list the entries with their index, age and usage")
    _common.add_target_flag(show, default=None, help="only this store (default: both)")
    _common.add_json_flag(show)
    show.set_defaults(func=cmd_show)

    add = actions.add_parser("add", help="add an entry")
    add.add_argument("content", metavar="TEXT", help="the entry; '-' reads it from stdin")
    _common.add_target_flag(add)
    _common.add_json_flag(add)
    add.set_defaults(func=cmd_write, action="add")

    replace = actions.add_parser("replace", help="replace the entry containing OLD_TEXT")
    replace.add_argument("old_text", metavar="OLD_TEXT",
                         help="a short unique part of the entry (the whole entry is replaced)")
    replace.add_argument("content", metavar="NEW_TEXT", help="the new entry; '-' reads stdin")
    _common.add_target_flag(replace)
    _common.add_json_flag(replace)
    replace.set_defaults(func=cmd_write, action="replace")

    remove = actions.add_parser("remove", help="remove the entry containing OLD_TEXT")
    remove.add_argument("old_text", metavar="OLD_TEXT", help="a short unique part of the entry")
    _common.add_target_flag(remove)
    _common.add_json_flag(remove)
    remove.set_defaults(func=cmd_write, action="remove")

    history = actions.add_parser("history", help="list archived (replaced or removed) entries")
    _common.add_target_flag(history, default=None, help="only this store (default: both)")
    history.add_argument("-n", "--limit", type=int, metavar="N", help="only the N most recent")
    _common.add_json_flag(history)
    history.set_defaults(func=cmd_history)

    restore = actions.add_parser("restore", help="put an archived entry back")
    restore.add_argument("archive_id", metavar="ID", help="the id shown by `memhost memory history`")
    _common.add_json_flag(restore)
    restore.set_defaults(func=cmd_restore)

    pending = actions.add_parser("pending", help="list memory writes waiting for approval")
    _common.add_json_flag(pending)
    pending.set_defaults(func=cmd_pending)

    approve = actions.add_parser("approve", help="apply a staged write (or all of them)")
    approve.add_argument("pending_id", metavar="ID|all", help="an id from `memhost memory pending`, "
                         "or 'all' (oldest first)")
    _common.add_json_flag(approve)
    approve.set_defaults(func=cmd_approve)

    reject = actions.add_parser("reject", help="discard a staged write (or all of them)")
    reject.add_argument("pending_id", metavar="ID|all", help="an id from `memhost memory pending`, "
                        "or 'all'")
    _common.add_json_flag(reject)
    reject.set_defaults(func=cmd_reject)

    from memhost.cli.curator import register_actions

    register_actions(actions)  # stale, pin, unpin, confirm, review-after, curate

    from memhost.cli import memoryfix

    memoryfix.register(actions)


# -- show -------------------------------------------------------------------------------------


def enabled_reason(settings: Any, target: str) -> tuple[bool, str]:
    """Whether ``target`` is enabled, and the config key (and its source) that decides it."""
    key = "memory_enabled" if target == "memory" else "user_profile_enabled"
    value = bool(getattr(settings, key))
    source = "config.toml" if key in settings.model_fields_set else "default"
    return value, f"[memory] {key} = {str(value).lower()} ({source})"


def describe_store(store: Any, settings: Any, target: str, *, stale_after_days: int = 90,
                   now: float | None = None) -> dict[str, Any]:
    """Everything ``memory show`` reports about one store, JSON-ready. Each entry carries the
    curator's view of it (``pinned``, ``stale``, ``stale_reason``, ``review_after``,
    ``confirmed``), judged with a window of ``stale_after_days``."""
    from memhost.builtin_providers import entrymeta
    from memhost.builtin_providers.entries import joined_length, parse
    from memhost.builtin_providers.store import FILENAMES, Unreadable
    from memhost.builtin_providers import snapshot
    from memhost.review.curator import DAY, assess
    from memhost.security.text import reveal_invisible

    path = store.path(target)
    enabled, reason = enabled_reason(settings, target)
    limit = store.limits[target]
    info: dict[str, Any] = {
        "target": target, "file": FILENAMES[target], "path": str(path), "exists": path.exists(),
        "enabled": enabled, "enabled_by": reason, "limit": limit, "used": 0,
        "usage": store.usage(target, []), "entry_count": 0, "readable": True, "error": None,
        "drift": None, "entries": [],
    }
    try:
        raw = store.read_raw(target)
    except Unreadable as exc:
        info.update(readable=False, error=f"{path} exists but cannot be read ({exc})")
        return info
    entries = parse(raw)
    meta = entrymeta.load(path)
    used = joined_length(entries)
    info.update(used=used, usage=store.usage(target, entries), entry_count=len(entries),
                drift=store.drift(target, raw))
    now = store.clock() if now is None else now
    held = snapshot.withheld(entries, store.screen.policy, store.reviewed(target, entries))
    for index, text in enumerate(entries, 1):
        record = entrymeta.for_entry(meta, text)
        blocked = [held[index - 1]] if index - 1 in held else []
        state = assess(target, text, record, now=now, window=stale_after_days * DAY)
        info["entries"].append({
            "index": index, "text": text, "shown": reveal_invisible(text),
            "risk": min(snapshot.score(text), 1e9), "age": _common.age(record.get("created")),
            "created": record.get("created"), "updated": record.get("updated"),
            "origin": record.get("origin"), "blocked": blocked,
            "confirmed": state.confirmed, "review_after": state.review_after,
            "pinned": state.pinned, "stale": state.stale, "stale_reason": state.reason,
        })
    return info


def over_budget(info: dict[str, Any]) -> str:
    """What an over-budget store (as :func:`describe_store` saw it) means, and the fix."""
    from memhost.builtin_providers import budget

    withheld = len(budget.fit([e["text"] for e in info["entries"]], info["limit"]).withheld)
    return (f"{info['used']:,}/{info['limit']:,} chars: {_common.entries_phrase(withheld)} "
            f"withheld from the prompt and new additions refused until it is back under the "
            f"limit; `{budget.FIX_COMMAND}` splits and trims it (with a preview and a backup)")


def cmd_show(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.store import TARGETS

    home = _common.home(args)
    config = _common.config(home)
    store = _common.store(home)
    targets = [args.target] if args.target else list(TARGETS)
    stores = [describe_store(store, config.memory, target,
                             stale_after_days=config.curator.stale_after_days)
              for target in targets]
    failed = any(not s["readable"] for s in stores)
    if args.json:
        _common.print_json({"home": str(home), "stores": stores})
        return 1 if failed else 0
    for number, info in enumerate(stores):
        if number:
            print()
        _print_store(info)
    return 1 if failed else 0


def _print_store(info: dict[str, Any]) -> None:
    state = "enabled" if info["enabled"] else "disabled"
    print(f"{info['file']} ({info['target']}): {state} by {info['enabled_by']}")
    print(f"  {info['path']}")
    if not info["readable"]:
        print(f"  ! {info['error']}. Fix its permissions or encoding; writes are refused "
              "until it can be read.")
        return
    print(f"  {info['usage']}, {_common.entries_phrase(info['entry_count'])}")
    if info["used"] > info["limit"]:
        print(f"  ! over budget: {over_budget(info)}")
    if info["drift"]:
        print(f"  ! drift: {info['drift']}. Replace and remove are refused until the file is "
              "fixed; run `memhost doctor`.")
    if not info["entries"]:
        print("  (no entries)" if info["exists"] else "  (no entries; the file does not exist yet)")
        return
    width = max(len(e["age"]) for e in info["entries"])
    for entry in info["entries"]:
        lead = f"  [{entry['index']}] {entry['age']:<{width}}  "
        # Hidden characters written out (\u200b), so a person sees what a model would read.
        first, *rest = entry["shown"].split("\n")
        print(lead + first)
        for line in rest:
            print(" " * len(lead) + line)
        if entry["blocked"]:
            print(" " * len(lead) + f"! withheld from the prompt ({'; '.join(entry['blocked'])}); "
                  "remove it if you did not write it")
        marks = (["pinned"] if entry["pinned"] else []) + \
            ([f"stale: {entry['stale_reason']}"] if entry["stale"] else []) + \
            ([f"review after {entry['review_after']}"]
             if entry["review_after"] and not entry["stale"] else [])
        if marks:
            print(" " * len(lead) + f"({'; '.join(marks)})")


# -- add / replace / remove -------------------------------------------------------------------


def _read_content(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def cmd_write(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.tool import MemoryTool

    home = _common.home(args)
    tool = MemoryTool(_common.store(home, writes=True), origin=ORIGIN)
    arguments: dict[str, Any] = {"action": args.action, "target": args.target}
    if args.action in ("add", "replace"):
        arguments["content"] = _read_content(args.content)
    if args.action in ("replace", "remove"):
        arguments["old_text"] = args.old_text
    with _common.io_errors():
        response = tool.call(arguments)
    return _report(response, args.json)


def _report(response: dict[str, Any], as_json: bool, lead: str = "") -> int:
    return _common.report(response, as_json, lambda answer: _print_success(answer, lead))


def _print_success(response: dict[str, Any], lead: str) -> None:
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
    archive = _common.store(home).archive
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
    store = _common.store(home, writes=True)
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


# -- pending / approve / reject ---------------------------------------------------------------


def _pending_ids(store: Any, wanted: str) -> list[str]:
    if wanted == "all":
        return [record.id for record in store.list()]
    return [wanted]


def cmd_pending(args: argparse.Namespace) -> int:
    import textwrap

    from memhost.review.approval import PendingStore

    home = _common.home(args)
    pending = PendingStore(home)
    records = pending.list()
    if args.json:
        _common.print_json({"path": str(pending.folder),
                            "pending": [r.as_dict() for r in records],
                            "unreadable": [{"path": p, "reason": why}
                                           for p, why in pending.unreadable]})
        return 0
    for path, why in pending.unreadable:
        _common.eprint(f"memhost: warning: {path} is not a readable pending write ({why}); "
                       "delete it if you do not need it")
    if not records:
        print("No memory writes are waiting for approval.")
        return 0
    for record in records:
        print(f"{record.id}  {_common.local_time(record.created_at)}  ({record.origin})  "
              f"{record.summary.split(': ', 1)[0]}")
        print(textwrap.indent(record.detail, "    ", lambda line: True))
    print(f"\n{len(records)} write{'s' if len(records) != 1 else ''} waiting in {pending.folder}. "
          "Apply with `memhost memory approve ID|all`, discard with `memhost memory reject ID|all`.")
    return 0


def cmd_approve(args: argparse.Namespace) -> int:
    from memhost.review.approval import PendingStore, approve

    home = _common.home(args)
    ids = _pending_ids(PendingStore(home), args.pending_id)
    results = []
    shutdown: dict[str, Any] | None = None
    with _mirroring_store(home) as (store, finish):
        with _common.io_errors():
            for pending_id in ids:
                results.append(approve(store, pending_id, home=home))
        shutdown = finish()
    failed = sum(1 for r in results if not r.get("success"))
    if args.json:
        data = results[0] if args.pending_id != "all" else {"results": results}
        if shutdown is not None and shutdown["status"] != "drained":
            data = {**data, "provider_shutdown": shutdown}
        _common.print_json(data)
        return 1 if failed else 0
    if not results:
        print("No memory writes are waiting for approval.")
    for response in results:
        if response.get("success"):
            _print_success(response, lead=f"approved {response['pending_id']}: ")
        else:
            _common.print_failure(response)
    if shutdown is not None and shutdown["status"] != "drained":
        _common.eprint(
            f"memhost: warning: mirroring the approved writes to the memory provider ended "
            f"{shutdown['status']}: {shutdown['abandoned_writes']} write(s) abandoned, "
            f"{shutdown['kept_in_outbox']} kept in its outbox for the next start")
    return 1 if failed else 0


@contextlib.contextmanager
def _mirroring_store(home: Any) -> Iterator[tuple[Any, Any]]:
    """The store to approve into, and a ``finish()`` returning the shutdown report (a dict) or
    ``None``. With an external provider configured, the store belongs to a
    :class:`~memhost.MemoryManager`, so each committed write is mirrored to the provider (through
    its outbox) like any other; ``finish`` shuts the manager down, waiting for those writes."""
    from memhost.manager import BUILTIN_ONLY

    config = _common.config(home, writes=True)
    if config.memory.provider.strip().lower() in BUILTIN_ONLY:
        yield _common.store(home, writes=True), lambda: None
        return
    import secrets

    from memhost.manager import MemoryManager

    manager = MemoryManager.from_home(home)
    manager.start_session(f"memhost-approve-{secrets.token_hex(4)}")
    report: list[dict[str, Any]] = []

    def finish() -> dict[str, Any]:
        if not report:
            report.append(manager.shutdown().as_dict())
        return report[0]

    try:
        yield manager.store, finish
    finally:
        finish()


def cmd_reject(args: argparse.Namespace) -> int:
    from memhost.review.approval import PendingStore, reject

    home = _common.home(args)
    ids = _pending_ids(PendingStore(home), args.pending_id)
    results = [reject(home, pending_id) for pending_id in ids]
    failed = sum(1 for r in results if not r.get("success"))
    if args.json:
        _common.print_json(results[0] if args.pending_id != "all" else {"results": results})
        return 1 if failed else 0
    if not results:
        print("No memory writes are waiting for approval.")
        return 0
    for response in results:
        if response.get("success"):
            print(f"rejected {response['pending_id']}: {response['summary']}")
        else:
            _common.print_failure(response)
    return 1 if failed else 0
