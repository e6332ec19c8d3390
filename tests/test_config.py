"""``<home>/config.toml``: defaults, validation errors a person can act on, comment-keeping saves."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memhost.config import load_config, update_config
from memhost.errors import ConfigError, MemhostError


def write_config(home: Path, text: str | bytes) -> Path:
    path = home / "config.toml"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def config_error(home: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(home)
    assert isinstance(info.value, MemhostError)
    return str(info.value)


def test_missing_file_means_defaults(home: Path) -> None:
    memory = load_config(home).memory
    assert (memory.memory_enabled, memory.user_profile_enabled) == (True, True)
    assert (memory.memory_char_limit, memory.user_char_limit) == (2200, 1375)
    assert memory.nudge_interval == 10 and memory.provider == ""
    assert memory.prefetch_timeout == 8.0 and memory.write_approval is False
    assert not (home / "config.toml").exists()


def test_values_are_read(home: Path) -> None:
    write_config(home, "[memory]\nmemory_char_limit = 4400\nuser_profile_enabled = false\n"
                       "prefetch_timeout = 20\nprovider = \"vectors\"\n")
    memory = load_config(home).memory
    assert memory.memory_char_limit == 4400 and memory.user_profile_enabled is False
    assert memory.prefetch_timeout == 20.0 and memory.provider == "vectors"
    assert memory.user_char_limit == 1375  # untouched keys keep their defaults


def test_bom_is_tolerated(home: Path) -> None:
    write_config(home, "\ufeff[memory]\nnudge_interval = 3\n")
    assert load_config(home).memory.nudge_interval == 3


@pytest.mark.parametrize(("body", "key", "shown", "expected"), [
    ('memory_char_limit = "2200"', "[memory] memory_char_limit", '"2200"', "a whole number"),
    ("memory_char_limit = -5", "[memory] memory_char_limit", "-5", "at least 0"),
    ("user_char_limit = 2200.5", "[memory] user_char_limit", "2200.5", "a whole number"),
    ('memory_enabled = "yes"', "[memory] memory_enabled", '"yes"', "true or false"),
    ("write_approval = 1", "[memory] write_approval", "1", "true or false"),
    ("prefetch_timeout = 0", "[memory] prefetch_timeout", "0", "at least 0.05"),
    ("provider = false", "[memory] provider", "false", "a quoted string"),
])
def test_invalid_values_name_file_key_and_expectation(
        home: Path, body: str, key: str, shown: str, expected: str) -> None:
    path = write_config(home, f"[memory]\n{body}\n")
    message = config_error(home)
    assert str(path) in message
    assert f"{key} = {shown} is not valid" in message
    assert expected in message
    assert "Traceback" not in message and "pydantic" not in message


def test_list_values(home: Path) -> None:
    write_config(home, '[memory]\nreserved_tools = ["mine", "theirs"]\n')
    assert load_config(home).memory.reserved_tools == ("mine", "theirs")
    write_config(home, '[memory]\nreserved_tools = ["mine", 5]\n')
    assert "[memory] reserved_tools (item 2) = 5 is not valid; expected a quoted string" in (
        config_error(home))
    write_config(home, '[memory]\nreserved_tools = "mine"\n')
    assert "expected a list of strings" in config_error(home)


def test_unknown_key_suggests_the_close_match(home: Path) -> None:
    write_config(home, "[memory]\nmemroy_char_limit = 100\n")
    message = config_error(home)
    assert "unknown key [memory] memroy_char_limit" in message
    assert "did you mean 'memory_char_limit'?" in message
    assert "user_char_limit" in message  # lists the known keys


def test_unknown_table_suggests_the_close_match(home: Path) -> None:
    write_config(home, "[memroy]\nmemory_enabled = true\n")
    assert "did you mean 'memory'?" in config_error(home)


def test_scalar_where_a_table_belongs(home: Path) -> None:
    write_config(home, "memory = 5\n")
    message = config_error(home)
    assert "memory = 5 is not valid; expected a table" in message


def test_every_problem_is_reported_at_once(home: Path) -> None:
    write_config(home, "[memory]\nmemory_char_limit = -1\nnudge_intervall = 3\n")
    message = config_error(home)
    assert "memory_char_limit" in message and "nudge_interval" in message


@pytest.mark.parametrize(("data", "needle"), [
    ("[memory\nx = 1\n", "not valid TOML"),
    (b"[memory]\nprovider = \"\xff\"\n", "cannot be read"),
    # Deeper than the parser can recurse: as broken as any other TOML, not a RecursionError.
    ("[memory]\nx = " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 100 levels deep"),
], ids=["not TOML", "not UTF-8", "nested too deeply"])
def test_unparsable_files_name_the_file(home: Path, data: str | bytes, needle: str) -> None:
    path = write_config(home, data)
    message = config_error(home)
    assert str(path) in message and needle in message


def test_update_keeps_comments_and_validates_first(home: Path) -> None:
    path = write_config(home, "# my settings\n[memory]\n# budget for notes\nmemory_char_limit = 3000\n")
    update_config(home, {("memory", "user_char_limit"): 2000, ("memory", "memory_char_limit"): None})
    text = path.read_text("utf-8")
    assert "# my settings" in text and "# budget for notes" in text
    memory = load_config(home).memory
    assert memory.user_char_limit == 2000 and memory.memory_char_limit == 2200
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    before = path.read_bytes()
    with pytest.raises(ConfigError, match="user_char_limit"):
        update_config(home, {("memory", "user_char_limit"): -1})
    with pytest.raises(ConfigError, match="did you mean"):
        update_config(home, {("memory", "memory_enabeld"): True})
    assert path.read_bytes() == before


def test_update_creates_the_file_and_tables(home: Path) -> None:
    config = update_config(home, {("providers", "vectors", "url"): "http://localhost:9000"})
    assert config.providers == {"vectors": {"url": "http://localhost:9000"}}
    assert load_config(home).providers["vectors"]["url"] == "http://localhost:9000"
