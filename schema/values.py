"""Turning what a user or a form sent into typed values, and checking them against the schema.

:func:`coerce` accepts the loose shapes that reach a settings service (command-line strings, form
fields, JSON bodies) and returns the typed value, or raises :class:`ValueError` with a message
that says what is expected. :func:`validate` checks a whole values document with ``jsonschema``
against :meth:`ProviderConfigSchema.to_json_schema` and returns the problems keyed by field.
Messages never repeat a secret's value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from memhost import jsondoc
from memhost.schema.model import ConfigField, ProviderConfigSchema, is_multiple, same_value
from memhost.security.text import NOT_TEXT, half_character

TRUE = frozenset({"true", "yes", "on", "1"})
FALSE = frozenset({"false", "no", "off", "0"})
INTEGER = re.compile(r"^[+-]?\d+$")


def is_blank(value: Any) -> bool:
    """``None`` or a string holding only whitespace: "no value", which means the default."""
    return value is None or (isinstance(value, str) and not value.strip())


def coerce(item: ConfigField, raw: Any) -> Any:
    """The typed value of ``raw`` for ``item`` (which must not be blank)."""
    if half_character(raw) is not None:  # config.toml and .env are UTF-8
        raise ValueError(NOT_TEXT)
    kind = item.kind
    if kind == "text":
        if not isinstance(raw, str):
            raise ValueError("must be text")
        return raw
    if kind == "secret":
        if not isinstance(raw, str):
            raise ValueError("must be text")
        return raw.strip()
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip().lower() in TRUE | FALSE:
            return raw.strip().lower() in TRUE
        raise ValueError("must be true or false")
    if kind == "number":
        return _number(raw)
    if kind == "json":
        return _json(raw)
    return _select(item, raw)


def _number(raw: Any) -> int | float:
    if isinstance(raw, bool):
        raise ValueError("must be a number, not true/false")
    if isinstance(raw, str):
        text = raw.strip()
        try:
            raw = int(text) if INTEGER.match(text) else float(text)
        except ValueError:
            raise ValueError(f"must be a number, not {raw!r}") from None
    if not isinstance(raw, int | float) or not math.isfinite(raw):
        raise ValueError("must be a finite number")
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    return raw


def _json(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            raw = jsondoc.loads(raw)
        except ValueError as exc:
            raise ValueError(f"is not valid JSON ({exc})") from None
    if isinstance(raw, tuple):
        raw = list(raw)
    if not isinstance(raw, dict | list):
        raise ValueError("must be a JSON object or array")
    try:
        return json.loads(json.dumps(raw, allow_nan=False))
    except (TypeError, ValueError):
        raise ValueError("must hold only JSON data") from None


def _select(item: ConfigField, raw: Any) -> Any:
    allowed = item.allowed_values()
    for value in allowed:
        if same_value(raw, value):
            return value
    if isinstance(raw, str):  # a command line or a form sends every choice as text
        text = raw.strip()
        matches = [v for v in allowed
                   if (str(v).lower() if isinstance(v, bool) else str(v)) == text]
        if len(matches) == 1:
            return matches[0]
    raise ValueError("must be one of: " + ", ".join(str(v) for v in allowed))


def contains_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(contains_null(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_null(v) for v in value)
    return False


# -- validation with jsonschema --------------------------------------------------------------


def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, ValidationError, validators

    def multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # The stock check divides floats exactly, so 0.3 is "not a multiple of" 0.1.
        if validator.is_type(instance, "number") and not is_multiple(instance, step):
            yield ValidationError(f"{instance!r} is not a multiple of {step}")

    return validators.extend(Draft202012Validator, {"multipleOf": multiple_of})


def _message(item: ConfigField, error: Any) -> str:
    kind, rule = item.kind, error.validator
    if rule == "type":
        return {"text": "must be text", "secret": "must be text", "bool": "must be true or false",
                "number": "must be a number", "json": "must be a JSON object or array",
                }.get(kind, "has the wrong type")
    if rule == "enum":
        return "must be one of: " + ", ".join(str(v) for v in item.allowed_values())
    if rule == "minimum":
        return f"must be at least {error.validator_value:g}"
    if rule == "maximum":
        return f"must be at most {error.validator_value:g}"
    if rule == "multipleOf":
        return f"must be a multiple of {error.validator_value:g}"
    return "is not valid" if item.is_secret else error.message


def validate(schema: ProviderConfigSchema, values: Mapping[str, Any]) -> dict[str, str]:
    """Check a complete values document; ``{field_key: problem}`` (empty when valid).

    Secrets take part as whatever string stands for them: their values are never quoted back.
    """
    validator = _validator_class()(schema.to_json_schema())
    known = set(schema.keys)
    errors: dict[str, str] = {}
    for error in sorted(validator.iter_errors(dict(values)), key=lambda e: list(e.path)):
        if error.validator == "required":
            for key in error.validator_value:
                if isinstance(error.instance, Mapping) and key not in error.instance:
                    errors.setdefault(key, "is required")
        elif error.validator == "additionalProperties":
            for key in error.instance:
                if key not in known:
                    errors.setdefault(key, "is not a field of this provider")
        elif error.path and error.path[0] in known:
            key = error.path[0]
            errors.setdefault(key, _message(schema.field(key), error))
        else:
            errors.setdefault("", error.message)
    return errors
