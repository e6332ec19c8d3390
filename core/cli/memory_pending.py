"""``memhost memory pending|approve|reject``: the writes waiting for a person's approval. With an
external provider configured, approved writes are mirrored to it like any other write."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from memhost.cli import _common
from memhost.cli.memory_edit import print_success


def _pending_ids(store: Any, wanted: str) -> list[str]:
    if wanted == "all":
        return [record.id for record in store.list()]
    return [wanted]


def cmd_pending(args: argparse.Namespace) -> int:
    import textwrap

    from memhost.review.approval import PendingStore

    pending = PendingStore(_common.memory_home(args))
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
    ids = _pending_ids(PendingStore(_common.memory_home(args)), args.pending_id)
    results = []
    shutdown: dict[str, Any] | None = None
    with _mirroring_store(home, args) as (store, finish):
        with _common.io_errors():
            for pending_id in ids:
                results.append(approve(store, pending_id, home=_common.memory_home(args)))
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
            print_success(response, lead=f"approved {response['pending_id']}: ")
        else:
            _common.print_failure(response)
    if shutdown is not None and shutdown["status"] != "drained":
        _common.eprint(
            f"memhost: warning: mirroring the approved writes to the memory provider ended "
            f"{shutdown['status']}: {shutdown['abandoned_writes']} write(s) abandoned, "
            f"{shutdown['kept_in_outbox']} kept in its outbox for the next start")
    return 1 if failed else 0


@contextlib.contextmanager
def _mirroring_store(home: Any, args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """The store to approve into, and a ``finish()`` returning the shutdown report (a dict) or
    ``None``. With an external provider configured, the store belongs to a
    :class:`~memhost.MemoryManager`, so each committed write is mirrored to the provider (through
    its outbox) like any other; ``finish`` shuts the manager down, waiting for those writes."""
    from memhost.manager import BUILTIN_ONLY

    config = _common.config(home, writes=True)
    if config.memory.provider.strip().lower() in BUILTIN_ONLY:
        yield _common.store(home, args, writes=True), lambda: None
        return
    import secrets

    from memhost.manager import MemoryManager

    manager = MemoryManager.from_home(home, user_id=_common.user(args))
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

    where = _common.memory_home(args)
    ids = _pending_ids(PendingStore(where), args.pending_id)
    results = [reject(where, pending_id) for pending_id in ids]
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
