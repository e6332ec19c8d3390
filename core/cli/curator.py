"""``memhost memory stale|pin|unpin|confirm|review-after|curate``: the curator at the command line.

These actions hang under ``memhost memory`` (registered by :mod:`memhost.cli.memory`). Marks
(pin, unpin, confirm, review-after) find their entry with the ``memory`` tool's matching rules
and change only the metadata sidecar; ``curate`` archives through the store's remove path.
The rules themselves live in :mod:`memhost.review.curator`.
"""

from __future__ import annotations

import argparse
from typing import Any

from memhost.cli import _common

ORIGIN = "cli"


def _duration(text: str) -> float:
    from memhost.review.curator import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register_actions(actions: argparse._SubParsersAction) -> None:
    stale = actions.add_parser(
        "stale", help="list stale entries, oldest first, with age and origin",
        description="Entries past their review date, or not updated or confirmed within the "
                    "window ([curator] stale_after_days, default 90 days). Showing an entry "
                    "never refreshes it; `memhost memory confirm` does.")
    stale.add_argument("--older-than", type=_duration, metavar="AGE",
                       help="the window, e.g. 90d, 12w, 1y (default: [curator] stale_after_days)")
    _common.add_target_flag(stale, default=None, help="only this store (default: both)")
    _common.add_json_flag(stale)
    stale.set_defaults(func=cmd_stale)

    for name, help_text in (("pin", "pin an entry: the curator never archives or changes it"),
                            ("unpin", "remove an entry's pin"),
                            ("confirm", "mark an entry as still true (it counts as fresh from "
                                        "now)")):
        parser = actions.add_parser(name, help=help_text)
        parser.add_argument("match", metavar="MATCH",
                            help="a short unique part of the entry (the memory tool's rules)")
        _common.add_target_flag(parser)
        _common.add_json_flag(parser)
        parser.set_defaults(func=cmd_mark, mark=name)

    review = actions.add_parser(
        "review-after", help="set the date from which an entry is reported as stale",
        description="Set an entry's review date: it is reported as stale from that day on (and "
                    "not before, whatever its age) until it is updated or confirmed. A review "
                    "date never archives an entry by itself.")
    review.add_argument("match", metavar="MATCH", help="a short unique part of the entry")
    review.add_argument("date", metavar="DATE",
                        help="YYYY-MM-DD, a time from now (30d, 6w, 1y), or 'none' to clear it")
    _common.add_target_flag(review)
    _common.add_json_flag(review)
    review.set_defaults(func=cmd_mark, mark="review-after")

    curate = actions.add_parser(
        "curate", help="archive stale, unpinned entries (restorable), at most a few per run",
        description="Move stale, unpinned entries older than the archive window to the archive "
                    "(`memhost memory restore ID` brings one back). Pinned entries and entries "
                    "with a review date still ahead are kept. With [memory] write_approval on, "
                    "each archive is staged for approval instead. With --merge (or [curator] "
                    "merge = true) a model also proposes merges and rewrites, all staged for "
                    "approval.")
    curate.add_argument("--dry-run", action="store_true",
                        help="report what would be archived or proposed; change nothing")
    curate.add_argument("--archive-older-than", type=_duration, metavar="AGE",
                        help="the archive window, e.g. 180d (default: [curator] "
                             "archive_after_days)")
    curate.add_argument("--max", type=int, metavar="N", dest="max_per_run",
                        help="archive at most N entries (default: [curator] max_archive_per_run)")
    merge = curate.add_mutually_exclusive_group()
    merge.add_argument("--merge", action="store_true", default=None,
                       help="also run the model-assisted pass (uses the [review] model)")
    merge.add_argument("--no-merge", action="store_false", dest="merge",
                       help="skip the model-assisted pass even when [curator] merge = true")
    _common.add_json_flag(curate)
    curate.set_defaults(func=cmd_curate, merge=None)


# -- stale ------------------------------------------------------------------------------------


def cmd_stale(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.store import FILENAMES, TARGETS, Unreadable
    from memhost.review.curator import DAY, days, entry_states, oldest_first

    home = _common.home(args)
    config = _common.config(home)
    store = _common.store(home, args)
    window = args.older_than if args.older_than is not None else \
        config.curator.stale_after_days * DAY
    now = store.clock()
    stale: list[Any] = []
    unknown: list[Any] = []
    errors: list[str] = []
    for target in [args.target] if args.target else list(TARGETS):
        if not store.enabled[target]:
            continue
        try:
            states = entry_states(store, target, now=now, window=window)
        except Unreadable as exc:
            errors.append(f"{FILENAMES[target]} cannot be read ({exc})")
            continue
        stale += [s for s in states if s.stale]
        unknown += [s for s in states if not s.age_known and not s.stale]
    stale = oldest_first(stale)
    if args.json:
        _common.print_json({"older_than_days": days(window), "stale": [s.as_dict() for s in stale],
                            "age_unknown": [s.as_dict() for s in unknown], "errors": errors})
        return 1 if errors else 0
    for error in errors:
        _common.eprint(f"memhost: error: {error}")
    if not stale:
        print(f"No stale entries (window: {days(window)} days).")
    else:
        print(f"{'AGE':>6}  {'TARGET':<6}  {'ORIGIN':<17}  WHY / ENTRY")
        for state in stale:
            age = _common.age(state.touched, now) if state.age_known else "?"
            print(f"{age:>6}  {state.target:<6}  {state.origin or '-':<17}  {state.reason}")
            print(f"{'':>6}  {'':<6}  {'':<17}  {_common.preview(state.text, 60)}")
        print(f"\n{_common.entries_phrase(len(stale))} stale (oldest first; window: "
              f"{days(window)} days). Keep one with `memhost memory confirm MATCH` or `pin "
              "MATCH`; `memhost memory curate --dry-run` shows what would be archived.")
    if unknown:
        print(f"{_common.entries_phrase(len(unknown))} without metadata (age unknown, never "
              "archived); `memhost memory confirm MATCH` starts tracking one.")
    return 1 if errors else 0


# -- marks ------------------------------------------------------------------------------------


def cmd_mark(args: argparse.Namespace) -> int:
    from memhost.builtin_providers.store import FILENAMES
    from memhost.review import curator

    home = _common.home(args)
    store = _common.store(home, args)
    target = args.target
    if not store.enabled[target]:
        from memhost.cli.memory_show import enabled_reason

        _, reason = enabled_reason(_common.config(home).memory, target)
        response: dict[str, Any] = {"success": False, "target": target, "error": (
            f"{FILENAMES[target]} is disabled ({reason}); enable it under [memory] first.")}
    elif args.mark == "confirm":
        response = curator.confirm(store, target, args.match, by=ORIGIN)
    elif args.mark in ("pin", "unpin"):
        response = curator.mark(store, target, args.match, args.mark,
                                pinned=True if args.mark == "pin" else None)
        if response.get("success"):
            response["pinned"] = args.mark == "pin"
            response["message"] = ("Pinned: the curator never archives or changes this entry."
                                   if args.mark == "pin" else "Unpinned.")
    else:
        response = _review_after(store, target, args.match, args.date)
    return _report(response, args.json)


def _review_after(store: Any, target: str, match: str, date: str) -> dict[str, Any]:
    from memhost.review import curator

    if date.strip().lower() in ("none", "clear", "-"):
        response = curator.mark(store, target, match, "review-after", review_after=None)
        if response.get("success"):
            response["message"] = "Review date cleared."
        return response
    try:
        day = curator.review_date(date, store.clock())
    except ValueError as exc:
        return {"success": False, "target": target, "error": str(exc)}
    response = curator.mark(store, target, match, "review-after", review_after=day)
    if response.get("success"):
        response["message"] = (f"Review date set: from {day} the entry is reported as stale "
                               "until it is updated or confirmed.")
    return response


def _report(response: dict[str, Any], as_json: bool) -> int:
    return _common.report(response, as_json, _print_mark)


def _print_mark(response: dict[str, Any]) -> None:
    from memhost.builtin_providers.store import FILENAMES

    name = FILENAMES.get(response.get("target", ""), "")
    print(f"{name}: {response.get('message', 'done.')}")
    print(f"  {_common.preview(response.get('entry', ''))}")


# -- curate -----------------------------------------------------------------------------------


def cmd_curate(args: argparse.Namespace) -> int:
    from memhost.errors import MemhostError
    from memhost.review import curator
    from memhost.review.approval import ApprovalGate

    home = _common.home(args)
    config = _common.config(home, writes=True)
    settings = config.curator
    store = _common.store(home, args, writes=True)
    window = args.archive_older_than if args.archive_older_than is not None else \
        settings.archive_after_days * curator.DAY
    limit = args.max_per_run if args.max_per_run is not None else settings.max_archive_per_run
    if limit < 0:
        raise MemhostError("--max must be 0 or more")
    merge = settings.merge if args.merge is None else args.merge
    model = _merge_model(config, home) if merge else None
    gate = ApprovalGate(store, home=_common.memory_home(args), enabled=config.memory.write_approval)
    with _common.io_errors():
        report = curator.curate(store, dry_run=args.dry_run, archive_older_than=window,
                                max_per_run=limit, gate=gate)
        if model is not None:
            try:
                merged = curator.propose_changes(
                    store, model, home=_common.memory_home(args), stage=not args.dry_run,
                    max_proposals=settings.max_archive_per_run,
                    max_calls=config.review.max_iterations,
                    stale_after=settings.stale_after_days * curator.DAY)
            finally:
                model.close()
            report.merge = merged.as_dict()
    if args.json:
        _common.print_json(report.as_dict())
    else:
        _print_curate(report)
    return 0 if report.ok else 1


def _merge_model(config: Any, home: Any) -> Any:
    from memhost.errors import MemhostError
    from memhost.review.llm import ModelError, OpenAIChatModel

    review = config.review
    if not (review.base_url.strip() and review.model.strip()):
        raise MemhostError("the merge pass needs a model: set [review] base_url and [review] model "
                           "in config.toml (`memhost config set review.base_url URL`), or run "
                           "curate with --no-merge")
    try:
        return OpenAIChatModel.from_settings(review, home)
    except ModelError as exc:
        raise MemhostError(f"the merge pass cannot use the [review] model: {exc}") from None


def _print_curate(report: Any) -> None:
    from memhost.review.curator import days

    window = days(report.archive_older_than)

    def line(item: dict[str, Any], extra: str = "") -> str:
        age = f"{item['age_days']}d" if item.get("age_days") is not None else "?"
        return f"  {age:>6}  {item['target']:<6}  {_common.preview(item['text'], 56)}{extra}"

    if report.dry_run:
        print(f"Dry run: nothing was changed (archive window: {window} days).")
        if report.would_archive:
            print(f"Would archive {_common.entries_phrase(len(report.would_archive))}:")
            for item in report.would_archive:
                print(line(item))
    if report.archived:
        print(f"Archived {_common.entries_phrase(len(report.archived))} (older than {window} "
              "days):")
        for item in report.archived:
            print(line(item, f"  [restore: memhost memory restore {item['archive_id']}]"
                       if item.get("archive_id") else ""))
    if report.staged:
        print(f"Staged {_common.entries_phrase(len(report.staged))} for archiving "
              "([memory] write_approval is on):")
        for item in report.staged:
            print(line(item, f"  [pending {item['pending_id']}]"))
        print("  Review with `memhost memory pending`, then `memhost memory approve ID|all`.")
    if report.already_pending:
        print(f"{_common.entries_phrase(len(report.already_pending))} already waiting for "
              "approval (`memhost memory pending`).")
    if report.pinned_kept:
        print(f"Kept {_common.entries_phrase(len(report.pinned_kept))}: pinned.")
    if report.left_for_later:
        print(f"Left {_common.entries_phrase(len(report.left_for_later))} for a later run (at most "
              f"{report.max_per_run} per run).")
    if not (report.archived or report.staged or report.would_archive or report.errors):
        print(f"Nothing to archive: no unpinned entry is older than {window} days.")
    for item in report.errors:
        where = f" ({_common.preview(item['text'], 40)})" if item.get("text") else ""
        _common.eprint(f"memhost: error: {item['target']}{where}: {item['error']}")
    merge = report.merge
    if merge is None:
        return
    if merge.get("error"):
        _common.eprint(f"memhost: error: the merge pass stopped: {merge['error']}")
    proposals = merge.get("proposals") or []
    verb = "would be proposed" if report.dry_run else "staged for approval"
    print(f"Merge pass: {len(proposals)} proposal{'s' if len(proposals) != 1 else ''} {verb}.")
    for item in proposals:
        pending = f"  [pending {item['pending_id']}]" if item.get("pending_id") else ""
        print(f"  {item['kind']} in {item['target']}{pending}: "
              f"{_common.preview(item['content'], 60)}")
    for item in merge.get("refused") or []:
        print(f"  refused: {item['reason']}")
    if proposals and not report.dry_run:
        print("  Review with `memhost memory pending`; nothing changes until you approve.")


# -- doctor -----------------------------------------------------------------------------------


def doctor_section(ctx: Any) -> dict[str, Any]:
    """Doctor's *Curator* section: stale entries and each store's fullness trend."""
    from memhost.builtin_providers.entries import joined_length
    from memhost.builtin_providers.store import FILENAMES, TARGETS, Unreadable
    from memhost.cli.doctor import section
    from memhost.config import CuratorSettings
    from memhost.review.curator import DAY, TREND_DAYS, entry_states, load_history, usage_trend

    settings = ctx.config.curator if ctx.config is not None else CuratorSettings()
    store = ctx.store
    window = settings.stale_after_days * DAY
    lines: list[str] = []
    notes: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    trends: dict[str, dict[str, Any] | None] = {}
    samples = load_history(store.folder)
    for target in TARGETS:
        if not store.enabled[target]:
            continue
        try:
            states = entry_states(store, target, now=ctx.now, window=window)
        except Unreadable:
            continue  # the store's own section reports it
        count = {"stale": sum(s.stale for s in states), "pinned": sum(s.pinned for s in states),
                 "age_unknown": sum(not s.age_known for s in states)}
        counts[target] = count
        used, limit = joined_length([s.text for s in states]), store.limits[target]
        trend = usage_trend(store.folder, target, used, limit, ctx.now, samples)
        name = FILENAMES[target]
        lines.append(f"{name}: {count['stale']} stale, {count['pinned']} pinned"
                     + (f", {count['age_unknown']} of unknown age" if count["age_unknown"] else ""))
        if trend is None:
            lines.append(f"  fullness: {store.usage(target, [s.text for s in states])}; no trend "
                         "yet (writes keep one sample a day)")
            trends[target] = None
        else:
            sign = "+" if trend.change >= 0 else ""
            lines.append(f"  fullness: {trend.then_percent}% {_common.age(trend.since, ctx.now)} "
                         f"ago -> {trend.now_percent}% now ({sign}{trend.change} points)")
            trends[target] = {"since": trend.since, "then_percent": trend.then_percent,
                              "now_percent": trend.now_percent, "change": trend.change,
                              "full_in_days": trend.full_in_days}
            if trend.full_in_days is not None and trend.full_in_days <= TREND_DAYS:
                notes.append(f"{name} is filling up: at the rate of the last "
                             f"{_common.age(trend.since, ctx.now)} it is full in about "
                             f"{trend.full_in_days} days; `memhost memory stale` lists what could "
                             "go")
    stale = sum(c["stale"] for c in counts.values())
    if stale:
        notes.append(f"{_common.entries_phrase(stale)} stale (not updated or confirmed in "
                     f"{settings.stale_after_days} days, or past a review date): see `memhost "
                     "memory stale`; confirm, pin, or archive them with `memhost memory curate`")
    return section("curator", "Curator", lines=lines or ["no enabled store"], notes=notes,
                   stale_after_days=settings.stale_after_days, stale=stale, counts=counts,
                   trends=trends)
