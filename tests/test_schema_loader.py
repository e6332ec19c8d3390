"""Loading ``config_schema.py`` by path: caching, reloading, failures and the import rule."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from memhost.errors import MemhostError
from memhost.schema import ProviderConfigSchema
from memhost.schema.loader import SchemaLoadError, clear_cache, load_config_schema

GOOD = """
from memhost.schema import ConfigField, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="demo",
    label="{label}",
    fields=[ConfigField("top_k", kind="number", default=5, min=1)],
)
"""


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


def write(folder: Path, text: str, name: str = "config_schema.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_loads_config_schema(tmp_path: Path) -> None:
    schema = load_config_schema(write(tmp_path, GOOD.format(label="Demo")))
    assert isinstance(schema, ProviderConfigSchema)
    assert schema.name == "demo" and schema.label == "Demo"
    assert schema.field("top_k").default == 5


def test_cached_by_resolved_path(tmp_path: Path) -> None:
    path = write(tmp_path / "p", GOOD.format(label="Demo"))
    first = load_config_schema(path)
    assert load_config_schema(path) is first
    assert load_config_schema(tmp_path / "p" / ".." / "p" / "config_schema.py") is first
    link = tmp_path / "link.py"
    link.symlink_to(path)
    assert load_config_schema(link) is first
    # Another file with the same text is another provider's schema: its own entry.
    other = write(tmp_path / "q", GOOD.format(label="Demo"))
    assert load_config_schema(other) is not first


def test_edited_file_is_loaded_again(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.format(label="Aaaa"))
    first = load_config_schema(path)
    stat = path.stat()
    path.write_text(textwrap.dedent(GOOD.format(label="Bbbb")), encoding="utf-8")  # same size
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime
    second = load_config_schema(path)
    assert second.label == "Bbbb" and first.label == "Aaaa"


def test_failed_load_is_not_cached(tmp_path: Path) -> None:
    path = write(tmp_path, "CONFIG_SCHEMA = (\n")
    with pytest.raises(SchemaLoadError):
        load_config_schema(path)
    write(tmp_path, GOOD.format(label="Fixed"))
    assert load_config_schema(path).label == "Fixed"
    # And a good cached schema does not hide a file that broke since.
    write(tmp_path, "raise RuntimeError('broken on purpose')\n")
    with pytest.raises(SchemaLoadError, match="broken on purpose"):
        load_config_schema(path)


@pytest.mark.parametrize(("source", "problem"), [
    ("CONFIG_SCHEMA = (\n", "syntax error"),
    ("X = 1\n", "defines no CONFIG_SCHEMA"),
    ("CONFIG_SCHEMA = {'name': 'demo'}\n", "must be a memhost.schema.ProviderConfigSchema"),
    ("raise ValueError('nope')\n", "raised ValueError: nope"),
    ("raise SystemExit(3)\n", "raised SystemExit"),
    ("from memhost.schema import ConfigField, ProviderConfigSchema\n"
     "CONFIG_SCHEMA = ProviderConfigSchema('demo', fields=[\n"
     "    ConfigField('mode', kind='select', options=['a'], default='b')])\n",
     "invalid schema: field 'mode'"),
    ("from memhost.schema import ConfigField, ProviderConfigSchema\n"
     "CONFIG_SCHEMA = ProviderConfigSchema('demo', fields=[\n"
     "    ConfigField('key', kind='secret')])\n", "field 'key': a secret field needs an env_key"),
])
def test_load_errors_name_the_file_and_problem(tmp_path: Path, source: str, problem: str) -> None:
    path = write(tmp_path, source)
    with pytest.raises(SchemaLoadError) as info:
        load_config_schema(path)
    assert isinstance(info.value, MemhostError)
    assert str(path.resolve()) in str(info.value)
    assert problem in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError, match="cannot be read"):
        load_config_schema(tmp_path / "nope" / "config_schema.py")


@pytest.mark.parametrize("line", [
    "import memhost.manager",
    "from memhost import manager",
    "import memhost",
    "from memhost.config import load_config",
    "import pluggy",
    "from . import helpers",
    "from .provider import Thing",
])
def test_imports_outside_memhost_schema_are_refused_before_running(tmp_path: Path,
                                                                   line: str) -> None:
    marker = tmp_path / "ran"
    path = write(tmp_path / "prov", f"open({str(marker)!r}, 'w').close()\n{line}\n"
                 + GOOD.format(label="x"))
    with pytest.raises(SchemaLoadError, match="may import only memhost.schema"):
        load_config_schema(path)
    assert not marker.exists()  # refused before any of the file ran


def test_allowed_imports(tmp_path: Path) -> None:
    path = write(tmp_path, "from __future__ import annotations\nimport enum\n"
                 "from memhost import schema\nfrom memhost.schema.model import ConfigField\n"
                 "CONFIG_SCHEMA = schema.ProviderConfigSchema('demo', fields=[ConfigField('x')])\n")
    assert load_config_schema(path).keys == ("x",)


def test_provider_package_is_never_imported(tmp_path: Path) -> None:
    package = tmp_path / "demo_pkg"
    write(package, "raise RuntimeError('the provider package was imported')\n", "__init__.py")
    path = write(package, GOOD.format(label="Demo"))
    before = set(sys.modules)
    assert load_config_schema(path).name == "demo"
    leftovers = {m for m in set(sys.modules) - before if "config_schema" in m or "demo_pkg" in m}
    assert not leftovers


def test_dataclasses_work_inside_a_schema_file(tmp_path: Path) -> None:
    """The module is registered while it runs, so code that looks itself up by name works."""
    path = write(tmp_path, "from __future__ import annotations\n"
                 "import dataclasses\n@dataclasses.dataclass\nclass Choice:\n    value: str\n"
                 "from memhost.schema import ConfigField, ProviderConfigSchema\n"
                 "CONFIG_SCHEMA = ProviderConfigSchema('demo', fields=[ConfigField('x', "
                 "kind='select', options=[Choice('a').value])])\n")
    assert load_config_schema(path).field("x").allowed_values() == ("a",)
