"""``memhost doctor``: what memhost sees on disk, and what needs attention.

The report is a list of sections. Each is a function of a :class:`Context` that returns a dict
built with :func:`section`: a name, a title, the lines to print, and two lists, ``problems``
(something needs fixing; the command exits non-zero) and ``notes`` (worth knowing, nothing
wrong). Later checks add a function to :data:`SECTIONS`. A check that crashes is reported as a
problem of its own section; it never stops the others. Doctor only reads: it creates nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.cli import _common
from memhost.cli.doctor_probes import lock_findings, loose_mode, temp_findings


@dataclass
class Context:
    """What every section may look at; built once per run."""

    home: Path
    home_source: str
    config: Any  # memhost.config.Config: the valid settings, defaults for any wrong key
    config_error: str | None
    settings: Any  # the [memory] settings in effect (the default for any wrong key)
    store: Any  # memhost.builtin_providers.store.MemoryStore
    now: float


Section = Callable[[Context], dict[str, Any]]


def section(name: str, title: str, *, lines: list[str] | None = None,
            problems: list[str] | None = None, notes: list[str] | None = None,
            **data: Any) -> dict[str, Any]:
    """One section of the report, JSON-ready; ``status`` follows from problems and notes."""
    problems, notes = problems or [], notes or []
    status = "problem" if problems else "note" if notes else "ok"
    return {"name": name, "title": title, "status": status, "lines": lines or [],
            "problems": problems, "notes": notes, **data}


# -- sections ---------------------------------------------------------------------------------


def check_home(ctx: Context) -> dict[str, Any]:
    from memhost.home import memories_dir

    home = ctx.home
    problems: list[str] = []
    notes: list[str] = []
    exists = home.exists()
    if not exists:
        notes.append("the home does not exist yet; it is created on the first write")
    elif not home.is_dir():
        problems.append(f"{home} is not a folder; point MEMHOST_HOME (or --home) at a folder")
    elif not os.access(home, os.W_OK | os.X_OK):
        problems.append(f"{home} is not writable by this user; memory writes will fail")
    memories = memories_dir(home)
    if memories.exists() and not memories.is_dir():
        problems.append(f"{memories} is not a folder; move it aside so memhost can create the "
                        "memory folder there")
    return section("home", "Home", lines=[f"{home} (from {ctx.home_source})"],
                   problems=problems, notes=notes, path=str(home), source=ctx.home_source,
                   exists=exists)


def check_config(ctx: Context) -> dict[str, Any]:
    from memhost.home import config_path

    path = config_path(ctx.home)
    exists = path.exists()
    problems: list[str] = []
    notes: list[str] = []
    if ctx.config_error:
        problems.append(ctx.config_error)
        notes.append("the checks below use the default for each key named above")
        lines = [f"{path}: invalid"]
    else:
        lines = [f"{path}: {'valid' if exists else 'not present; every setting is at its default'}"]
    s = ctx.settings
    lines.append(f"in effect: [memory] memory_char_limit = {s.memory_char_limit}, user_char_limit = "
                 f"{s.user_char_limit}, write_approval = {str(s.write_approval).lower()}")
    temp_findings(path, ctx, problems, notes)
    lock = lock_findings(path, notes)
    return section("config", "Config", lines=lines, problems=problems, notes=notes,
                   path=str(path), exists=exists, valid=ctx.config_error is None,
                   error=ctx.config_error, lock=lock)


def check_store(ctx: Context, target: str) -> dict[str, Any]:
    from memhost.builtin_providers import entrymeta
    from memhost.cli.memory_show import describe_store, over_budget

    store = ctx.store
    info = describe_store(store, ctx.settings, target)
    path = Path(info["path"])
    problems: list[str] = []
    notes: list[str] = []
    lines = [f"{'enabled' if info['enabled'] else 'disabled'} by {info['enabled_by']}",
             str(path)]
    if not info["enabled"]:
        notes.append(f"{info['file']} is disabled: the model cannot see or change it")
    if not info["readable"]:
        problems.append(f"{info['error']}: writes to it are refused until it can be read; fix its "
                        "permissions, or its encoding (it must be UTF-8)")
    elif not info["exists"]:
        lines.append("not created yet (no entries)")
    else:
        lines.append(f"{_common.entries_phrase(info['entry_count'])}, {info['usage']}")
    if info["used"] > info["limit"]:
        problems.append("over budget — " + over_budget(info))
    if info["drift"]:
        problems.append(f"drift: {info['drift']}. Replace, remove and batches are refused until "
                        "the file is a clean list of entries separated by lines holding only '§'")
    blocked = [e["index"] for e in info["entries"] if e["blocked"]]
    for entry in info["entries"]:
        if entry["blocked"]:  # each with its own reason: a secret, its size, instructions...
            problems.append(f"entry {entry['index']} is withheld from the prompt "
                            f"({'; '.join(entry['blocked'])}); check it with `memhost memory "
                            "show` and remove it if you did not write it")
    if info["exists"] and (mode := loose_mode(path)):
        notes.append(f"{path.name} has mode {mode}; memhost keeps memory files private (0600)")
    backups = sorted(str(p) for p in path.parent.glob(f"{path.name}.bak.*")) \
        if path.parent.is_dir() else []
    if backups:
        notes.append(f"{len(backups)} drift backup(s) kept from refused writes; delete them once "
                     f"their content is merged back: {', '.join(backups)}")
    temps = temp_findings(path, ctx, problems, notes, swept=True)
    lock = lock_findings(path, notes)
    meta = entrymeta.meta_path(path)
    problems.extend(entrymeta.problems(path))
    without_meta = sum(1 for e in info["entries"] if e["created"] is None)
    if without_meta:
        lines.append(f"{without_meta} entr{'y has' if without_meta == 1 else 'ies have'} no "
                     f"metadata in {meta.name} (ages unknown; added by hand or sidecar lost)")
    return section(
        f"store.{target}", f"{info['file']} ({target})", lines=lines, problems=problems,
        notes=notes, target=target, file=info["file"], path=str(path), metadata_path=str(meta),
        exists=info["exists"], enabled=info["enabled"], enabled_by=info["enabled_by"],
        readable=info["readable"], entry_count=info["entry_count"], used=info["used"],
        limit=info["limit"], usage=info["usage"], drift=info["drift"], blocked_entries=blocked,
        entries_without_metadata=without_meta, backups=backups, temp_files=temps, lock=lock)


def check_archive(ctx: Context) -> dict[str, Any]:
    path = ctx.store.archive.path
    problems: list[str] = []
    notes: list[str] = []
    records = skipped = 0
    if path.exists():
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            problems.append(f"{path} cannot be read ({exc.strerror or exc}); replaced and "
                            "removed entries cannot be archived, so those writes will fail")
            lines = []
        for line in lines:
            if not line.strip():
                continue
            try:
                data = jsondoc.loads(line)
                ok = isinstance(data, dict) and {"id", "target", "text"} <= data.keys()
            except ValueError:
                ok = False
            records, skipped = (records + 1, skipped) if ok else (records, skipped + 1)
        if skipped:
            notes.append(f"{skipped} line(s) of the archive are not valid records (a write cut "
                         "off by a crash); they are skipped")
    records += ctx.store.archive.journaled()  # not yet folded into the file by a checkpoint
    summary = f"{_common.entries_phrase(records)} archived" if records or path.exists() \
        else "empty (nothing replaced or removed yet)"
    lock = lock_findings(path, notes)
    return section("archive", "Archive", lines=[str(path), summary], problems=problems,
                   notes=notes, path=str(path), records=records, skipped_lines=skipped, lock=lock)


def check_pending(ctx: Context) -> dict[str, Any]:
    from collections import Counter

    from memhost.review.approval import PendingStore

    pending = PendingStore(ctx.home)
    records = pending.list()
    problems = [f"{path} is not a readable pending write ({why}); delete it if you do not need it"
                for path, why in pending.unreadable]
    notes: list[str] = []
    approval = "on" if ctx.settings.write_approval else "off"
    lines = [str(pending.folder), f"[memory] write_approval = {approval}"]
    if records:
        origins = Counter(r.origin for r in records)
        by_origin = ", ".join(f"{count} from {origin}" for origin, count in sorted(origins.items()))
        lines.append(f"{len(records)} waiting for approval ({by_origin}); the oldest is "
                     f"{_common.age(records[0].created_at, ctx.now)} old")
        notes.append(f"{len(records)} memory write{'s' if len(records) != 1 else ''} waiting for "
                     "approval: review with `memhost memory pending`, then `memhost memory "
                     "approve ID|all` or `reject ID|all`")
    else:
        lines.append("none waiting for approval")
    return section("pending", "Pending writes", lines=lines, problems=problems, notes=notes,
                   path=str(pending.folder), count=len(records),
                   ids=[r.id for r in records], unreadable=[p for p, _ in pending.unreadable])


def check_providers(ctx: Context) -> dict[str, Any]:
    from memhost.cli.providers_doctor import doctor_section

    return doctor_section(ctx)


def check_outbox(ctx: Context) -> dict[str, Any]:
    from memhost.cli.outbox import doctor_section

    return doctor_section(ctx)


def check_screening(ctx: Context) -> dict[str, Any]:
    """How entries are screened here: the scorer's version, and whether its speed-ups and its
    learned reading are all present (each missing one changes cost or reach, never silently)."""
    from memhost.security import learned, prefilter, scorer

    installed, current, total = prefilter.coverage()
    has_table = learned.MODEL_PATH.exists()
    notes: list[str] = []
    if not installed:
        notes.append("google-re2 is not installed, so every candidate feature of the risk scorer "
                     "runs through Python's re: the same verdicts at about twice the cost of a "
                     "screened write; install it with: pip install google-re2")
    elif current < total:
        notes.append(f"{total - current} of the risk scorer's {total} features have no current "
                     "RE2 prefilter entry and run through re alone (the same verdicts, slower); "
                     "reinstall memhost")
    if not has_table:
        notes.append(f"the learned reading's table is missing ({learned.MODEL_PATH.name}): the "
                     "risk scorer reads with its rules alone; reinstall memhost")
    version = scorer.version()
    lines = [f"risk scorer {version}, {total} features",
             f"RE2 prefilter: {current if installed else 0} of {total} features",
             f"learned reading: {'table present' if has_table else 'table missing'}"]
    return section("screening", "Screening", lines=lines, notes=notes, version=version,
                   features=total, prefiltered=current if installed else 0,
                   learned_table=has_table)


def check_curator(ctx: Context) -> dict[str, Any]:
    from memhost.cli.curator import doctor_section

    return doctor_section(ctx)


SECTIONS: list[Section] = [
    check_home,
    check_config,
    functools.partial(check_store, target="memory"),
    functools.partial(check_store, target="user"),
    check_archive,
    check_pending,
    check_screening,
    check_curator,
    check_providers,
    check_outbox,
]


# -- running ----------------------------------------------------------------------------------


def build_context(args: argparse.Namespace) -> Context:
    from memhost.builtin_providers.store import MemoryStore
    from memhost.config import read_config
    from memhost.home import HOME_ENV

    home = _common.home(args)
    if getattr(args, "home", None) and str(args.home).strip():
        source = "--home"
    elif os.environ.get(HOME_ENV, "").strip():
        source = HOME_ENV
    else:
        source = "the platform default"
    # Every valid setting, the default for each wrong one (named in the config section).
    config, error = read_config(home)
    settings = config.memory
    return Context(home=home, home_source=source, config=config, config_error=error,
                   settings=settings,
                   store=MemoryStore.from_settings(_common.memory_home(args), settings),
                   now=time.time())


def run_sections(ctx: Context, sections: list[Section] | None = None) -> list[dict[str, Any]]:
    results = []
    for check in SECTIONS if sections is None else sections:
        try:
            results.append(check(ctx))
        except Exception as exc:  # one broken check must not hide the others
            name = getattr(check, "__name__", None) or getattr(getattr(check, "func", None),
                                                               "__name__", "check")
            results.append(section(name, name, problems=[
                f"this check failed: {type(exc).__name__}: {exc}"]))
    return results


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check the home, config and memory files; exit 1 if something needs "
                       "attention",
        description="Report the home, config file, memory stores (enabled or not and why, paths, "
                    "entries, usage, drift, unreadable files, locks, leftover temp files) and the "
                    "archive. Exits 1 when something needs attention.")
    _common.add_json_flag(parser)
    parser.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    results = run_sections(ctx)
    problems = sum(len(r["problems"]) for r in results)
    if args.json:
        _common.print_json({"home": str(ctx.home), "ok": problems == 0, "problems": problems,
                            "sections": results})
        return 1 if problems else 0
    for result in results:
        print(f"{result['title']}: {result['status']}")
        for line in result["lines"]:
            print(f"  {line}")
        for problem in result["problems"]:
            print(f"  ! {problem}")
        for note in result["notes"]:
            print(f"  - {note}")
    print()
    if problems:
        print(f"{problems} problem{'s' if problems != 1 else ''} need{'s' if problems == 1 else ''} "
              "attention (lines marked !).")
        return 1
    print("No problems found.")
    return 0
