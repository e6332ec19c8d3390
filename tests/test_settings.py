"""The settings service: describe, update, clear_secret, values, and the two value stores."""

from __future__ import annotations

import json
import stat
import textwrap
from pathlib import Path

import pytest

from memhost.config import load_config, update_config
from memhost.errors import MemhostError, ProviderError
from memhost.schema import ConfigField, FieldOption, ProviderConfigSchema
from memhost.schema.envstore import EnvStore
from memhost.schema.settings import SettingsError, SettingsService

SECRET = "sk-test-ZXQ9-do-not-leak-8d1f"
OTHER_SECRET = "second-secret-value-77"


def schema(storage: str = "config", name: str = "demo") -> ProviderConfigSchema:
    return ProviderConfigSchema(name=name, label="Demo", storage=storage,  # type: ignore[arg-type]
                                docs_url="https://example.com", fields=[
        ConfigField("mode", kind="select", default="local",
                    options=["local", FieldOption("cloud", "Cloud")]),
        ConfigField("api_key", kind="secret", env_key="DEMO_API_KEY"),
        ConfigField("url", required=True, when={"mode": "cloud"}),
        ConfigField("top_k", kind="number", default=5, min=1, max=50),
        ConfigField("ratio", kind="number", min=0, max=1, step=0.1),
        ConfigField("rerank", kind="bool", default=False),
        ConfigField("filters", kind="json"),
        ConfigField("user_id", default="me"),
        ConfigField("region", required=True),
    ])


def service(home: Path, storage: str = "config") -> SettingsService:
    s = schema(storage)
    return SettingsService(home, schema_for=lambda name: s if name == "demo" else None)


def field_of(described: dict, key: str) -> dict:
    return next(f for f in described["fields"] if f["key"] == key)


def snapshot(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes()
            for p in sorted(home.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


@pytest.fixture(autouse=True)
def _no_env_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEMO_API_KEY", raising=False)


# -- describe ---------------------------------------------------------------------------------


def test_describe_on_a_fresh_home(home: Path) -> None:
    described = service(home).describe("demo")
    assert described["name"] == "demo" and described["label"] == "Demo"
    assert described["docs_url"] == "https://example.com" and described["storage"] == "config"
    assert described["active"] is False and described["has_schema"] is True
    assert [f["key"] for f in described["fields"]] == list(schema().keys)
    mode = field_of(described, "mode")
    assert mode["value"] == "local" and mode["source"] == "default" and mode["kind"] == "select"
    assert mode["options"][1] == {"value": "cloud", "label": "Cloud", "description": ""}
    assert field_of(described, "top_k")["value"] == 5
    assert field_of(described, "ratio")["value"] is None
    assert field_of(described, "ratio")["source"] == "unset"
    key = field_of(described, "api_key")
    assert key["is_set"] is False and "value" not in key and "default" not in key
    assert key["env_key"] == "DEMO_API_KEY"
    assert field_of(described, "url")["visible"] is False
    assert described["missing"] == ["region"]  # url is required only in cloud mode
    assert described["json_schema"]["properties"]["api_key"]["writeOnly"] is True
    assert described["ui_schema"]["ui:order"][0] == "mode"
    json.dumps(described)
    assert not home.joinpath("config.toml").exists()  # describing writes nothing


def test_active_follows_memory_provider(home: Path) -> None:
    update_config(home, {("memory", "provider"): "demo"})
    assert service(home).describe("demo")["active"] is True
    update_config(home, {("memory", "provider"): "other"})
    assert service(home).describe("demo")["active"] is False


def test_provider_without_schema(home: Path) -> None:
    svc = SettingsService(home, schema_for=lambda name: None)
    described = svc.describe("plain")
    assert described["has_schema"] is False and described["fields"] == []
    with pytest.raises(SettingsError, match="declares no config schema"):
        svc.update("plain", {"x": 1})


def test_schema_name_must_match(home: Path) -> None:
    svc = SettingsService(home, schema_for=lambda name: schema(name="other"))
    with pytest.raises(SettingsError, match="'other'"):
        svc.describe("demo")


@pytest.mark.parametrize("name", ["../etc", "a/b", "", ".env"])
def test_invalid_provider_names_are_refused(home: Path, name: str) -> None:
    called = []
    svc = SettingsService(home, schema_for=lambda n: called.append(n))  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="not a valid provider name"):
        svc.update(name, {"x": "1"})
    assert called == []


# -- update: what changes ---------------------------------------------------------------------


def test_only_sent_keys_change(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"mode": "cloud", "url": "https://u", "top_k": "7"})
    svc.update("demo", {"top_k": 9})
    table = load_config(home).providers["demo"]
    assert table == {"mode": "cloud", "url": "https://u", "top_k": 9}


def test_coercion(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"rerank": "true", "top_k": "12", "ratio": 0.30000000000000004,
                        "filters": '{"tags": ["x"]}'})
    table = load_config(home).providers["demo"]
    assert table["rerank"] is True
    assert table["top_k"] == 12 and isinstance(table["top_k"], int)
    assert table["filters"] == {"tags": ["x"]}
    svc.update("demo", {"top_k": 3.0, "ratio": "0.5", "rerank": False, "filters": [1, 2]})
    table = load_config(home).providers["demo"]
    assert table["top_k"] == 3 and isinstance(table["top_k"], int)
    assert table["ratio"] == 0.5 and table["rerank"] is False and table["filters"] == [1, 2]


def test_blank_non_secret_goes_back_to_default(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"top_k": 8, "user_id": "alice", "rerank": True})
    described = svc.update("demo", {"top_k": "", "user_id": None, "rerank": "  "})
    assert "top_k" not in load_config(home).providers["demo"]
    assert load_config(home).providers["demo"] == {}
    assert field_of(described, "top_k")["value"] == 5
    assert field_of(described, "top_k")["source"] == "default"
    assert field_of(described, "user_id")["value"] == "me"


def test_saving_never_changes_the_active_provider(home: Path) -> None:
    update_config(home, {("memory", "provider"): "else"})
    svc = service(home)
    svc.update("demo", {"mode": "local"})
    svc.update("demo", {"api_key": SECRET})
    assert load_config(home).memory.provider == "else"


# -- secrets ----------------------------------------------------------------------------------


def test_secret_goes_to_env_store_only(home: Path) -> None:
    svc = service(home, "config")
    described = svc.update("demo", {"api_key": SECRET, "mode": "cloud", "url": "u"})
    assert EnvStore(home).get("DEMO_API_KEY") == SECRET
    assert field_of(described, "api_key")["is_set"] is True
    assert stat.S_IMODE(home.joinpath(".env").stat().st_mode) == 0o600
    assert SECRET not in home.joinpath("config.toml").read_text()
    assert SECRET not in json.dumps(svc.describe("demo"))
    assert "api_key" not in load_config(home).providers["demo"]


def test_secret_never_in_json_file_store_or_describe(home: Path) -> None:
    svc = service(home, "json_file")
    svc.update("demo", {"api_key": SECRET, "top_k": 4})
    path = home / "demo" / "config.json"
    assert json.loads(path.read_text()) == {"top_k": 4}
    assert SECRET not in path.read_text()
    described = svc.describe("demo")
    assert SECRET not in json.dumps(described)
    # The schema's attributes plus is_set: no value, no masked copy, no length.
    assert set(field_of(described, "api_key")) == {
        "key", "label", "kind", "description", "placeholder", "options", "env_key", "required",
        "min", "max", "step", "group", "inline", "when", "visible", "error", "is_set"}


def test_secret_left_out_or_blank_stays(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"api_key": SECRET})
    svc.update("demo", {"mode": "local"})
    svc.update("demo", {"api_key": ""})
    svc.update("demo", {"api_key": None})
    svc.update("demo", {"api_key": "   "})
    assert EnvStore(home).get("DEMO_API_KEY") == SECRET


def test_secret_is_stripped_and_replaced(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"api_key": f"  {SECRET}\n"})
    assert EnvStore(home).get("DEMO_API_KEY") == SECRET
    svc.update("demo", {"api_key": OTHER_SECRET})
    assert EnvStore(home).get("DEMO_API_KEY") == OTHER_SECRET
    assert SECRET not in home.joinpath(".env").read_text()


def test_clear_secret(home: Path) -> None:
    svc = service(home)
    svc.update("demo", {"api_key": SECRET})
    described = svc.clear_secret("demo", "api_key")
    assert field_of(described, "api_key")["is_set"] is False
    assert SECRET not in home.joinpath(".env").read_text()
    with pytest.raises(SettingsError) as info:
        svc.clear_secret("demo", "mode")
    assert "mode" in info.value.errors
    with pytest.raises(SettingsError) as info:
        svc.clear_secret("demo", "nope")
    assert "nope" in info.value.errors


def test_secret_from_process_environment_counts_as_set(home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_API_KEY", OTHER_SECRET)
    svc = service(home)
    assert field_of(svc.describe("demo"), "api_key")["is_set"] is True
    assert OTHER_SECRET not in json.dumps(svc.describe("demo"))
    assert svc.values("demo")["api_key"] == OTHER_SECRET


def test_secret_written_into_config_by_hand_is_flagged_not_shown(home: Path) -> None:
    home.joinpath("config.toml").write_text(f'[providers.demo]\napi_key = "{SECRET}"\n')
    svc = service(home)
    described = svc.describe("demo")
    key = field_of(described, "api_key")
    assert key["is_set"] is False and "config.toml" in key["error"]
    assert SECRET not in json.dumps(described)
    assert svc.values("demo")["api_key"] is None  # never read from the config file


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "errors"), [
    ({"mode": "mars"}, {"mode": "must be one of: local, cloud"}),
    ({"top_k": 0}, {"top_k": "must be at least 1"}),
    ({"top_k": "many"}, {"top_k": "must be a number, not 'many'"}),
    ({"top_k": True}, {"top_k": "must be a number, not true/false"}),
    ({"ratio": 0.25}, {"ratio": "must be a multiple of 0.1"}),
    ({"rerank": "maybe"}, {"rerank": "must be true or false"}),
    ({"filters": "5"}, {"filters": "must be a JSON object or array"}),
    ({"filters": "{oops"}, {"filters": None}),
    ({"filters": {"a": None}}, {"filters": None}),
    ({"user_id": 5}, {"user_id": "must be text"}),
    ({"region": ""}, {"region": "is required"}),
    ({"api_key": 12345}, {"api_key": "must be text"}),
    ({"colour": "red", "api_key": SECRET}, {"colour": None}),
])
def test_invalid_update_is_refused_whole_and_writes_nothing(home: Path, values: dict,
                                                            errors: dict) -> None:
    svc = service(home)
    home.joinpath("config.toml").write_text("# keep\n[providers.demo]\nuser_id = \"bob\"\n")
    svc.update("demo", {"api_key": OTHER_SECRET})
    before = snapshot(home)
    with pytest.raises(SettingsError) as info:
        svc.update("demo", {**values, "top_k": 20} if "top_k" not in values else values)
    assert isinstance(info.value, MemhostError)
    assert set(info.value.errors) == set(errors)
    for key, message in errors.items():
        if message is not None:
            assert info.value.errors[key] == message
        assert key in str(info.value)
    assert snapshot(home) == before
    assert SECRET not in str(info.value)


def test_all_problems_are_reported_together(home: Path) -> None:
    svc = service(home)
    with pytest.raises(SettingsError) as info:
        svc.update("demo", {"mode": "x", "top_k": 500, "ghost": 1, "api_key": SECRET})
    assert set(info.value.errors) == {"mode", "top_k", "ghost"}
    assert "mode, api_key, url" in info.value.errors["ghost"]  # names the known fields
    assert not home.joinpath(".env").exists()
    assert not home.joinpath("config.toml").exists()


def test_conditional_requirement_does_not_block_partial_saves(home: Path) -> None:
    svc = service(home)
    described = svc.update("demo", {"mode": "cloud"})  # url comes in a later save
    assert described["missing"] == ["url", "region"]
    described = svc.update("demo", {"url": "https://u", "region": "eu"})
    assert described["missing"] == []


def test_null_in_json_allowed_for_json_file_storage(home: Path) -> None:
    svc = service(home, "json_file")
    svc.update("demo", {"filters": {"a": None}})
    assert json.loads((home / "demo" / "config.json").read_text()) == {"filters": {"a": None}}


def test_update_must_be_a_mapping(home: Path) -> None:
    with pytest.raises(SettingsError):
        service(home).update("demo", [("mode", "x")])  # type: ignore[arg-type]


# -- stores -----------------------------------------------------------------------------------


def test_config_store_keeps_comments_and_order(home: Path) -> None:
    original = textwrap.dedent("""\
        # memhost settings
        [memory]
        nudge_interval = 4  # fewer reviews

        # the demo provider
        [providers.demo]
        # which user
        user_id = "bob"
        top_k = 3  # small
        """)
    home.joinpath("config.toml").write_text(original)
    service(home).update("demo", {"top_k": 9, "rerank": True})
    text = home.joinpath("config.toml").read_text()
    assert text == original.replace("top_k = 3  # small", "top_k = 9  # small") + "rerank = true\n"


def test_config_store_saves_while_another_key_is_wrong_and_refuses_what_toml_cannot_read(
        home: Path) -> None:
    # A wrong key elsewhere does not block a provider's settings (nor its repair)...
    home.joinpath("config.toml").write_text("[memory]\nnudge_interval = 'x'\n")
    service(home).update("demo", {"top_k": 9})
    assert home.joinpath("config.toml").read_text() == (
        "[memory]\nnudge_interval = 'x'\n\n[providers.demo]\ntop_k = 9\n")
    # ...but a file that is not TOML is never rewritten.
    home.joinpath("config.toml").write_text("[memory\nnudge_interval = 3\n")
    before = snapshot(home)
    with pytest.raises(MemhostError, match="not valid TOML"):
        service(home).update("demo", {"top_k": 9})
    assert snapshot(home) == before


def test_json_file_store_is_private_and_atomic(home: Path) -> None:
    svc = service(home, "json_file")
    svc.update("demo", {"top_k": 4, "mode": "cloud"})
    path = home / "demo" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not list(path.parent.glob(".config.json.*.tmp"))
    svc.update("demo", {"top_k": ""})
    assert json.loads(path.read_text()) == {"mode": "cloud"}
    assert not home.joinpath("config.toml").exists()


def test_unreadable_json_file_is_refused_not_overwritten(home: Path) -> None:
    path = home / "demo" / "config.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(MemhostError, match="not valid JSON"):
        service(home, "json_file").update("demo", {"top_k": 4})
    assert path.read_text() == "{not json"


def test_stored_value_that_breaks_the_schema_is_reported(home: Path) -> None:
    home.joinpath("config.toml").write_text('[providers.demo]\nmode = "mars"\nstray = 1\n')
    described = service(home).describe("demo")
    assert field_of(described, "mode")["error"] == "the stored value must be one of: local, cloud"
    assert described["unknown_keys"] == ["stray"]
    # An untouched broken value does not block saving another field.
    service(home).update("demo", {"top_k": 2})


# -- values (runtime view) --------------------------------------------------------------------


def test_values_runtime_view(home: Path) -> None:
    svc = service(home)
    assert svc.values("demo") == {"mode": "local", "top_k": 5, "rerank": False, "user_id": "me",
                                  "api_key": None}
    svc.update("demo", {"api_key": SECRET, "top_k": 7})
    values = svc.values("demo")
    assert values["api_key"] == SECRET and values["top_k"] == 7 and values["mode"] == "local"


def test_values_without_schema_is_the_raw_table(home: Path) -> None:
    home.joinpath("config.toml").write_text('[providers.plain]\nx = 1\n')
    assert SettingsService(home, schema_for=lambda n: None).values("plain") == {"x": 1}


# -- the default schema lookup: provider discovery --------------------------------------------


def write_user_provider(home: Path, name: str = "demo", schema_source: str | None = None) -> Path:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        f'name = "{name}"\nversion = "0.1.0"\nentry = "provider:Demo"\n')
    folder.joinpath("__init__.py").write_text("raise RuntimeError('package imported')\n")
    folder.joinpath("provider.py").write_text("raise RuntimeError('provider imported')\n")
    folder.joinpath("config_schema.py").write_text(schema_source or textwrap.dedent(f"""\
        from memhost.schema import ConfigField, ProviderConfigSchema

        CONFIG_SCHEMA = ProviderConfigSchema(name="{name}", fields=[
            ConfigField("top_k", kind="number", default=5),
            ConfigField("token", kind="secret", env_key="DEMO_TOKEN"),
        ])
        """))
    return folder


def test_default_schema_lookup_goes_through_discovery(home: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    monkeypatch.delenv("DEMO_TOKEN", raising=False)
    write_user_provider(home)
    svc = SettingsService(home)
    assert [f["key"] for f in svc.describe("demo")["fields"]] == ["top_k", "token"]
    svc.update("demo", {"top_k": 6, "token": SECRET})
    assert load_config(home).providers["demo"] == {"top_k": 6}
    assert SECRET not in json.dumps(svc.describe("demo"))
    with pytest.raises(ProviderError):
        svc.describe("nosuch")


def test_default_lookup_reports_a_broken_schema_file(home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    write_user_provider(home, schema_source="import memhost.manager\n")
    with pytest.raises(MemhostError, match="config_schema.py: line 1: imports 'memhost.manager'"):
        SettingsService(home).describe("demo")


@pytest.mark.parametrize("value", ["line\rbreak", "a\u2028b", "form\x0cfeed", 'q"uote\\back'])
def test_secrets_with_odd_characters_round_trip(home: Path, value: str) -> None:
    svc = service(home)
    svc.update("demo", {"api_key": value})
    EnvStore(home).set("OTHER", "kept")  # a later write must not tear the line apart
    assert svc.values("demo")["api_key"] == value
    assert EnvStore(home).get("OTHER") == "kept"
    assert home.joinpath(".env").read_text(encoding="utf-8").count("\n") == 2
