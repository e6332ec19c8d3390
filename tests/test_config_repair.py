"""A broken config.toml can be repaired from the CLI: read-only commands still run (and say
what is wrong), ``config set``/``unset`` fix it one key at a time, the host still refuses to
start; provider tables are checked against the provider's config schema."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from memhost import config as config_module
from memhost.config import load_config, update_config
from memhost.errors import ConfigError
from memhost.manager import MemoryManager
from cli_runner import run_memhost


TYPO = textwrap.dedent("""\
    # my settings
    [memory]
    memory_char_limt = 3000  # a typo
    nudge_interval = 4
    """)

SCHEMA = textwrap.dedent("""\
    from memhost.schema import ConfigField, ProviderConfigSchema

    CONFIG_SCHEMA = ProviderConfigSchema(
        name="demo", label="Demo",
        fields=[ConfigField("top_k", kind="number", default=5, min=1, max=50),
                ConfigField("mode", kind="text", default="local")],
    )
    """)


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    return run_memhost(args, env=env)


def add_provider(home: Path) -> None:
    folder = home / "plugins" / "demo"
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        'name = "demo"\nversion = "0.1.0"\nentry = "provider:Demo"\n')
    folder.joinpath("provider.py").write_text(
        "from memhost import hookimpl\n\nclass Demo:\n    @hookimpl\n"
        "    def prefetch(self, query):\n        return None\n")
    folder.joinpath("config_schema.py").write_text(SCHEMA)


def test_read_only_commands_run_on_a_config_with_a_typo_and_say_what_is_wrong(home: Path):
    (home / "config.toml").write_text(TYPO)

    for args in (["memory", "show"], ["config", "show"], ["config", "get",
                                                          "memory.nudge_interval"],
                 ["memory", "history"], ["providers", "list"]):
        result = run(home, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert "memory_char_limt" in result.stderr, args
        assert "memhost config unset memory.memory_char_limt" in result.stderr, args
    # The valid keys around the typo still count.
    assert run(home, "config", "get", "memory.nudge_interval").stdout == "4\n"
    doctor = run(home, "doctor")
    assert "memory_char_limt" in doctor.stdout and doctor.returncode != 0


def test_config_unset_removes_the_typo_and_keeps_comments(home: Path):
    path = home / "config.toml"
    path.write_text(TYPO)

    result = run(home, "config", "unset", "memory.memory_char_limt")

    assert result.returncode == 0, result.stderr
    assert path.read_text() == TYPO.replace("memory_char_limt = 3000  # a typo\n", "")
    assert load_config(home).memory.nudge_interval == 4


def test_config_set_repairs_a_wrong_value_while_another_key_is_still_wrong(home: Path):
    path = home / "config.toml"
    path.write_text("[memory]\nnudge_interval = \"often\"\nbogus = 1\n")

    fixed = run(home, "config", "set", "memory.nudge_interval", "6")
    assert fixed.returncode == 0, fixed.stderr
    assert "nudge_interval = 6" in path.read_text()
    # Still refused: a change that leaves its own key wrong.
    refused = run(home, "config", "set", "memory.nudge_interval", "often")
    assert refused.returncode == 2 and "nudge_interval" in refused.stderr
    assert "nudge_interval = 6" in path.read_text()
    assert run(home, "config", "unset", "memory.bogus").returncode == 0
    assert load_config(home).memory.nudge_interval == 6


def test_the_host_still_refuses_to_start_naming_the_key(home: Path):
    (home / "config.toml").write_text(TYPO)

    with pytest.raises(ConfigError, match=r"\[memory\] memory_char_limt"):
        MemoryManager.from_home(home)
    chat = run(home, "chat", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert chat.returncode == 2 and "memory_char_limt" in chat.stderr


def test_writes_to_memory_are_refused_until_the_config_is_fixed(home: Path):
    (home / "config.toml").write_text("[memory]\nmemory_char_limit = \"big\"\n")

    result = run(home, "memory", "add", "User likes tea.")

    assert result.returncode == 2 and "memory_char_limit" in result.stderr
    assert not (home / "memories" / "MEMORY.md").exists()


def test_read_config_keeps_valid_keys_and_names_the_wrong_ones(home: Path):
    (home / "config.toml").write_text(
        "[memory]\nnudge_interval = 3\nprefetch_timeout = \"x\"\n[review]\nmodle = \"m\"\n")

    config, error = config_module.read_config(home)

    assert config.memory.nudge_interval == 3
    assert config.memory.prefetch_timeout == 8.0
    assert error is not None and "prefetch_timeout" in error and "modle" in error


def test_a_file_nested_too_deeply_gives_defaults_and_commands_still_run(home: Path):
    (home / "config.toml").write_text("[memory]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    config, error = config_module.read_config(home)
    assert config.memory.nudge_interval == 10 and "nested more than" in (error or "")
    shown = run(home, "memory", "show")
    assert shown.returncode == 0 and "RecursionError" not in shown.stderr, shown.stderr


def test_a_file_that_is_not_toml_gives_defaults_and_cannot_be_edited(home: Path):
    path = home / "config.toml"
    path.write_text("[memory\nnudge_interval = 3\n")

    config, error = config_module.read_config(home)
    assert config.memory.nudge_interval == 10 and "not valid TOML" in (error or "")
    assert run(home, "memory", "show").returncode == 0
    with pytest.raises(ConfigError):
        update_config(home, {("memory", "nudge_interval"): 4})
    assert path.read_text() == "[memory\nnudge_interval = 3\n"


# -- provider tables against their schemas --------------------------------------------------------


def test_provider_table_unknown_keys_and_wrong_types_are_reported(home: Path):
    add_provider(home)
    (home / "config.toml").write_text(
        "[memory]\nprovider = \"demo\"\n[providers.demo]\ntop_kk = 3\ntop_k = \"many\"\n")

    show = run(home, "config", "show")
    assert show.returncode == 0, show.stderr
    assert "top_kk" in show.stdout and "top_k" in show.stdout
    doctor = run(home, "doctor")
    assert doctor.returncode != 0
    assert "top_kk" in doctor.stdout and "unknown" in doctor.stdout
    assert "top_k" in doctor.stdout and "many" in doctor.stdout


def test_config_set_refuses_an_unknown_provider_key_or_a_wrong_type(home: Path):
    add_provider(home)
    path = home / "config.toml"
    path.write_text("[providers.demo]\nmode = \"local\"\n")

    unknown = run(home, "config", "set", "providers.demo.top_kk", "3")
    wrong = run(home, "config", "set", "providers.demo.top_k", "many")

    assert unknown.returncode == 2 and "unknown field" in unknown.stderr
    assert wrong.returncode == 2 and "top_k" in wrong.stderr
    assert path.read_text() == "[providers.demo]\nmode = \"local\"\n"


def test_config_unset_removes_an_unknown_provider_key(home: Path):
    add_provider(home)
    path = home / "config.toml"
    path.write_text("[providers.demo]\ntop_kk = 3  # typo\nmode = \"local\"\n")

    result = run(home, "config", "unset", "providers.demo.top_kk")

    assert result.returncode == 0, result.stderr
    assert path.read_text() == "[providers.demo]\nmode = \"local\"\n"
