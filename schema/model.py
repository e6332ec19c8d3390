"""The config-schema data model: what a provider declares about its settings.

A provider's ``config_schema.py`` builds one :class:`ProviderConfigSchema` out of
:class:`ConfigField` and :class:`FieldOption`. These are frozen, pure data: building one checks that
it is consistent with itself (typed defaults, select options, secret env keys, ``when`` references,
number ranges) and raises :class:`SchemaError` naming the field when it is not, so a broken schema
fails when it is loaded rather than when a user opens a settings page.

Nothing here imports the memhost runtime; JSON Schema export and value validation are imported on
first use.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Literal

KINDS = ("text", "select", "secret", "bool", "number", "json")
STORAGES = ("config", "json_file")

Kind = Literal["text", "select", "secret", "bool", "number", "json"]
Storage = Literal["config", "json_file"]

#: A field key: used as a TOML key, a JSON property and the last part of ``providers.<name>.<key>``.
FIELD_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
#: A provider name: also a folder name under the home, so no separators and no leading dot.
PROVIDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
#: A secret's env key: an environment variable name.
ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SchemaError(ValueError):
    """A config schema contradicts itself; the message names the schema and the field."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_multiple(value: float, step: float) -> bool:
    """Whether ``value`` is a whole number of ``step`` (measured from 0), allowing for float error."""
    quotient = value / step
    return abs(quotient - round(quotient)) <= 1e-9 * max(1.0, abs(quotient))


def same_value(a: Any, b: Any) -> bool:
    """Equality that does not take ``True`` for ``1`` or ``"1"`` for ``1``."""
    return a == b and isinstance(a, bool) == isinstance(b, bool) and \
        isinstance(a, str) == isinstance(b, str)


def _freeze(value: Any) -> Any:
    """A JSON default as immutable data, so a shared schema cannot be changed by a caller."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain ``dict``/``list`` form of a frozen JSON value (a fresh copy every call)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class FieldOption:
    """One choice of a ``select`` field."""

    value: str | int | float | bool
    label: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, str | int | float | bool) or (
                isinstance(self.value, float) and not math.isfinite(self.value)):
            raise SchemaError(f"option value {self.value!r} must be a string, number or boolean")
        if not self.label:
            object.__setattr__(self, "label", str(self.value))


def _option(raw: Any) -> FieldOption:
    if isinstance(raw, FieldOption):
        return raw
    if isinstance(raw, Mapping):
        return FieldOption(**raw)
    return FieldOption(raw)


@dataclass(frozen=True)
class ConfigField:
    """One setting of a provider.

    ``kind`` is one of ``text``, ``select``, ``secret``, ``bool``, ``number``, ``json``. A secret
    has an ``env_key`` (the variable it is stored under in ``<home>/.env``) and never a default.
    ``when`` maps other fields' keys to the value each must have for this field to apply.
    ``min``/``max``/``step`` are for numbers only; ``options`` for selects only.
    """

    key: str
    label: str = ""
    kind: Kind = "text"
    default: Any = None
    description: str = ""
    placeholder: str = ""
    options: tuple[FieldOption, ...] = ()
    env_key: str | None = None
    required: bool = False
    min: float | None = None
    max: float | None = None
    step: float | None = None
    group: str = ""
    inline: bool = False
    when: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        key = self.key
        if not isinstance(key, str) or not FIELD_KEY.match(key):
            raise SchemaError(f"field key {key!r} must be a letter or underscore followed by "
                              "letters, digits or underscores (at most 64)")

        def bad(problem: str) -> SchemaError:
            return SchemaError(f"field {key!r}: {problem}")

        if self.kind not in KINDS:
            raise bad(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")
        for name in ("label", "description", "placeholder", "group"):
            if not isinstance(getattr(self, name), str):
                raise bad(f"{name} must be a string")
        for name in ("required", "inline"):
            if not isinstance(getattr(self, name), bool):
                raise bad(f"{name} must be true or false")
        if not self.label:
            object.__setattr__(self, "label", key.replace("_", " ").strip().capitalize() or key)

        # options
        if isinstance(self.options, str | bytes) or not isinstance(self.options, Iterable):
            raise bad("options must be a list of values or FieldOption")
        try:
            options = tuple(_option(raw) for raw in self.options)
        except (SchemaError, TypeError) as exc:
            raise bad(f"bad option: {exc}") from None
        object.__setattr__(self, "options", options)
        if self.kind == "select":
            if not options:
                raise bad("a select field needs options")
            values = [o.value for o in options]
            if len({(type(v), v) for v in values}) != len(values):
                raise bad("options repeat a value")
        elif options:
            raise bad(f"options are only for select fields, not {self.kind}")

        # secrets
        if self.kind == "secret":
            if not self.env_key:
                raise bad("a secret field needs an env_key (the variable it is stored under in "
                          "<home>/.env)")
            if not isinstance(self.env_key, str) or not ENV_KEY.match(self.env_key):
                raise bad(f"env_key {self.env_key!r} is not a valid environment variable name")
            if self.default is not None:
                raise bad("a secret field cannot have a default")
        elif self.env_key is not None:
            raise bad("env_key is only for secret fields")

        # number range
        bounds = {"min": self.min, "max": self.max, "step": self.step}
        if self.kind != "number":
            used = [name for name, value in bounds.items() if value is not None]
            if used:
                raise bad(f"{', '.join(used)} {'is' if len(used) == 1 else 'are'} only for "
                          f"number fields, not {self.kind}")
        else:
            for name, value in bounds.items():
                if value is not None and not _is_number(value):
                    raise bad(f"{name} must be a finite number, not {value!r}")
            if self.min is not None and self.max is not None and self.min > self.max:
                raise bad(f"min {self.min} is greater than max {self.max}")
            if self.step is not None and self.step <= 0:
                raise bad(f"step must be greater than 0, not {self.step}")

        # when
        if self.when is not None:
            if not isinstance(self.when, Mapping) or not self.when:
                raise bad("when must be a non-empty mapping {other_field_key: required_value}")
            if key in self.when:
                raise bad("when cannot refer to the field itself")
            object.__setattr__(self, "when", MappingProxyType(dict(self.when)))

        self._check_default()

    def _check_default(self) -> None:
        default, key = self.default, self.key
        if default is None:
            if self.kind == "bool":
                object.__setattr__(self, "default", False)
            return
        problem = self.check_value(default)
        if problem:
            raise SchemaError(f"field {key!r}: default {default!r} {problem}")
        if self.kind == "json":
            object.__setattr__(self, "default", _freeze(default))

    def check_value(self, value: Any) -> str | None:
        """Why ``value`` is not a valid (already typed) value for this field, or ``None``."""
        kind = self.kind
        if kind in ("text", "secret"):
            return None if isinstance(value, str) else "must be text"
        if kind == "bool":
            return None if isinstance(value, bool) else "must be true or false"
        if kind == "json":
            if not isinstance(value, Mapping | list | tuple):
                return "must be a JSON object or array"
            try:
                json.dumps(thaw(value), allow_nan=False)
            except (TypeError, ValueError):
                return "must hold only JSON data (objects, arrays, strings, numbers, booleans, null)"
            return None
        if kind == "select":
            allowed = self.allowed_values()
            if any(same_value(value, v) for v in allowed):
                return None
            return "must be one of: " + ", ".join(str(v) for v in allowed)
        # number
        if not _is_number(value):
            return "must be a number"
        if self.min is not None and value < self.min:
            return f"must be at least {self.min:g}"
        if self.max is not None and value > self.max:
            return f"must be at most {self.max:g}"
        if self.step is not None and not is_multiple(value, self.step):
            return f"must be a multiple of {self.step:g}"
        return None

    @property
    def is_secret(self) -> bool:
        return self.kind == "secret"

    def allowed_values(self) -> tuple[Any, ...]:
        return tuple(option.value for option in self.options)

    def default_value(self) -> Any:
        """The default as plain data (a fresh copy for JSON defaults)."""
        return thaw(self.default)

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether the field's ``when`` condition holds for ``values`` (always, without one)."""
        if not self.when:
            return True
        return all(key in values and same_value(values[key], want)
                   for key, want in self.when.items())

    def to_dict(self) -> dict[str, Any]:
        """The field's attributes as JSON-ready data (secrets have no default by construction)."""
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "options":
                value = [{"value": o.value, "label": o.label, "description": o.description}
                         for o in value]
            elif item.name == "when":
                value = dict(value) if value is not None else None
            elif item.name == "default":
                value = thaw(value)
            data[item.name] = value
        return data


@dataclass(frozen=True)
class ProviderConfigSchema:
    """A provider's settings: its fields, and where their (non-secret) values are stored.

    ``storage`` is ``config`` (the ``[providers.<name>]`` table of config.toml) or ``json_file``
    (``<home>/<name>/config.json``). Secrets are always stored in ``<home>/.env``.
    """

    name: str
    label: str = ""
    storage: Storage = "config"
    docs_url: str = ""
    fields: tuple[ConfigField, ...] = ()

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not PROVIDER_NAME.match(name):
            raise SchemaError(f"provider name {name!r} must start with a letter or digit and hold "
                              "only letters, digits, '-' and '_' (at most 64)")
        if self.storage not in STORAGES:
            raise SchemaError(f"schema {name!r}: storage {self.storage!r} is not one of "
                              f"{', '.join(STORAGES)}")
        for attr in ("label", "docs_url"):
            if not isinstance(getattr(self, attr), str):
                raise SchemaError(f"schema {name!r}: {attr} must be a string")
        if not self.label:
            object.__setattr__(self, "label", name)
        if isinstance(self.fields, str | bytes | Mapping) or not isinstance(self.fields, Iterable):
            raise SchemaError(f"schema {name!r}: fields must be a list of ConfigField")
        items = tuple(self.fields)
        object.__setattr__(self, "fields", items)
        by_key: dict[str, ConfigField] = {}
        for item in items:
            if not isinstance(item, ConfigField):
                raise SchemaError(f"schema {name!r}: {item!r} is not a ConfigField")
            if item.key in by_key:
                raise SchemaError(f"schema {name!r}: field {item.key!r} is declared twice")
            by_key[item.key] = item
        secret_keys: dict[str, str] = {}
        for item in items:
            if item.is_secret:
                other = secret_keys.setdefault(item.env_key or "", item.key)
                if other != item.key:
                    raise SchemaError(f"schema {name!r}: field {item.key!r} uses env_key "
                                      f"{item.env_key!r}, already used by field {other!r}")
            for ref, want in (item.when or {}).items():
                target = by_key.get(ref)
                if target is None:
                    raise SchemaError(f"schema {name!r}: field {item.key!r}: when refers to "
                                      f"unknown field {ref!r}")
                if target.is_secret:
                    raise SchemaError(f"schema {name!r}: field {item.key!r}: when cannot depend "
                                      f"on secret field {ref!r} (its value is never read back)")
                problem = target.check_value(want)
                if problem:
                    raise SchemaError(f"schema {name!r}: field {item.key!r}: when "
                                      f"{ref} = {want!r} can never hold: {ref} {problem}")

    # -- lookups --------------------------------------------------------------------------------

    def field(self, key: str) -> ConfigField:
        for item in self.fields:
            if item.key == key:
                return item
        raise KeyError(key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(item.key for item in self.fields)

    def secret_fields(self) -> tuple[ConfigField, ...]:
        return tuple(item for item in self.fields if item.is_secret)

    def inline_fields(self) -> tuple[ConfigField, ...]:
        return tuple(item for item in self.fields if item.inline)

    def defaults(self) -> dict[str, Any]:
        """The default of every non-secret field that has one."""
        return {f.key: f.default_value() for f in self.fields
                if not f.is_secret and f.default is not None}

    def with_fields(self, *extra: ConfigField) -> ProviderConfigSchema:
        """A copy with ``extra`` fields appended (checked like any schema)."""
        return replace(self, fields=self.fields + tuple(extra))

    # -- export and validation (imported on first use) ---------------------------------------

    def to_json_schema(self) -> dict[str, Any]:
        """The schema as JSON Schema (draft 2020-12)."""
        from memhost.schema.export import to_json_schema

        return to_json_schema(self)

    def ui_schema(self) -> dict[str, Any]:
        """A uiSchema (react-jsonschema-form style) for rendering the settings form."""
        from memhost.schema.export import ui_schema

        return ui_schema(self)

    def validate(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Check a complete values document with jsonschema; ``{field_key: problem}``."""
        from memhost.schema.values import validate

        return validate(self, values)
