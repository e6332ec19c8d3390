"""``memhost memory show``: both stores' entries with their index, age, flags and usage, and
whether each store is enabled (and which config key decides it). Also the description the
settings page and ``memhost doctor`` show."""

from __future__ import annotations

import argparse
from typing import Any

from memhost.cli import _common


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
    from memhost.builtin_providers import entrymeta, snapshot, verdicts
    from memhost.builtin_providers.entries import joined_length, parse
    from memhost.builtin_providers.store import FILENAMES, Unreadable
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
    # The risk scores a session start saved beside the file: an unchanged entry is not scored
    # again (scoring a file's entries and pairs from nothing costs a good part of a second).
    unsaved = verdicts.recall(path, raw, entries)
    snapshot.prepare([entries], store.screen.policy)
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
    if unsaved:
        verdicts.save(path, raw, entries)
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
    store = _common.store(home, args)
    targets = [args.target] if args.target else list(TARGETS)
    stores = [describe_store(store, config.memory, target,
                             stale_after_days=config.curator.stale_after_days)
              for target in targets]
    failed = any(not s["readable"] for s in stores)
    if args.json:
        _common.print_json({"home": str(home), "user": _common.user(args) or None,
                            "stores": stores})
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
