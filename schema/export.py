"""A :class:`~memhost.schema.model.ProviderConfigSchema` as JSON Schema and as a uiSchema.

The JSON Schema (draft 2020-12) describes one provider's complete settings object, secrets
included: a form generator can render it, and :mod:`memhost.schema.values` validates values
against it. The uiSchema follows react-jsonschema-form's conventions (``ui:widget``,
``ui:order``, ``ui:help``, ``ui:placeholder``) and adds ``ui:groups`` for fields that share a
group.
"""

from __future__ import annotations

from typing import Any

from memhost.schema.model import ConfigField, ProviderConfigSchema

DIALECT = "https://json-schema.org/draft/2020-12/schema"

WIDGETS = {
    "text": "text",
    "select": "select",
    "secret": "password",
    "bool": "checkbox",
    "number": "updown",
    "json": "textarea",
}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


def field_json_schema(item: ConfigField) -> dict[str, Any]:
    """The JSON Schema of one field's value."""
    out: dict[str, Any] = {"title": item.label}
    if item.description:
        out["description"] = item.description
    kind = item.kind
    if kind == "text":
        out["type"] = "string"
    elif kind == "secret":
        out.update(type="string", writeOnly=True, format="password")
    elif kind == "bool":
        out["type"] = "boolean"
    elif kind == "json":
        out["type"] = ["object", "array"]
    elif kind == "select":
        values = list(item.allowed_values())
        types = sorted({_json_type(v) for v in values})
        if len(types) == 1:
            out["type"] = types[0]
        out["enum"] = values
    else:  # number
        out["type"] = "number"
        if item.min is not None:
            out["minimum"] = item.min
        if item.max is not None:
            out["maximum"] = item.max
        if item.step is not None:
            out["multipleOf"] = item.step
    if not item.is_secret and item.default is not None:
        out["default"] = item.default_value()
    return out


def _condition(when: Any) -> dict[str, Any]:
    return {"properties": {key: {"const": value} for key, value in when.items()},
            "required": list(when)}


def to_json_schema(schema: ProviderConfigSchema) -> dict[str, Any]:
    """Every field is a property (so a stored value is type-checked even while its ``when``
    condition is off); a field with ``when`` adds an ``if``/``then`` to ``allOf`` that makes it
    required while the condition holds (when the field is required) and records the condition."""
    out: dict[str, Any] = {
        "$schema": DIALECT,
        "title": schema.label,
        "type": "object",
        "properties": {item.key: field_json_schema(item) for item in schema.fields},
        "additionalProperties": False,
    }
    if schema.docs_url:
        out["$comment"] = f"Documentation: {schema.docs_url}"
    required = [item.key for item in schema.fields if item.required and not item.when]
    if required:
        out["required"] = required
    conditional = []
    for item in schema.fields:
        if not item.when:
            continue
        shown = ", ".join(f"{key} = {value!r}" for key, value in item.when.items())
        conditional.append({
            "$comment": f"{item.key} applies only when {shown}",
            "if": _condition(item.when),
            "then": {"required": [item.key]} if item.required else {},
        })
    if conditional:
        out["allOf"] = conditional
    return out


def ui_schema(schema: ProviderConfigSchema) -> dict[str, Any]:
    out: dict[str, Any] = {"ui:order": list(schema.keys)}
    groups: dict[str, list[str]] = {}
    for item in schema.fields:
        entry: dict[str, Any] = {"ui:widget": WIDGETS[item.kind]}
        if item.description:
            entry["ui:help"] = item.description
        if item.placeholder:
            entry["ui:placeholder"] = item.placeholder
        if item.kind == "select":
            entry["ui:enumNames"] = [option.label for option in item.options]
        options: dict[str, Any] = {}
        if item.kind == "number" and item.step is not None:
            options["step"] = item.step
        if item.group:
            options["group"] = item.group
            groups.setdefault(item.group, []).append(item.key)
        if item.inline:
            options["inline"] = True
        if item.when:
            options["when"] = dict(item.when)
        if options:
            entry["ui:options"] = options
        out[item.key] = entry
    if groups:
        out["ui:groups"] = [{"title": title, "fields": keys} for title, keys in groups.items()]
    return out
