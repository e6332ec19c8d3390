"""``memhost memory``: look at the builtin memory and change it by hand.

Writes go through the same ``memory`` tool the model uses, so they follow the same rules (budget,
threat scanning, drift and unreadable-file refusals, the archive) and give the same JSON answers.
"""

from __future__ import annotations

import argparse

from memhost.cli import _common

# The actions live by what they do; their names stay importable from here.
from memhost.cli.memory_edit import ORIGIN, cmd_history, cmd_restore, cmd_write
from memhost.cli.memory_pending import cmd_approve, cmd_pending, cmd_reject
from memhost.cli.memory_show import cmd_show, describe_store, enabled_reason, over_budget

__all__ = ["ORIGIN", "cmd_approve", "cmd_history", "cmd_pending", "cmd_reject", "cmd_restore",
           "cmd_show", "cmd_write", "describe_store", "enabled_reason", "over_budget",
           "register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "memory", help="show, edit, and restore the builtin memory (MEMORY.md, USER.md)",
        description="Show and edit the builtin memory. Edits follow the same rules as the model's "
                    "`memory` tool; every replaced or removed entry is kept in the archive.")
    actions = parser.add_subparsers(dest="memory_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _common.usage(parser))

    # "list", as `providers`, `outbox` and `recall` name their listings.
    show = actions.add_parser("show", aliases=["list"],
                              help="list the entries with their index, age and usage")
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
