"""The providers section of ``memhost doctor``: the configured provider and whether it is active
(and why not), every provider found, load failures, shadows, blocked names, problems in each
provider's stored settings, and which secrets are set (names only, never values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _secrets(name: str, path: Path | None, home: Path) -> tuple[dict[str, bool], list[str], str]:
    """``({env_key: is_set}, [required secrets not set], schema error)`` — names only."""
    if path is None:
        return {}, [], ""
    from memhost.schema.envstore import EnvStore
    from memhost.schema.loader import load_config_schema

    try:
        schema = load_config_schema(path)
    except Exception as exc:
        from memhost.authoring.hookrunner import error_text

        return {}, [], error_text(exc)
    env = EnvStore(home)
    state = {f.env_key or "": env.is_set(f.env_key or "") for f in schema.secret_fields()}
    missing = [f.key for f in schema.secret_fields() if f.required and not state[f.env_key or ""]]
    return state, missing, ""


def doctor_section(ctx: Any) -> dict[str, Any]:
    """The providers section of ``memhost doctor``: the configured provider and whether it is
    active (and why not), every provider found, load failures, shadows, blocked names and which
    secrets are set (names only)."""
    from memhost import discovery
    from memhost.authoring.availability import availability
    from memhost.cli.config import table_problems
    from memhost.cli.doctor import section
    from memhost.health import probe
    from memhost.healthrecord import describe, read_record

    home = ctx.home
    problems: list[str] = []
    notes: list[str] = []
    lines: list[str] = []
    found = discovery.discover(home, strict=False)
    tables = dict(ctx.config.providers) if ctx.config is not None else {}
    configured = ctx.settings.provider.strip()
    configured = "" if configured.lower() in discovery.BUILTIN_ONLY else configured
    rows, secrets, active = [], {}, None
    secret_lines: list[str] = []
    for candidate in found.candidates:
        status, reason = availability(candidate, home, tables.get(candidate.name))
        is_configured = candidate.name == configured
        if is_configured and status == "available":
            # check_available never touches the network; starting it shows a service it
            # cannot reach.
            state, reason = probe(candidate, home, tables.get(candidate.name),
                                  ctx.settings.hook_timeout)
            active = state != "unavailable"
            status = "active" if state == "ok" else state
            if state == "degraded":
                problems.append(f"provider {candidate.name!r} is degraded: its recall failed "
                                f"when doctor asked: {reason}")
            elif state == "ok" and (seen := read_record(home, candidate.name)):
                # It answers doctor, but a running host saw its calls keep failing.
                status, reason = "degraded", describe(seen)
                problems.append(f"provider {candidate.name!r} is {reason}")
        rows.append({**candidate.as_dict(), "status": status, "reason": reason,
                     "configured": is_configured})
        state, missing, schema_error = _secrets(
            candidate.name, discovery.schema_path(candidate.name, home) if candidate.path else None,
            home)
        if schema_error:
            problems.append(f"provider {candidate.name!r}: its config schema cannot be loaded: "
                            f"{schema_error}")
        else:
            problems += table_problems(home, candidate.name)
        if state:
            secrets[candidate.name] = state
            shown = ", ".join(f"{key} {'set' if is_set else 'not set'}"
                              for key, is_set in state.items())
            secret_lines.append(f"secrets of {candidate.name}: {shown}")
        if missing and is_configured:
            problems.append(f"provider {candidate.name!r}: required secret(s) not set: "
                            f"{', '.join(missing)} (set them with `memhost config set "
                            f"providers.{candidate.name}.<key>`)")
        mark = "* " if is_configured else ""
        text = f"{status}: {reason}" if reason and status not in ("active", "available") else status
        lines.append(f"{mark}{candidate.name} ({candidate.source} {candidate.where}, "
                     f"{candidate.version or '-'}): {text}")
    lines += secret_lines
    if not found.candidates:
        lines.append(f"no providers found (folders go in {discovery.user_root(home)}/<name>/)")
    if not configured:
        lines.insert(0, "memory.provider: builtin (no external provider)")
    else:
        candidate = found.get(configured)
        if candidate is None:
            why = discovery.unknown_name_message(configured, found.names(), home)
        else:
            row = next(r for r in rows if r["name"] == configured)
            running = row["status"] in ("active", "degraded")  # degraded: listed as a problem
            why = "" if running else f"{row['status']}: {row['reason']}"
        if why:
            active = False
            problems.insert(0, f"configured provider {configured!r} (memory.provider) is not "
                               f"active: {why}. Only the builtin memory is active.")
        lines.insert(0, f"memory.provider = {configured!r}: "
                        f"{'active' if active else 'NOT active (builtin memory only)'}")
    failures = {(f.name, f.source): f for f in found.failures}
    for failure in discovery.recorded_failures():
        if any(r["name"] == failure.name and r["source"] == failure.source for r in rows):
            failures.setdefault((failure.name, failure.source), failure)
    for failure in failures.values():
        if failure.name != configured:
            where = failure.path or f"{failure.distribution} {failure.dist_version}"
            problems.append(f"provider {failure.name!r} ({failure.source} {where}) cannot be "
                            f"loaded: {failure.error}")
    for copy in found.shadowed:
        notes.append(f"provider {copy.name!r} from {copy.describe()} is shadowed by the one from "
                     f"{copy.shadowed_by}; rename one of them to use both")
    if found.blocked:
        notes.append(f"blocked by {discovery.DISABLED_ENV}: {', '.join(found.blocked)}")
    return section("providers", "Providers", lines=lines, problems=problems, notes=notes,
                   configured=configured or "builtin",
                   configured_active=bool(active) or not configured,
                   providers=rows, shadowed=[c.as_dict() for c in found.shadowed],
                   blocked=found.blocked, failures=[f.as_dict() for f in failures.values()],
                   secrets=secrets)
