"""What a running host last saw of its external provider's health, kept for ``memhost doctor``.

A provider's :class:`memhost.health.Health` lives in the host's process; ``memhost doctor`` runs
in another one and, by starting the provider and asking one recall, sees only what fails right
now. A provider whose calls keep failing in real turns (a recall store that lost its table, a
service that drops every other request) would look fine to it. So the host keeps the last state
it saw in ``<home>/outbox/<provider>/health.json`` (0600), and doctor reports it.

The record is written only when the state changes (ok → degraded → unavailable and back), never
per call, and it exists only while the provider is not ok: a healthy home holds no such file.
Its error text is scrubbed of secrets like every other fault text.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.files import atomic_write_text, ensure_private_dir

log = logging.getLogger(__name__)

RECORD_NAME = "health.json"


def record_path(home: Path, provider: str) -> Path:
    return home / "outbox" / provider / RECORD_NAME


def read_record(home: Path, provider: str) -> dict[str, Any] | None:
    """The last state a host recorded for ``provider``; ``None`` when it was ok (or unreadable)."""
    path = record_path(home, provider)
    try:
        data = jsondoc.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.debug("ignoring an unreadable health record %s: %s", path, exc)
        return None
    return data if isinstance(data, dict) and data.get("state") not in (None, "ok") else None


def recorded_state(home: Path, provider: str) -> str:
    record = read_record(home, provider)
    return str(record["state"]) if record else "ok"


def describe(record: dict[str, Any]) -> str:
    """One sentence for doctor: what the host saw, when, and how it clears."""
    when = record.get("at")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when)) if isinstance(when, (int, float)) else "?"
    problem = record.get("problem") or record.get("state")
    return (f"{problem} (as a running host saw it at {stamp}, pid {record.get('pid', '?')}; this "
            "clears once a host's calls to it succeed again)")


class HealthRecorder:
    """Called by :class:`memhost.health.Health` whenever its state changes."""

    def __init__(self, home: Path, provider: str) -> None:
        self.home = home
        self.provider = provider

    def initial_state(self) -> str:
        return recorded_state(self.home, self.provider)

    def __call__(self, health: Any) -> None:
        from memhost.security.masking import scrub_value

        path = record_path(self.home, self.provider)
        try:
            if health.state == "ok":
                path.unlink(missing_ok=True)
                return
            ensure_private_dir(path.parent)
            record = scrub_value({**health.as_dict(), "problem": health.problem(),
                                  "pid": os.getpid(), "at": time.time()})
            atomic_write_text(path, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
        except OSError as exc:  # a record doctor cannot read must never fail the host's call
            log.debug("could not record the health of provider %r in %s: %s", self.provider,
                      path, exc)
