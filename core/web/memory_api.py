"""The settings API's memory endpoints: both stores with their entries and flags, edits through
the same :class:`~memhost.builtin_providers.tool.MemoryTool` the model uses (origin ``settings``,
so they follow the same rules and give the same answers), the writes waiting for a person's
approval, and the archive of replaced or removed entries."""

from __future__ import annotations

import re
import time
from typing import Any

from memhost.web.request import (ORIGIN, TARGETS, ApiError, Request, age_text, home_config,
                                 memory_store, object_body)

PENDING_ID = re.compile(r"^[0-9a-f]{8}$")
ARCHIVE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_ARGUMENTS = ("action", "content", "new_text", "old_text", "operations")


# -- memory ----------------------------------------------------------------------------------------


def _entry_flags(store: Any, target: str, entries: list[dict[str, Any]], stale_days: int,
                 now: float) -> None:
    """``pinned`` and ``stale`` for entries whose description lacks them: pinned from the
    sidecar, stale when neither written nor confirmed within ``stale_days`` (never when pinned).
    Flags the store's own description already gives are kept as they are."""
    from memhost.builtin_providers import entrymeta

    meta = entrymeta.load(store.path(target))
    for entry in entries:
        record = entrymeta.for_entry(meta, entry["text"])
        entry.setdefault("pinned", bool(record.get("pinned")))
        entry.setdefault("confirmed", record.get("confirmed"))
        if "stale" not in entry:
            touched = [t for t in (record.get("updated"), record.get("confirmed"),
                                   record.get("created"))
                       if isinstance(t, int | float) and not isinstance(t, bool)]
            entry["stale"] = bool(touched) and not entry["pinned"] and \
                now - max(touched) > stale_days * 86_400
        updated = entry.get("updated")
        entry["updated_age"] = age_text(updated, now) if updated else None


def _describe_store(store: Any, config: Any, target: str) -> dict[str, Any]:
    """``memhost memory show``'s description of one store (with the curator's stale window when
    that description takes one)."""
    import inspect

    from memhost.cli.memory_show import describe_store

    options: dict[str, Any] = {}
    if "stale_after_days" in inspect.signature(describe_store).parameters:
        options["stale_after_days"] = config.curator.stale_after_days
    return describe_store(store, config.memory, target, **options)


def memory(request: Request) -> dict[str, Any]:
    """Both stores: usage, limits, whether enabled, and the entries with their index, age and
    flags (pinned, stale, withheld by threat scanning)."""
    from memhost.builtin_providers.store import MemoryStore
    from memhost.review.approval import PendingStore

    config = home_config(request.home)
    store = MemoryStore.from_settings(request.memory, config.memory)
    now = time.time()
    stores = []
    for target in TARGETS:
        info = _describe_store(store, config, target)
        _entry_flags(store, target, info["entries"], config.curator.stale_after_days, now)
        stores.append(info)
    return {"stores": stores, "pending": PendingStore(request.memory).count(),
            "stale_after_days": config.curator.stale_after_days}


def write_memory(request: Request) -> dict[str, Any]:
    """Add, replace or remove entries with the ``memory`` tool's arguments (``action``,
    ``content``, ``old_text``, or an ``operations`` batch): the same rules and answers as the
    model's tool. A failed write is 422 with the tool's answer in ``result``."""
    from memhost.builtin_providers.tool import MemoryTool

    target = request.params.get("target", "")
    if target not in TARGETS:
        raise ApiError(404, f"Unknown memory store {target!r}; use 'memory' or 'user'.")
    body = object_body(request)
    arguments = {key: body[key] for key in TOOL_ARGUMENTS if key in body}
    arguments["target"] = target
    try:
        response = MemoryTool(memory_store(request), origin=ORIGIN).call(arguments)
    except OSError as exc:
        raise ApiError(500, f"Could not save the change: {exc.strerror or exc}. The memory file "
                            "was not changed; `memhost doctor` checks the files.") from None
    if not response.get("success"):
        raise ApiError(422, str(response.get("error") or "The change was refused."),
                       result=response)
    return response


# -- approvals -------------------------------------------------------------------------------------


def list_pending(request: Request) -> dict[str, Any]:
    """Memory writes waiting for approval, oldest first."""
    from memhost.review.approval import PendingStore

    pending = PendingStore(request.memory)
    now = time.time()
    records = []
    for record in pending.list():
        data = record.as_dict()
        data.update(target=record.target, action=record.action, age=age_text(record.created_at, now))
        records.append(data)
    return {"pending": records,
            "unreadable": [{"path": p, "reason": why} for p, why in pending.unreadable]}


def _pending_id(request: Request) -> str:
    pending_id = request.params.get("id", "")
    if not PENDING_ID.match(pending_id):
        raise ApiError(404, f"No pending write has the id {pending_id!r}.")
    return pending_id


def approve_pending(request: Request) -> dict[str, Any]:
    """Apply a staged write (to exactly the entries it was staged against); 409 when it cannot
    apply any more (it is kept)."""
    from memhost.review.approval import PendingStore, approve

    object_body(request)
    pending_id = _pending_id(request)
    if PendingStore(request.memory).get(pending_id) is None:
        raise ApiError(404, f"No pending write has the id {pending_id!r}.")
    try:
        response = approve(memory_store(request), pending_id, home=request.memory)
    except OSError as exc:
        raise ApiError(500, f"Could not apply the write: {exc.strerror or exc}.") from None
    if not response.get("success"):
        status = 409 if response.get("kept") else 404
        raise ApiError(status, str(response.get("error")), result=response)
    return response


def reject_pending(request: Request) -> dict[str, Any]:
    """Discard a staged write; nothing in memory changes."""
    from memhost.review.approval import reject

    object_body(request)
    response = reject(request.memory, _pending_id(request))
    if not response.get("success"):
        raise ApiError(404, str(response.get("error")), result=response)
    return response


# -- archive ---------------------------------------------------------------------------------------


def list_archive(request: Request) -> dict[str, Any]:
    """Entries that writes replaced or removed, newest first (``?target=memory|user``,
    ``?limit=N``)."""
    from dataclasses import asdict

    target = request.query.get("target") or None
    if target is not None and target not in TARGETS:
        raise ApiError(400, "target must be 'memory' or 'user'", {"target": "unknown store"})
    limit_text = request.query.get("limit")
    limit = None
    if limit_text:
        if not limit_text.isdigit():
            raise ApiError(400, "limit must be a whole number", {"limit": "not a number"})
        limit = int(limit_text)
    archive = memory_store(request).archive
    try:
        records = archive.entries()
    except OSError as exc:
        raise ApiError(500, f"{archive.path} cannot be read ({exc.strerror or exc}).") from None
    records = [r for r in reversed(records) if target is None or r.target == target]
    if limit is not None:
        records = records[:limit]
    now = time.time()
    return {"path": str(archive.path),
            "entries": [{**asdict(r), "age": age_text(r.time, now)} for r in records]}


def restore_archived(request: Request) -> dict[str, Any]:
    """Put an archived entry back into its store (as an ``add``: budget and scanning apply)."""
    from memhost.builtin_providers.store import FILENAMES

    object_body(request)
    archive_id = request.params.get("id", "")
    store = memory_store(request)
    record = store.archive.get(archive_id) if ARCHIVE_ID.match(archive_id) else None
    if record is None:
        raise ApiError(404, f"No archived entry has the id {archive_id!r}.")
    if not store.enabled.get(record.target, False):
        raise ApiError(422, f"Entry {archive_id} belongs to {FILENAMES[record.target]}, which is "
                            "disabled under [memory] in config.toml; enable it first.")
    try:
        response = store.restore(archive_id, origin=ORIGIN).response
    except OSError as exc:
        raise ApiError(500, f"Could not restore the entry: {exc.strerror or exc}.") from None
    if not response.get("success"):
        raise ApiError(422, str(response.get("error")), result=response)
    return response
