"""The config-schema data model: building, self-consistency checks, JSON Schema and uiSchema."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import memhost.schema
from memhost.schema import ConfigField, FieldOption, ProviderConfigSchema, SchemaError
from memhost.schema import model as model_module


def full_schema(**overrides: object) -> ProviderConfigSchema:
    fields = [
        ConfigField("mode", kind="select", default="local",
                    options=["local", FieldOption("cloud", "Cloud", "hosted service")],
                    description="where memories are kept", group="Connection"),
        ConfigField("api_key", kind="secret", env_key="DEMO_API_KEY", required=True,
                    when={"mode": "cloud"}, group="Connection"),
        ConfigField("api_url", placeholder="https://api.example.com", required=True,
                    when={"mode": "cloud"}),
        ConfigField("top_k", kind="number", default=5, min=1, max=50, step=1, inline=True),
        ConfigField("threshold", kind="number", default=0.3, min=0, max=1, step=0.1),
        ConfigField("rerank", kind="bool", default=True),
        ConfigField("filters", kind="json", default={"tags": ["a"]}),
        ConfigField("user_id", default="me"),
    ]
    options: dict[str, object] = {"name": "demo", "label": "Demo", "fields": fields,
                                  "docs_url": "https://example.com/demo"}
    options.update(overrides)
    return ProviderConfigSchema(**options)  # type: ignore[arg-type]


# -- building ---------------------------------------------------------------------------------


def test_exports_from_package() -> None:
    assert memhost.schema.ConfigField is model_module.ConfigField
    assert memhost.schema.ProviderConfigSchema is model_module.ProviderConfigSchema
    assert memhost.schema.FieldOption is model_module.FieldOption
    assert memhost.schema.SchemaError is model_module.SchemaError


def test_fields_are_frozen_and_normalised() -> None:
    schema = full_schema()
    mode = schema.field("mode")
    assert mode.options == (FieldOption("local", "local"), FieldOption("cloud", "Cloud",
                                                                        "hosted service"))
    assert mode.allowed_values() == ("local", "cloud")
    assert schema.field("api_key").label == "Api key"  # prettified from the key
    assert schema.storage == "config" and schema.keys[0] == "mode"
    assert isinstance(schema.fields, tuple)
    with pytest.raises(AttributeError):
        mode.default = "cloud"  # type: ignore[misc]
    assert [f.key for f in schema.inline_fields()] == ["top_k"]
    assert [f.key for f in schema.secret_fields()] == ["api_key"]


def test_options_from_mappings() -> None:
    item = ConfigField("m", kind="select", options=[{"value": "a", "label": "A"}], default="a")
    assert item.options == (FieldOption("a", "A"),)


def test_defaults_are_typed() -> None:
    schema = full_schema()
    assert schema.field("top_k").default == 5 and isinstance(schema.field("top_k").default, int)
    assert schema.field("rerank").default is True
    assert ConfigField("flag", kind="bool").default is False
    assert schema.defaults() == {"mode": "local", "top_k": 5, "threshold": 0.3, "rerank": True,
                                 "filters": {"tags": ["a"]}, "user_id": "me"}


def test_json_default_cannot_be_changed_through_a_copy() -> None:
    item = ConfigField("filters", kind="json", default={"tags": ["a"]})
    copy = item.default_value()
    copy["tags"].append("b")
    assert item.default_value() == {"tags": ["a"]}


@pytest.mark.parametrize(("build", "named"), [
    (lambda: ConfigField("m", kind="select", options=["a", "b"], default="c"), "'m'"),
    (lambda: ConfigField("m", kind="select", options=[], default=None), "'m'"),
    (lambda: ConfigField("m", kind="select", options=["a", "a"]), "'m'"),
    (lambda: ConfigField("k", kind="secret"), "'k'"),
    (lambda: ConfigField("k", kind="secret", env_key="K", default="x"), "'k'"),
    (lambda: ConfigField("k", kind="secret", env_key="not valid"), "'k'"),
    (lambda: ConfigField("k", env_key="K"), "'k'"),
    (lambda: ConfigField("n", kind="number", min=5, max=1), "'n'"),
    (lambda: ConfigField("n", kind="number", default=0, min=1), "'n'"),
    (lambda: ConfigField("n", kind="number", default=99, max=10), "'n'"),
    (lambda: ConfigField("n", kind="number", default="5"), "'n'"),
    (lambda: ConfigField("n", kind="number", default=True), "'n'"),
    (lambda: ConfigField("n", kind="number", step=0), "'n'"),
    (lambda: ConfigField("n", kind="number", default=0.25, step=0.1), "'n'"),
    (lambda: ConfigField("n", kind="number", min="1"), "'n'"),
    (lambda: ConfigField("t", min=1), "'t'"),
    (lambda: ConfigField("t", options=["a"]), "'t'"),
    (lambda: ConfigField("t", default=5), "'t'"),
    (lambda: ConfigField("b", kind="bool", default="true"), "'b'"),
    (lambda: ConfigField("j", kind="json", default="{}"), "'j'"),
    (lambda: ConfigField("j", kind="json", default={"x": {1, 2}}), "'j'"),
    (lambda: ConfigField("x", kind="colour"), "'x'"),
    (lambda: ConfigField("x", when={"x": True}), "'x'"),
    (lambda: ConfigField("x", when={}), "'x'"),
    (lambda: ConfigField("x", required="yes"), "'x'"),
    (lambda: ConfigField("bad key"), "'bad key'"),
])
def test_contradictory_field_is_refused_naming_it(build, named) -> None:
    with pytest.raises(SchemaError) as info:
        build()
    assert named in str(info.value)


@pytest.mark.parametrize(("fields", "named"), [
    ([ConfigField("a"), ConfigField("a", kind="bool")], "'a'"),
    ([ConfigField("a", when={"ghost": "x"})], "'ghost'"),
    ([ConfigField("s", kind="secret", env_key="S"), ConfigField("a", when={"s": "x"})], "'s'"),
    ([ConfigField("m", kind="select", options=["x", "y"]), ConfigField("a", when={"m": "z"})],
     "'a'"),
    ([ConfigField("f", kind="bool"), ConfigField("a", when={"f": "yes"})], "'a'"),
    ([ConfigField("s", kind="secret", env_key="K"), ConfigField("t", kind="secret", env_key="K")],
     "'t'"),
])
def test_contradictory_schema_is_refused_naming_the_field(fields, named) -> None:
    with pytest.raises(SchemaError) as info:
        ProviderConfigSchema("demo", fields=fields)
    assert named in str(info.value)


@pytest.mark.parametrize("kwargs", [
    {"name": "../etc"}, {"name": ".hidden"}, {"name": ""}, {"name": "demo", "storage": "yaml"},
    {"name": "demo", "fields": "abc"}, {"name": "demo", "fields": [{"key": "x"}]},
])
def test_bad_schema_attributes_are_refused(kwargs) -> None:
    with pytest.raises(SchemaError):
        ProviderConfigSchema(**kwargs)


def test_when_holds_only_for_the_exact_value() -> None:
    item = full_schema().field("api_url")
    assert item.applies({"mode": "cloud"})
    assert not item.applies({"mode": "local"})
    assert not item.applies({})
    flag = ConfigField("x", when={"on": True})
    assert not flag.applies({"on": 1})


def test_model_is_pure_data() -> None:
    """model.py imports nothing from memhost outside memhost.schema, and importing
    memhost.schema loads no runtime module."""
    tree = ast.parse(Path(model_module.__file__).read_text(encoding="utf-8"))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for a in node.names]
    outside = [name for name in imported if name and name.startswith("memhost")
               and not name.startswith("memhost.schema.")]
    assert not outside, outside
    code = ("import sys, memhost.schema as s; s.ConfigField('x'); "
            "print(sorted(m for m in sys.modules if m.startswith(('memhost', 'jsonschema', "
            "'tomlkit', 'pydantic'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout))  # noqa: S307 - our own printed list
    # memhost.lazy: the few lines that import a package's other names on first use
    assert loaded <= {"memhost", "memhost.errors", "memhost.lazy", "memhost.schema",
                      "memhost.schema.model"}, loaded


# -- JSON Schema ------------------------------------------------------------------------------


def test_json_schema_is_valid_draft_2020_12() -> None:
    exported = full_schema().to_json_schema()
    Draft202012Validator.check_schema(exported)
    assert exported["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert exported["type"] == "object" and exported["additionalProperties"] is False
    json.dumps(exported)  # JSON-ready


def test_json_schema_per_kind() -> None:
    props = full_schema().to_json_schema()["properties"]
    assert props["api_key"] == {"title": "Api key", "type": "string", "writeOnly": True,
                                "format": "password"}
    assert props["mode"]["enum"] == ["local", "cloud"] and props["mode"]["default"] == "local"
    assert props["mode"]["type"] == "string"
    assert props["top_k"] == {"title": "Top k", "type": "number", "minimum": 1, "maximum": 50,
                              "multipleOf": 1, "default": 5}
    assert props["rerank"]["type"] == "boolean" and props["rerank"]["default"] is True
    assert props["filters"]["type"] == ["object", "array"]
    assert props["user_id"]["type"] == "string"
    assert props["mode"]["description"] == "where memories are kept"


def test_json_schema_when_becomes_if_then() -> None:
    exported = full_schema().to_json_schema()
    assert "api_key" not in exported.get("required", [])  # conditional, so not at the top
    rules = exported["allOf"]
    assert {"if": {"properties": {"mode": {"const": "cloud"}}, "required": ["mode"]},
            "then": {"required": ["api_url"]}}.items() <= next(
        r for r in rules if r["then"] == {"required": ["api_url"]}).items()
    validator = Draft202012Validator(exported)
    assert validator.is_valid({"mode": "local"})
    assert not validator.is_valid({"mode": "cloud"})
    assert validator.is_valid({"mode": "cloud", "api_url": "u", "api_key": "k"})


def test_required_without_when_is_required_at_the_top() -> None:
    schema = ProviderConfigSchema("demo", fields=[ConfigField("url", required=True)])
    assert schema.to_json_schema()["required"] == ["url"]


def test_ui_schema() -> None:
    ui = full_schema().ui_schema()
    assert ui["ui:order"] == list(full_schema().keys)
    assert ui["api_key"]["ui:widget"] == "password"
    assert ui["rerank"]["ui:widget"] == "checkbox"
    assert ui["filters"]["ui:widget"] == "textarea"
    assert ui["mode"]["ui:widget"] == "select"
    assert ui["mode"]["ui:enumNames"] == ["local", "Cloud"]
    assert ui["mode"]["ui:help"] == "where memories are kept"
    assert ui["api_url"]["ui:placeholder"] == "https://api.example.com"
    assert ui["api_url"]["ui:options"]["when"] == {"mode": "cloud"}
    assert ui["top_k"]["ui:options"] == {"step": 1, "inline": True}
    assert ui["ui:groups"] == [{"title": "Connection", "fields": ["mode", "api_key"]}]


# -- validating values ------------------------------------------------------------------------


def test_validate_keys_errors_by_field() -> None:
    errors = full_schema().validate({"mode": "mars", "top_k": 99, "threshold": 0.35,
                                     "rerank": "yes", "stray": 1})
    assert errors == {"mode": "must be one of: local, cloud", "top_k": "must be at most 50",
                      "threshold": "must be a multiple of 0.1", "rerank": "must be true or false",
                      "stray": "is not a field of this provider"}


def test_validate_float_steps_and_conditions() -> None:
    schema = full_schema()
    assert schema.validate({"threshold": 0.3, "top_k": 7}) == {}  # 0.3 / 0.1 is not exact
    assert schema.validate({"mode": "cloud"}) == {"api_key": "is required",
                                                  "api_url": "is required"}


def test_validate_never_quotes_a_secret() -> None:
    schema = ProviderConfigSchema("demo", fields=[
        ConfigField("token", kind="secret", env_key="T")])
    errors = schema.validate({"token": 1234567})
    assert errors == {"token": "must be text"}
    assert "1234567" not in json.dumps(errors)
