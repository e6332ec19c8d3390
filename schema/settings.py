"""The settings service: the one way every UI (CLI, web, desktop) reads and writes a provider's
settings.

- :meth:`SettingsService.describe` gives the schema plus current values; a secret is described
  only by ``is_set`` (never its value, a masked copy or its length).
- :meth:`SettingsService.update` changes only the keys it is sent. A secret sent blank (or not
  sent) stays as it is; clearing one is :meth:`SettingsService.clear_secret`. A blank non-secret
  goes back to its default. Every value is checked before anything is written, so an invalid
  update is refused as a whole (:class:`SettingsError` with ``errors`` by field) and changes
  nothing on disk.
- :meth:`SettingsService.values` is the runtime view handed to the provider's hooks (secrets
  resolved); it is never for display.

Saving settings never changes which provider is active (``memory.provider``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memhost.errors import MemhostError
from memhost.schema.envstore import EnvStore
from memhost.security.masking import scrub_value
from memhost.schema.loader import load_config_schema
from memhost.schema.model import PROVIDER_NAME, ProviderConfigSchema
from memhost.schema.stores import store_for
from memhost.schema.values import coerce, contains_null, is_blank

SchemaFor = Callable[[str], "ProviderConfigSchema | None"]

#: What stands for a secret that is set while a values document is validated.
_SET = "<set>"


class SettingsError(MemhostError):
    """Settings were refused; ``errors`` maps each field key to what is wrong with it."""

    def __init__(self, message: str, errors: Mapping[str, str] | None = None) -> None:
        self.errors: dict[str, str] = dict(errors or {})
        detail = "; ".join(f"{key}: {problem}" if key else problem
                           for key, problem in self.errors.items())
        super().__init__(f"{message}: {detail}" if detail else message)


def discovered_schema(home: Path) -> SchemaFor:
    """``schema_for`` backed by provider discovery: the provider's ``config_schema.py``, loaded by
    path, or ``None`` when it has none. An unknown name raises :class:`memhost.errors.ProviderError`."""

    def schema_for(name: str) -> ProviderConfigSchema | None:
        from memhost import discovery

        path = discovery.schema_path(name, home)
        return None if path is None else load_config_schema(path)

    return schema_for


class SettingsService:
    def __init__(self, home: Path, *, schema_for: SchemaFor | None = None) -> None:
        self.home = Path(home)
        self.schema_for: SchemaFor = schema_for or discovered_schema(self.home)
        self.env = EnvStore(self.home)

    # -- schema ----------------------------------------------------------------------------------

    def schema(self, name: str) -> ProviderConfigSchema | None:
        """The provider's schema, or ``None`` when it declares none."""
        if not isinstance(name, str) or not PROVIDER_NAME.match(name):
            raise SettingsError(f"{name!r} is not a valid provider name (letters, digits, '-' "
                                "and '_', starting with a letter or digit)")
        schema = self.schema_for(name)
        if schema is not None and schema.name != name:
            raise SettingsError(f"the config schema of provider {name!r} is named "
                                f"{schema.name!r}; the two must match")
        return schema

    def _require(self, name: str) -> ProviderConfigSchema:
        schema = self.schema(name)
        if schema is None:
            raise SettingsError(f"provider {name!r} declares no config schema, so it has no "
                                "settings to change here")
        return schema

    def _active(self, name: str) -> bool:
        from memhost.config import read_config

        # A config.toml with a wrong key elsewhere must not stop a provider's settings being
        # shown or repaired.
        return read_config(self.home)[0].memory.provider == name

    # -- reading ---------------------------------------------------------------------------------

    def _stored(self, schema: ProviderConfigSchema) -> dict[str, Any]:
        return store_for(self.home, schema.name, schema.storage).read()

    @staticmethod
    def _effective(schema: ProviderConfigSchema, stored: Mapping[str, Any]) -> dict[str, Any]:
        """Non-secret values as the provider sees them: stored, else the default."""
        values = schema.defaults()
        for item in schema.fields:
            if not item.is_secret and item.key in stored:
                values[item.key] = stored[item.key]
        return values

    def describe(self, name: str) -> dict[str, Any]:
        """The schema and the current values, JSON-ready; secrets only as ``is_set``."""
        schema = self.schema(name)
        active = self._active(name)
        if schema is None:
            return {"name": name, "label": name, "docs_url": "", "storage": "config",
                    "has_schema": False, "active": active, "fields": [], "missing": [],
                    "unknown_keys": [],
                    "json_schema": ProviderConfigSchema(name).to_json_schema(),
                    "ui_schema": {"ui:order": []}}
        stored = self._stored(schema)
        effective = self._effective(schema, stored)
        where = "config.toml" if schema.storage == "config" else f"{schema.name}/config.json"
        described, missing = [], []
        for item in schema.fields:
            data = item.to_dict()
            data["visible"] = item.applies(effective)
            data["error"] = None
            if item.is_secret:
                del data["default"]
                data["is_set"] = self.env.is_set(item.env_key or "")
                if item.key in stored:
                    data["error"] = (f"a value for this secret is written in {where}, where "
                                     "it is ignored; delete it there and set it with the "
                                     "settings service (it goes to .env)")
                has_value = data["is_set"]
            else:
                data["value"] = effective.get(item.key)
                data["source"] = ("stored" if item.key in stored else
                                  "default" if item.default is not None else "unset")
                if item.key in stored:
                    problem = item.check_value(stored[item.key])
                    if problem:
                        data["error"] = f"the stored value {problem}"
                has_value = data["value"] is not None
            if item.required and data["visible"] and not has_value:
                missing.append(item.key)
            described.append(data)
        return {
            "name": name,
            "label": schema.label,
            "docs_url": schema.docs_url,
            "storage": schema.storage,
            "has_schema": True,
            "active": active,
            "fields": described,
            "missing": missing,
            "unknown_keys": sorted(k for k in stored if k not in schema.keys),
            "json_schema": schema.to_json_schema(),
            "ui_schema": schema.ui_schema(),
        }

    def values(self, name: str) -> dict[str, Any]:
        """The runtime view handed to the provider: stored values with defaults applied and
        secrets resolved from the env store (``None`` when unset). Never for display."""
        schema = self.schema(name)
        if schema is None:
            return store_for(self.home, name, "config").read()
        stored = self._stored(schema)
        values = {**{k: v for k, v in stored.items() if k not in schema.keys},
                  **self._effective(schema, stored)}
        for item in schema.secret_fields():
            values[item.key] = self.env.get(item.env_key or "")
        return values

    # -- writing ---------------------------------------------------------------------------------

    def update(self, name: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Change the fields in ``values`` and nothing else; returns :meth:`describe`.

        Refused as a whole with :class:`SettingsError` (nothing written) when any key is unknown
        or any value invalid.
        """
        if not isinstance(values, Mapping):
            raise SettingsError(f"{name}: settings must be a mapping of field keys to values")
        schema = self._require(name)
        errors: dict[str, str] = {}
        unknown = [key for key in values if key not in schema.keys]
        for key in unknown:
            errors[str(key)] = (f"unknown field; the fields of {name} are: "
                                f"{', '.join(schema.keys) or '(none)'}")
        changes: dict[str, Any] = {}
        secrets: dict[str, str] = {}
        for key, raw in values.items():
            if key in unknown:
                continue
            item = schema.field(key)
            if is_blank(raw):
                if not item.is_secret:  # a blank secret is left as it is
                    changes[key] = None
                continue
            try:
                value = coerce(item, raw)
            except ValueError as exc:
                errors[key] = str(exc)
                continue
            if item.is_secret:
                secrets[item.env_key or ""] = value
            elif schema.storage == "config" and contains_null(value):
                errors[key] = ("config.toml cannot hold null; leave the key out (or the provider "
                               "can use json_file storage)")
            else:
                changes[key] = value

        store = store_for(self.home, schema.name, schema.storage)
        stored = store.read()
        # A value shown masked (a token typed into a text field is shown as "[redacted]") and
        # sent back unchanged keeps what is stored: saving a page never writes the mask.
        changes = {key: value for key, value in changes.items()
                   if not (key in stored and value != stored[key]
                           and value == scrub_value(stored[key]))}
        candidate = {**stored, **changes}
        candidate = {k: v for k, v in candidate.items() if v is not None}
        document = self._effective(schema, candidate)
        for item in schema.secret_fields():
            if item.env_key in secrets or self.env.is_set(item.env_key or ""):
                document[item.key] = _SET
        for key, problem in schema.validate(document).items():
            if key in values and key not in errors:
                errors[key] = problem
        if errors:
            raise SettingsError(f"settings of {name} not saved", errors)

        store.write(changes)
        for env_key, secret in secrets.items():
            self.env.set(env_key, secret)
        return self.describe(name)

    def clear_secret(self, name: str, key: str) -> dict[str, Any]:
        """Remove a secret from the env store; returns :meth:`describe`."""
        schema = self._require(name)
        if key not in schema.keys:
            raise SettingsError(f"settings of {name} not changed",
                                {key: f"unknown field; the fields of {name} are: "
                                      f"{', '.join(schema.keys) or '(none)'}"})
        item = schema.field(key)
        if not item.is_secret:
            raise SettingsError(f"settings of {name} not changed",
                                {key: "is not a secret; send it blank to update() to go back "
                                      "to its default"})
        self.env.unset(item.env_key or "")
        return self.describe(name)
