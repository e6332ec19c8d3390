"""``memhost config``: show, get, set, unset and schema, run as the real console script."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memhost.config import Config, load_config
from cli_runner import run_memhost

SECRET = "sk-cli-3f9Q-never-print-me-41"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "config.md"

COMMENTED = textwrap.dedent("""\
    # memhost settings for this machine
    [memory]
    # review every few turns
    nudge_interval = 4  # was 10
    memory_char_limit = 3000

    [review]
    model = "small-model"  # cheap one
    """)

SCHEMA = textwrap.dedent("""\
    from memhost.schema import ConfigField, FieldOption, ProviderConfigSchema

    CONFIG_SCHEMA = ProviderConfigSchema(
        name="demo",
        label="Demo memory",
        docs_url="https://example.com/demo",
        fields=[
            ConfigField("mode", kind="select", default="local",
                        options=["local", FieldOption("cloud", "Hosted")]),
            ConfigField("api_key", kind="secret", env_key="DEMO_API_KEY",
                        description="the service's key"),
            ConfigField("top_k", kind="number", default=5, min=1, max=50),
            ConfigField("rerank", kind="bool"),
        ],
    )
    """)


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "DEMO_API_KEY"}
    environ.update(MEMHOST_HOME=str(home), MEMHOST_DISABLE_ENTRYPOINTS="1")
    return environ


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_memhost(["config", *args], env=env, input=stdin, timeout=60)


def add_provider(home: Path, name: str = "demo", schema: str = SCHEMA) -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        f'name = "{name}"\nversion = "0.1.0"\nentry = "provider:Demo"\n')
    folder.joinpath("provider.py").write_text("class Demo:\n    pass\n")
    folder.joinpath("config_schema.py").write_text(schema)


# -- memhost's own keys -----------------------------------------------------------------------


def test_set_keeps_comments_and_order(home: Path, env: dict[str, str]) -> None:
    config = home / "config.toml"
    config.write_text(COMMENTED)
    result = run(env, "set", "memory.nudge_interval", "7")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "memory.nudge_interval = 7"
    assert config.read_text() == COMMENTED.replace("nudge_interval = 4", "nudge_interval = 7")
    assert run(env, "set", "review.timeout", "30").returncode == 0
    assert config.read_text() == COMMENTED.replace("nudge_interval = 4", "nudge_interval = 7") \
        + "timeout = 30.0\n"
    assert load_config(home).review.timeout == 30.0


def test_set_bool_and_string(home: Path, env: dict[str, str]) -> None:
    assert run(env, "set", "memory.write_approval", "true").returncode == 0
    assert run(env, "set", "review.model", "123").returncode == 0
    config = load_config(home)
    assert config.memory.write_approval is True and config.review.model == "123"


@pytest.mark.parametrize(("args", "message"), [
    (("set", "memory.nudge_interval", "often"), "nudge_interval"),
    (("set", "memory.nudge_interval", "-3"), "at least 0"),
    (("set", "memory.prefetch_timeout", "9999"), "at most 600"),
    (("set", "memory.write_approval", "perhaps"), "true or false"),
    (("set", "memory.nudge_intervl", "3"), "did you mean memory.nudge_interval"),
    (("set", "colour.theme", "dark"), "unknown key"),
    (("set", "memory", "3"), "TABLE.KEY"),
    (("set", "memory.nudge_interval"), "give a value"),
    (("set", "memory.provider", "nosuchprovider"), "no memory provider is named"),
    (("unset", "memory.bogus"), "unknown key"),
    # A byte that is not UTF-8 in an argument reaches sys.argv as a lone surrogate.
    (("set", "review.base_url", "http://x\udcff"), "not UTF-8"),
    (("set", "memory.reserved_tools", '["a\udcff"]'), "not UTF-8"),
])
def test_bad_set_is_refused_and_file_unchanged(home: Path, env: dict[str, str], args: tuple,
                                               message: str) -> None:
    config = home / "config.toml"
    config.write_text(COMMENTED)
    result = run(env, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert config.read_text() == COMMENTED


def test_a_refused_value_is_reported_as_not_saved(home: Path, env: dict[str, str]) -> None:
    """The refusal names the value and says the file is as it was; it does not tell the user
    to fix a file that never held the value."""
    config = home / "config.toml"
    config.write_text(COMMENTED)
    result = run(env, "set", "memory.nudge_interval", "-3")
    assert result.returncode == 2
    assert "[memory] nudge_interval = -3 is not valid; expected a number of at least 0" in (
        result.stderr)
    assert "Nothing was saved" in result.stderr and "Fix it with" not in result.stderr
    assert config.read_text() == COMMENTED
    unknown = run(env, "set", "memory.zzz", "1").stderr
    assert "unknown key memory.zzz. Known keys of [memory]:" in unknown


def test_get(home: Path, env: dict[str, str]) -> None:
    (home / "config.toml").write_text(COMMENTED)
    assert run(env, "get", "memory.nudge_interval").stdout == "4\n"
    assert run(env, "get", "review.model").stdout == "small-model\n"
    assert run(env, "get", "memory.write_approval").stdout == "false\n"
    data = json.loads(run(env, "get", "memory.user_char_limit", "--json").stdout)
    assert data == {"key": "memory.user_char_limit", "value": 1375, "source": "default"}
    data = json.loads(run(env, "get", "memory.nudge_interval", "--json").stdout)
    assert data["source"] == "config.toml"


def test_unset_goes_back_to_default_keeping_comments(home: Path, env: dict[str, str]) -> None:
    config = home / "config.toml"
    config.write_text(COMMENTED)
    result = run(env, "unset", "memory.memory_char_limit")
    assert result.returncode == 0, result.stderr
    assert "2200" in result.stdout
    assert config.read_text() == COMMENTED.replace("memory_char_limit = 3000\n", "")


def test_show_lists_every_key_with_its_source(home: Path, env: dict[str, str]) -> None:
    (home / "config.toml").write_text(COMMENTED)
    result = run(env, "show")
    assert result.returncode == 0, result.stderr
    for table in ("memory", "review", "curator", "injection"):
        assert f"[{table}]" in result.stdout
        for key in type(getattr(Config(), table)).model_fields:
            assert re.search(rf"^  {key} +=", result.stdout, re.M), key
    assert re.search(r"nudge_interval += 4 +\(config.toml\)", result.stdout)
    assert re.search(r"user_char_limit += 1375 +\(default\)", result.stdout)
    data = json.loads(run(env, "show", "--json").stdout)
    assert data["tables"]["memory"]["nudge_interval"] == {"value": 4, "default": 10,
                                                          "source": "config.toml"}
    assert data["tables"]["curator"]["merge"]["source"] == "default"
    assert set(data["tables"]) == {"memory", "review", "chat", "curator", "injection"}


def test_show_hides_secret_looking_keys_of_a_table_without_schema(home: Path,
                                                                  env: dict[str, str]) -> None:
    (home / "config.toml").write_text(f'[providers.legacy]\napi_token = "{SECRET}"\nhost = "h"\n')
    for args in (("show",), ("show", "--json")):
        result = run(env, *args)
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
        assert "legacy" in result.stdout and "api_token" in result.stdout


# -- provider fields --------------------------------------------------------------------------


def test_provider_fields_set_get_unset(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    result = run(env, "set", "providers.demo.top_k", "8")
    assert result.returncode == 0, result.stderr
    assert "providers.demo.top_k = 8" in result.stdout
    assert "not the active provider" in result.stdout
    assert load_config(home).providers["demo"] == {"top_k": 8}
    assert load_config(home).memory.provider == ""  # saving settings never selects it
    assert run(env, "get", "providers.demo.top_k").stdout == "8\n"
    assert run(env, "set", "providers.demo.mode", "cloud").returncode == 0
    assert run(env, "set", "providers.demo.rerank", "yes").returncode == 0
    assert load_config(home).providers["demo"] == {"top_k": 8, "mode": "cloud", "rerank": True}
    result = run(env, "unset", "providers.demo.top_k")
    assert result.returncode == 0 and "5 (default)" in result.stdout
    assert run(env, "get", "providers.demo.top_k").stdout == "5\n"


def test_a_provider_field_that_is_not_text_is_refused_and_nothing_saved(
        home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    result = run(env, "set", "providers.demo.mode", "lo\udcffcal")
    assert result.returncode == 2 and "mode: holds a byte that is not UTF-8" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home / "config.toml").exists()


def test_provider_field_set_keeps_comments(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    config = home / "config.toml"
    config.write_text(COMMENTED + "\n[providers.demo]\n# how much recall\ntop_k = 3  # small\n")
    assert run(env, "set", "providers.demo.top_k", "9").returncode == 0
    assert run(env, "set", "providers.demo.mode", "cloud").returncode == 0
    assert config.read_text() == COMMENTED + (
        "\n[providers.demo]\n# how much recall\ntop_k = 9  # small\nmode = \"cloud\"\n")


def test_provider_field_errors(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    (home / "config.toml").write_text(COMMENTED)
    for args, message in [
        (("set", "providers.demo.top_k", "500"), "must be at most 50"),
        (("set", "providers.demo.mode", "mars"), "must be one of: local, cloud"),
        (("set", "providers.demo.colour", "red"), "unknown field"),
        (("set", "providers.nosuch.x", "1"), "no memory provider is named 'nosuch'"),
        (("set", "providers.demo", "1"), "providers.NAME.FIELD"),
    ]:
        result = run(env, *args)
        assert result.returncode == 2, args
        assert message in result.stderr, (args, result.stderr)
    assert (home / "config.toml").read_text() == COMMENTED


def test_secret_from_stdin_never_shown(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    (home / "config.toml").write_text(COMMENTED)
    result = run(env, "set", "providers.demo.api_key", stdin=SECRET + "\n")
    assert result.returncode == 0, result.stderr
    assert "set" in result.stdout and "DEMO_API_KEY" in result.stdout
    dotenv = home / ".env"
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    assert SECRET in dotenv.read_text()
    assert SECRET not in (home / "config.toml").read_text()

    outputs = [run(env, *args) for args in (
        ("show",), ("show", "--json"), ("get", "providers.demo.api_key"),
        ("get", "providers.demo.api_key", "--json"), ("schema", "demo"),
        ("schema", "demo", "--json"), ("schema", "demo", "--json-schema"),
        ("schema", "demo", "--ui-schema"))]
    for result in outputs:
        assert result.returncode == 0, (result.args, result.stderr)
        assert SECRET not in result.stdout + result.stderr, result.args
    shown = json.loads(outputs[1].stdout)["providers"]["demo"]["fields"]["api_key"]
    assert shown == {"secret": True, "is_set": True, "env_key": "DEMO_API_KEY", "error": None}
    assert "api_key: secret, set (env DEMO_API_KEY)" in outputs[0].stdout
    assert json.loads(outputs[3].stdout) == {"key": "providers.demo.api_key", "secret": True,
                                             "is_set": True}

    result = run(env, "unset", "providers.demo.api_key")
    assert result.returncode == 0, result.stderr
    assert SECRET not in dotenv.read_text()
    assert run(env, "get", "providers.demo.api_key").returncode == 1  # not set
    assert "not set" in run(env, "show").stdout


def test_a_dash_reads_the_secret_from_stdin(home: Path, env: dict[str, str]) -> None:
    """``-`` means stdin, as in ``memhost memory add -``: the secret is read, never set to
    "-"."""
    add_provider(home)
    result = run(env, "set", "providers.demo.api_key", "-", stdin=SECRET + "\n")
    assert result.returncode == 0, result.stderr
    assert f"DEMO_API_KEY={SECRET}" in (home / ".env").read_text().replace("'", "").replace(
        '"', "")
    assert SECRET not in result.stdout + result.stderr


def test_secret_on_the_command_line_is_refused(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    result = run(env, "set", "providers.demo.api_key", SECRET)
    assert result.returncode == 2
    assert "not taken on the command line" in result.stderr
    assert "memhost config set providers.demo.api_key" in result.stderr  # says how instead
    assert SECRET not in result.stderr + result.stdout
    assert not (home / ".env").exists()


def test_blank_secret_changes_nothing(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    result = run(env, "set", "providers.demo.api_key", stdin="\n")
    assert result.returncode == 2 and "nothing was changed" in result.stderr
    assert not (home / ".env").exists()


def test_secret_prompt_uses_getpass_on_a_terminal(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from memhost.cli import main

    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    monkeypatch.delenv("DEMO_API_KEY", raising=False)
    add_provider(home)
    prompts: list[str] = []

    class Terminal:
        def isatty(self) -> bool:
            return True

        def readline(self) -> str:  # pragma: no cover - must not be used on a terminal
            raise AssertionError("read the secret with echo on")

    def fake_getpass(prompt: str = "") -> str:
        prompts.append(prompt)
        return SECRET

    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr("getpass.getpass", fake_getpass)
    assert main(["config", "set", "providers.demo.api_key"]) == 0
    assert prompts and "hidden" in prompts[0]
    assert SECRET not in capsys.readouterr().out
    from memhost.schema.envstore import EnvStore

    assert EnvStore(home).get("DEMO_API_KEY") == SECRET


def test_schema_command(home: Path, env: dict[str, str]) -> None:
    add_provider(home)
    result = run(env, "schema", "demo")
    assert result.returncode == 0, result.stderr
    assert "demo: Demo memory" in result.stdout
    assert "providers.demo.api_key" in result.stdout and "env DEMO_API_KEY" in result.stdout
    assert 'one of "local", "cloud" (Hosted)' in result.stdout
    exported = json.loads(run(env, "schema", "demo", "--json-schema").stdout)
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(exported)
    assert exported["properties"]["api_key"]["writeOnly"] is True
    fields = json.loads(run(env, "schema", "demo", "--json").stdout)["fields"]
    assert [f["key"] for f in fields] == ["mode", "api_key", "top_k", "rerank"]
    result = run(env, "schema", "nosuch")
    assert result.returncode == 2 and "nosuch" in result.stderr


def test_show_includes_the_active_provider_through_its_schema(home: Path,
                                                              env: dict[str, str]) -> None:
    add_provider(home)
    assert run(env, "set", "memory.provider", "demo").returncode == 0
    data = json.loads(run(env, "show", "--json").stdout)
    demo = data["providers"]["demo"]
    assert demo["active"] is True and demo["has_schema"] is True
    assert demo["fields"]["top_k"] == {"value": 5, "source": "default", "error": None}
    assert demo["fields"]["api_key"]["is_set"] is False
    assert "[providers.demo]  (active)" in run(env, "show").stdout


# -- docs ---------------------------------------------------------------------------------------


def test_docs_cover_every_key_with_its_default() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for table in ("memory", "review", "chat", "curator", "injection"):
        model = type(getattr(Config(), table))
        for key, info in model.model_fields.items():
            default = info.default
            shown = (str(default).lower() if isinstance(default, bool) else
                     json.dumps(list(default)) if isinstance(default, tuple) else
                     json.dumps(default) if isinstance(default, str) else str(default))
            row = re.search(rf"^\| `{table}\.{key}` \|[^\n]*$", text, re.M)
            assert row, f"docs/config.md has no row for {table}.{key}"
            assert f"`{shown}`" in row.group(0), f"{table}.{key}: default {shown} not in docs"


def test_show_says_whether_the_review_key_is_set_without_showing_it(home: Path,
                                                                    env: dict[str, str]) -> None:
    env = {k: v for k, v in env.items() if k != "MEMHOST_REVIEW_API_KEY"}
    assert "MEMHOST_REVIEW_API_KEY is not set" in run(env, "show").stdout
    (home / ".env").write_text(f'MEMHOST_REVIEW_API_KEY="{SECRET}"\n')
    text = run(env, "show").stdout
    assert "MEMHOST_REVIEW_API_KEY is set" in text and SECRET not in text
    data = run(env, "show", "--json").stdout
    assert json.loads(data)["review_api_key"] == {"env_key": "MEMHOST_REVIEW_API_KEY",
                                                  "is_set": True}
    assert SECRET not in data
