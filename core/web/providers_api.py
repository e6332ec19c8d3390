"""The settings API's provider endpoints: list the providers found with their status, show and
change one provider's settings through :class:`memhost.schema.settings.SettingsService` (secrets
are write-only: ``is_set`` only), and choose the external provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memhost.schema.model import PROVIDER_NAME
from memhost.web.request import ApiError, Request, home_config, object_body


def _provider_name(request: Request) -> str:
    name = request.params.get("name", "")
    if not PROVIDER_NAME.match(name):
        raise ApiError(404, f"Unknown memory provider: {name}")
    return name



def _configured(home: Path) -> tuple[str, dict[str, Any], str | None]:
    """``memory.provider`` (``""`` for builtin only), the provider tables, and a config error."""
    from memhost.discovery import BUILTIN_ONLY
    from memhost.errors import ConfigError

    try:
        config = home_config(home)
    except ConfigError as exc:
        return "", {}, str(exc)
    name = config.memory.provider.strip()
    return ("" if name.lower() in BUILTIN_ONLY else name), dict(config.providers), None


def _status(candidate: Any, home: Path, table: dict[str, Any] | None,
            configured: str) -> tuple[str, str]:
    """``active``, ``available``, ``unavailable``, ``failed`` or ``blocked``, with the reason.
    Loads the provider to ask ``check_available`` (bounded in time), as ``providers list --check``
    does."""
    from memhost.authoring.availability import availability
    from memhost.cli.progress import step

    # Loading a provider can wait on its import; a slow one is said on the server's stderr.
    with step("memhost settings", f"checking memory provider {candidate.name!r} (import, "
              "check_available)", after=1.0):
        status, reason = availability(candidate, home, table)
    if status == "available" and candidate.name == configured:
        status = "active"
    return status, reason


def _candidate_row(candidate: Any, status: str, reason: str, configured: str) -> dict[str, Any]:
    from memhost.discovery import SCHEMA_FILE

    has_schema = bool(candidate.path and (candidate.path / SCHEMA_FILE).is_file())
    return {"name": candidate.name, "source": candidate.source,
            "path": str(candidate.path) if candidate.path else None,
            "version": candidate.version, "description": candidate.description,
            "status": status, "reason": reason, "configured": candidate.name == configured,
            "has_schema": has_schema, "shadowed_by": candidate.shadowed_by or None}



def list_providers(request: Request) -> dict[str, Any]:
    """Every provider found, with its status and reason, and which one is configured."""
    from memhost import discovery

    home = request.home
    configured, tables, config_error = _configured(home)
    found = discovery.discover(home, strict=False)
    rows = []
    for candidate in found.candidates:
        status, reason = _status(candidate, home, tables.get(candidate.name), configured)
        rows.append(_candidate_row(candidate, status, reason, configured))
    failures = {f.name: f.error for f in discovery.recorded_failures()}
    for row in rows:
        if row["status"] == "failed" and not row["reason"]:
            row["reason"] = failures.get(row["name"], "")
    shadowed = [_candidate_row(c, "shadowed", f"shadowed by the one from {c.shadowed_by}",
                               configured) for c in found.shadowed]
    configured_known = not configured or found.get(configured) is not None
    return {"home": str(home), "configured": configured or "builtin",
            "configured_known": configured_known, "config_error": config_error,
            "providers": rows, "shadowed": shadowed, "blocked": list(found.blocked)}


def _settings(home: Path) -> Any:
    from memhost.schema.settings import SettingsService

    return SettingsService(home)


def _known(request: Request) -> str:
    """The provider name from the path, which must be a discovered provider (else 404)."""
    from memhost import discovery

    name = _provider_name(request)
    if discovery.discover(request.home, strict=False).get(name) is None:
        raise ApiError(404, f"Unknown memory provider: {name}")
    return name


def get_provider(request: Request) -> dict[str, Any]:
    """One provider's settings: schema, JSON Schema, uiSchema and current values (secrets only as
    ``is_set``)."""
    return _settings(request.home).describe(_known(request))


def get_provider_schema(request: Request) -> dict[str, Any]:
    """One provider's settings as JSON Schema (draft 2020-12) and uiSchema."""
    described = _settings(request.home).describe(_known(request))
    return {"json_schema": described["json_schema"], "ui_schema": described["ui_schema"]}


def update_provider(request: Request) -> dict[str, Any]:
    """Change the fields sent, and nothing else; refused as a whole (nothing written) when any
    value is invalid."""
    name = _known(request)
    values = object_body(request).get("values")
    if not isinstance(values, dict):
        raise ApiError(400, 'Send {"values": {"field_key": value, ...}}.')
    return _settings(request.home).update(name, values)


def clear_secret(request: Request) -> dict[str, Any]:
    """Remove one secret from the env store."""
    name = _known(request)
    key = object_body(request).get("key")
    if not isinstance(key, str) or not key:
        raise ApiError(400, 'Send {"key": "field_key"} naming the secret to clear.')
    return _settings(request.home).clear_secret(name, key)


def set_active(request: Request) -> dict[str, Any]:
    """Make a provider the external provider (``builtin`` for none); validated against the
    providers found."""
    from memhost import discovery
    from memhost.config import update_config
    from memhost.errors import ConfigError

    wanted = object_body(request).get("provider")
    if not isinstance(wanted, str):
        raise ApiError(400, 'Send {"provider": "NAME"} ("builtin" for no external provider).',
                       {"provider": "must be a provider name"})
    home = request.home
    try:
        name = discovery.validate_provider_name(wanted, home)
    except ConfigError as exc:
        raise ApiError(422, str(exc), {"provider": str(exc)}) from None
    update_config(home, {("memory", "provider"): name or None})
    if not name:
        return {"configured": "builtin", "status": "active", "reason": "",
                "message": "Only the builtin memory is active."}
    candidate = discovery.discover(home, strict=False).get(name)
    if candidate is None:  # removed since it was validated a moment ago
        status, reason = "failed", "it is no longer found"
    else:
        _, tables, _ = _configured(home)
        status, reason = _status(candidate, home, tables.get(name), name)
    message = (f"{name} is the memory provider." if status == "active" else
               f"{name} is selected, but it is {status}: {reason}. Until that is fixed only the "
               "builtin memory is active.")
    return {"configured": name, "status": status, "reason": reason, "message": message}
