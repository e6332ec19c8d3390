"""``memhost recall search|list|show|forget|export|import``: see and fix what the recall store
holds (the ``sqlite`` or ``postgres`` provider's), every one with ``--json``.

``forget`` erases the text of what it matches for good (the items stay as ``forgotten`` markers,
so a replayed write cannot bring them back); it shows what it will forget and asks first, unless
``--yes``. ``import`` shows a progress bar (tqdm) on a terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memhost.cli import _common
from memhost.errors import MemhostError

PROVIDERS = ("sqlite", "postgres")
FORMATS = ("Formats: a memhost export (JSONL); turns, one a line ({\"user\": ..., \"assistant\": "
           "...}); OpenAI-style chats ({\"messages\": [...]} one a line, or a list of them); a "
           "ChatGPT export's conversations.json.")


def add_actions(actions: argparse._SubParsersAction, provider_flag: Callable[[Any], None],
                run: Callable[[argparse.Namespace], int]) -> None:
    """Add the item actions to ``memhost recall``."""
    def action(name: str, text: str, **kwargs: Any) -> argparse.ArgumentParser:
        made = actions.add_parser(name, help=text, description=text, **kwargs)
        provider_flag(made)
        _common.add_json_flag(made)
        made.set_defaults(func=run, recall_items=name)
        return made

    search = action("search", "find stored items by relevance, as recall ranks them")
    search.add_argument("query", help="what to look for, in plain words")
    search.add_argument("--limit", type=int, default=10, help="at most this many (default 10)")
    _dates(search)
    listing = action("list", "the newest stored items (of a session, from a date)")
    listing.add_argument("--session", help="only this session's items")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    _dates(listing)
    show = action("show", "one item in full, with the turns around it")
    show.add_argument("id", type=int, help="the item's id (as search and list show it)")
    forget = action("forget", "forget items for good: their text is erased")
    which = forget.add_mutually_exclusive_group(required=True)
    which.add_argument("id", type=int, nargs="?", help="the item's id")
    which.add_argument("--session", help="every item of this session")
    which.add_argument("--match", metavar="TEXT", help="every item whose text holds TEXT")
    forget.add_argument("--yes", "-y", action="store_true", help="do not ask first (scripts)")
    export = action("export", "every item with its text, as JSONL (oldest first)")
    export.add_argument("--output", "-o", type=Path, help="write here (default: stdout)")
    imported = action("import", "store turns from a file", epilog=FORMATS)
    imported.add_argument("file", type=Path, help="the file to read")


def _dates(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", metavar="DATE", help="from this date on (YYYY-MM-DD or an ISO "
                        "date-time)")
    parser.add_argument("--until", metavar="DATE", help="up to the end of this date")


def _window(args: argparse.Namespace) -> tuple[float | None, float | None]:
    from memhost.recall.tools import ToolArgumentError, moment

    try:
        return (moment(args.since, "--since", end=False), moment(args.until, "--until", end=True))
    except ToolArgumentError as exc:
        raise MemhostError(str(exc)) from None


@contextmanager
def opened(name: str, home: Path, *, create: bool = False, user_id: str = "",
           memory_home: Path | None = None) -> Iterator[tuple[Any, Any]]:
    """The provider ``name`` and its store for ``home``; a store that is not there yet is an
    error unless ``create``. With ``user_id`` (``memhost --user``), that user's store, in
    ``memory_home``, as a MemoryHub opens it."""
    from memhost import discovery

    plugin = discovery.load_provider(name, home)
    config = discovery.runtime_config(name, home)
    plugin.user_id = user_id
    where = memory_home or home
    if not create and not plugin.store_exists(where, config):
        raise MemhostError(f"the {name} recall store has nothing yet (it is created when the "
                           "provider first runs, or by `memhost recall import`)")
    plugin.config = plugin.settings(config)
    store = plugin.open_store(where, config)
    try:
        yield plugin, store
    finally:
        store.close()


def run(args: argparse.Namespace, name: str, home: Path) -> int:
    action = args.recall_items
    with opened(name, home, create=action == "import", user_id=_common.user(args),
                memory_home=_common.memory_home(args)) as (plugin, store):
        return ACTIONS[action](args, plugin, store)


# -- actions --------------------------------------------------------------------------------------


def _line(hit: Any) -> str:
    label = f"{hit.kind}/{hit.role}" if hit.role else hit.kind
    return (f"#{hit.id:<6} {_common.local_time(hit.created_at)[:16]}  {label:<14} "
            f"{_common.preview(hit.text, 80)}")


def _hits(args: argparse.Namespace, hits: list[Any], empty: str) -> int:
    if args.json:
        _common.print_json({"count": len(hits), "results": [h.as_dict() for h in hits]})
    elif not hits:
        print(empty)
    else:
        for hit in hits:
            print(_line(hit))
    return 0


def do_search(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    from memhost.recall import Filters
    from memhost.security.redact import redact

    since, until = _window(args)
    # Masked as the turn's recall query is: the stored items are masked, and the query must
    # not reach a shared database's statement log in clear.
    hits = store.search(redact(args.query), limit=max(1, args.limit), filters=Filters(
        since=since, until=until), options=plugin.ranking())
    return _hits(args, hits, "nothing stored matches that")


def do_list(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    since, until = _window(args)
    hits = store.listing(session=args.session, since=since, until=until,
                         limit=max(1, args.limit))
    return _hits(args, hits, "no items" + (f" in session {args.session}" if args.session else ""))


def do_show(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    item = store.item(args.id)
    if item is None:
        raise MemhostError(f"no stored item has id {args.id}")
    around = store.around(args.id) if item["kind"] == "turn" else []
    shown = {key: item[key] for key in ("id", "kind", "role", "session_id", "created_at",
                                        "status", "target", "origin", "body") if key in item}
    if args.json:
        _common.print_json({"item": shown, "around": [h.as_dict() for h in around]})
        return 0
    print(f"#{item['id']} {item['kind']}{'/' + item['role'] if item.get('role') else ''} "
          f"({item['status']}), session {item['session_id'] or '-'}, "
          f"{_common.local_time(item['created_at'])}")
    print(item["body"] if item["body"] else "(text forgotten)")
    for hit in around:
        where = "before" if hit.id < item["id"] else "after"
        print(f"  {where}: {_line(hit)}")
    return 0


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise MemhostError("nothing forgotten: confirm with --yes when not at a terminal")
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def do_forget(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    if args.id is not None:
        item = store.item(args.id)
        if item is None or item["status"] == "forgotten":
            raise MemhostError(f"no stored item has id {args.id} (or it was forgotten already)")
        ids, what = [args.id], f"item #{args.id}: {_common.preview(item['body'], 70)}"
    else:
        found = store.listing(session=args.session, match=args.match, limit=None)
        ids = [h.id for h in found]
        what = (f"{len(ids)} item(s) of session {args.session}" if args.session
                else f"{len(ids)} item(s) holding {args.match!r}")
        if not args.json and ids and not args.yes:
            for hit in found[:10]:
                print(f"  {_line(hit)}")
            if len(found) > 10:
                print(f"  … and {len(found) - 10} more")
    if not ids:
        forgotten = 0
    elif args.yes or _confirm(f"Forget {what} for good?"):
        forgotten = store.forget_many(ids)
    else:
        print("nothing forgotten")
        return 1
    if args.json:
        _common.print_json({"forgotten": forgotten, "ids": ids})
    else:
        print(f"forgot {forgotten} item(s)")
    return 0


def do_export(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    from memhost.files import PRIVATE_FILE

    count = 0
    if args.output is None:
        for record in store.export():
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
        return 0
    # Recall holds conversations: the file is private, as the store is.
    args.output.touch(mode=PRIVATE_FILE, exist_ok=True)
    args.output.chmod(PRIVATE_FILE)
    with args.output.open("w", encoding="utf-8") as out:
        for record in store.export():
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    if args.json:
        _common.print_json({"exported": count, "path": str(args.output)})
    else:
        print(f"exported {count} item(s) to {args.output}")
    return 0


def do_import(args: argparse.Namespace, plugin: Any, store: Any) -> int:
    from tqdm import tqdm

    from memhost.recall import exchange
    from memhost.security.redact import redact

    try:
        conversations = list(exchange.read(args.file))
    except (OSError, ValueError) as exc:
        raise MemhostError(f"cannot import {args.file}: {exc}") from None
    added = total = 0
    bar = tqdm(conversations, unit="conversation", desc=f"importing {args.file.name}",
               disable=args.json or not sys.stderr.isatty(), file=sys.stderr)
    for conversation in bar:
        if conversation.items:
            # A file's turns reach the store as a live turn's do (docs/security.md, "Egress"):
            # secrets masked, each conversation as one hand-off. The items' keys were made from
            # the file's own text, so importing it again still stores nothing twice.
            added += store.add_many(redact(conversation.items))
            total += len(conversation.items)
    summary = {"file": str(args.file), "conversations": len(conversations), "items": total,
               "added": added, "already_stored": total - added}
    if args.json:
        _common.print_json(summary)
    else:
        print(f"imported {added} new item(s) from {len(conversations)} conversation(s) "
              f"({total - added} already stored)")
    return 0


ACTIONS: dict[str, Callable[[argparse.Namespace, Any, Any], int]] = {
    "search": do_search, "list": do_list, "show": do_show, "forget": do_forget,
    "export": do_export, "import": do_import}
