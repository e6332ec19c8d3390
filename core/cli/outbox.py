"""``memhost outbox list|retry|drop``: the provider writes that could not be delivered.

A write a provider could not take (it raised an ordinary exception, or kept raising
``RetryableError`` past ``memory.write_retry_budget``) is parked in
``<home>/outbox/<provider>/failed/`` (see :mod:`memhost.deadletter`). ``list`` shows them with
their error, ``retry`` hands them back to the outbox (the next session started with that provider
delivers them, in the order they failed) and ``drop`` deletes them. ``memhost doctor`` counts
them in its *Outbox* section.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memhost.cli import _common


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "outbox", help="list, retry or drop provider writes that could not be delivered",
        description="Writes an external provider could not take are kept in "
                    "<home>/outbox/<provider>/failed/, never dropped. List them, hand them back "
                    "for delivery once the provider is fixed, or discard them.")
    parser.set_defaults(func=lambda args: _common.usage(parser))
    actions = parser.add_subparsers(dest="action", metavar="ACTION")

    listing = actions.add_parser("list", help="the failed writes (and how many wait in the outbox)")
    _provider_flag(listing)
    _common.add_json_flag(listing)
    listing.set_defaults(func=cmd_list)

    retry = actions.add_parser("retry", help="hand failed writes back to the outbox; the next "
                                             "session started with the provider delivers them")
    retry.add_argument("write_id", metavar="ID|all", help="an id from `memhost outbox list`, or "
                                                          "'all'")
    _provider_flag(retry)
    _common.add_json_flag(retry)
    retry.set_defaults(func=cmd_retry)

    drop = actions.add_parser("drop", help="delete failed writes for good")
    drop.add_argument("write_id", metavar="ID|all", help="an id from `memhost outbox list`, or "
                                                         "'all'")
    _provider_flag(drop)
    _common.add_json_flag(drop)
    drop.set_defaults(func=cmd_drop)


def _provider_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="only this provider's outbox (default: every one)")


def _dead_letters(home: Path, provider: str | None) -> list[Any]:
    from memhost.deadletter import DeadLetters, providers_with_outbox

    names = [provider] if provider else providers_with_outbox(home)
    return [DeadLetters(home, name) for name in names]


def cmd_list(args: argparse.Namespace) -> int:
    from memhost.outbox import Outbox

    home = _common.home(args)
    rows, pending, unreadable = [], {}, []
    for letters in _dead_letters(home, args.provider):
        rows += letters.list()
        unreadable += letters.unreadable
        pending[letters.provider] = Outbox(home, letters.provider).pending_count()
    if args.json:
        _common.print_json({"failed": [r.as_dict() for r in rows], "pending": pending,
                            "unreadable": [{"path": p, "error": e} for p, e in unreadable]})
        return 0
    for name, count in pending.items():
        failed = sum(1 for r in rows if r.provider == name)
        print(f"{name}: {failed} failed, {count} waiting in the outbox for the next start")
    for record in rows:
        print(f"  {record.id}  {_common.local_time(record.failed_at)}  {record.provider}  "
              f"{record.summary()}")
        print(f"      error: {record.error}")
    for path, error in unreadable:
        print(f"  ! {path} is not a readable failed write ({error})")
    if not rows:
        print("No failed writes.")
    else:
        print("Hand them back with `memhost outbox retry ID|all` once the provider is fixed, or "
              "delete them with `memhost outbox drop ID|all`.")
    return 0


def _select(args: argparse.Namespace) -> tuple[list[Any], list[Any], list[str]]:
    """(the DeadLetters folders, the chosen failed writes, ids asked for and not found)."""
    folders = _dead_letters(_common.home(args), args.provider)
    chosen = [r for letters in folders for r in letters.list()
              if args.write_id == "all" or r.id == args.write_id]
    missing = [] if chosen or args.write_id == "all" else [args.write_id]
    return folders, chosen, missing


def cmd_retry(args: argparse.Namespace) -> int:
    from memhost.outbox import Outbox

    home = _common.home(args)
    folders, chosen, missing = _select(args)
    journals: list[str] = []
    for letters in folders:
        mine = [r for r in chosen if r.provider == letters.provider]
        if not mine:
            continue
        # The journal first, then the failed files: a crash in between delivers twice rather
        # than never.
        journals.append(str(Outbox(home, letters.provider).requeue([r.calls for r in mine])))
        for record in mine:
            letters.remove(record)
    return _answer(args, missing, {"requeued": len(chosen), "ids": [r.id for r in chosen],
                                   "journals": journals},
                   f"Handed {len(chosen)} write(s) back to the outbox; the next session started "
                   "with the provider delivers them, in order.")


def cmd_drop(args: argparse.Namespace) -> int:
    folders, chosen, missing = _select(args)
    by_provider = {letters.provider: letters for letters in folders}
    for record in chosen:
        by_provider[record.provider].remove(record)
    return _answer(args, missing, {"dropped": len(chosen), "ids": [r.id for r in chosen]},
                   f"Deleted {len(chosen)} failed write(s).")


def _answer(args: argparse.Namespace, missing: list[str], data: dict[str, Any],
            message: str) -> int:
    if missing:
        _common.eprint(f"memhost: error: no failed write has the id {missing[0]!r}; "
                       "`memhost outbox list` shows them")
        return 1
    if args.json:
        _common.print_json(data)
    else:
        print(message)
    return 0


def doctor_section(ctx: Any) -> dict[str, Any]:
    """The *Outbox* section of ``memhost doctor``: writes waiting for delivery, and failed ones
    (a problem: a provider that could not take them is degraded)."""
    from memhost.cli.doctor import section
    from memhost.outbox import Outbox

    problems: list[str] = []
    notes: list[str] = []
    lines: list[str] = []
    providers: dict[str, dict[str, Any]] = {}
    for letters in _dead_letters(ctx.home, None):
        failed = letters.list()
        pending = Outbox(ctx.home, letters.provider).pending_count()
        last = failed[-1].error if failed else ""
        providers[letters.provider] = {"pending": pending, "failed": len(failed),
                                       "last_error": last}
        lines.append(f"{letters.provider}: {pending} waiting, {len(failed)} failed")
        if failed:
            problems.append(f"provider {letters.provider!r} is degraded: {len(failed)} write(s) "
                            f"could not be delivered (last error: {last}); `memhost outbox "
                            "list` shows them, `memhost outbox retry all` hands them back once "
                            "it is fixed, `memhost outbox drop` discards them")
        for path, error in letters.unreadable:
            problems.append(f"{path} is not a readable failed write ({error})")
        if pending:
            notes.append(f"{pending} write(s) for {letters.provider!r} wait in the outbox; the "
                         "next session started with it delivers them")
    if not providers:
        lines.append("empty (no provider write is waiting)")
    return section("outbox", "Outbox", lines=lines, problems=problems, notes=notes,
                   providers=providers,
                   failed_writes=sum(p["failed"] for p in providers.values()),
                   pending_writes=sum(p["pending"] for p in providers.values()))
