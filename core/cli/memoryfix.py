"""``memhost memory fix``: repair a memory file edited by hand, without a text editor.

It splits pasted blobs into entries (at blank lines, list items and headings), drops repeats,
keeps entries in file order while they fit the budget and sets the rest aside in the archive
(``memhost memory restore ID`` brings one back). It shows the plan first and asks before it
changes anything; ``--yes`` applies without asking (for scripts), ``--json`` prints the plan and
the outcome as JSON. The file as it was is saved as a ``.bak`` beside it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memhost.cli import _common


def register(actions: argparse._SubParsersAction) -> None:
    fix = actions.add_parser(
        "fix", help="split a pasted blob into entries and trim the file to its budget",
        description="Repair MEMORY.md or USER.md after a hand edit: split pasted text into "
                    "entries (at blank lines, list items and headings), drop repeats, and keep "
                    "what fits the budget; what does not fit goes to the archive "
                    "(`memhost memory restore ID` brings it back). Shows the plan and asks "
                    "first; the file as it was is kept as a .bak beside it.")
    _common.add_target_flag(fix, default=None, help="only this store (default: both)")
    fix.add_argument("-y", "--yes", action="store_true",
                     help="apply without asking (needed when stdin is not a terminal)")
    _common.add_json_flag(fix)
    fix.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    from memhost.builtin_providers import repair
    from memhost.builtin_providers.store import FILENAMES, TARGETS, Unreadable
    from memhost.errors import MemhostError

    home = _common.home(args)
    store = _common.store(home, writes=True)
    targets = [args.target] if args.target else [t for t in TARGETS if store.enabled[t]]
    plans = []
    for target in targets:
        try:
            plans.append(repair.plan(store, target))
        except Unreadable as exc:
            raise MemhostError(f"{store.path(target)} cannot be read ({exc}); fix its permissions "
                               "or encoding first. Nothing was changed.") from None
        except ValueError as exc:  # a part no entry may hold, e.g. a NUL character
            raise MemhostError(f"{store.path(target)} cannot be fixed automatically: {exc}. "
                               "Nothing was changed; edit the file by hand (`memhost doctor` "
                               "says what else is wrong).") from None
    todo = [p for p in plans if p.changed]
    if not args.json:
        for plan in plans:
            _print_plan(plan, FILENAMES[plan.target])
    if not todo:
        if args.json:
            _common.print_json({"applied": False, "plans": [p.as_dict() for p in plans]})
        else:
            print("Nothing to fix.")
        return 0
    if not args.yes:
        if args.json or not (sys.stdin is not None and sys.stdin.isatty()):
            if args.json:
                _common.print_json({"applied": False, "plans": [p.as_dict() for p in plans],
                                    "note": "nothing was changed; rerun with --yes to apply"})
            else:
                _common.eprint("Nothing was changed: rerun with --yes to apply this plan.")
            return 1
        answer = input("Apply these changes? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Nothing was changed.")
            return 1
    results = []
    with _common.io_errors():
        for plan in todo:
            results.append(repair.apply(store, plan, origin="cli").response)
    failed = [r for r in results if not r.get("success")]
    if args.json:
        _common.print_json({"applied": not failed, "plans": [p.as_dict() for p in plans],
                            "results": results})
    else:
        for result in results:
            if result.get("success"):
                name = FILENAMES[result["target"]]
                print(f"{name}: fixed; now {result['usage']}, "
                      f"{_common.entries_phrase(result['entry_count'])}. The file as it was is "
                      f"in {result['backup']}; replaced and set-aside entries are in the "
                      "archive (`memhost memory history`, `memhost memory restore ID`).")
            else:
                _common.print_failure(result)
    return 1 if failed else 0


def _print_plan(plan: Any, filename: str) -> None:
    from memhost.builtin_providers.entries import joined_length

    before, after = joined_length(plan.before), joined_length(plan.after)
    if not plan.changed:
        print(f"{filename}: fine ({_common.entries_phrase(len(plan.before))}, "
              f"{before:,}/{plan.limit:,} chars).")
        return
    print(f"{filename}: {_common.entries_phrase(len(plan.before))}, {before:,}/{plan.limit:,} "
          f"chars -> {_common.entries_phrase(len(plan.after))}, {after:,}/{plan.limit:,} chars")
    if plan.split:
        print(f"  split {_common.entries_phrase(plan.split)} into parts "
              f"(blank lines, list items, headings)")
    if plan.dropped_headings:
        print(f"  heading lines dropped: {', '.join(plan.dropped_headings)}")
    for index, text in enumerate(plan.after, 1):
        print(f"  keep [{index}] {_common.preview(text)}")
    for text in plan.set_aside:
        print(f"  to the archive (over budget): {_common.preview(text)}")
