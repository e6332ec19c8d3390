"""Provider discovery and loading: real folders, a real dist-info on sys.path, real imports.

Every provider here is a folder (or an installed distribution) written into a temporary
directory and loaded through the same code a host uses.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from memhost import discovery
from memhost.discovery import pathload, scan
from memhost.errors import ConfigError, ProviderError
from memhost.manager import MemoryManager

PROVIDER = '''\
from memhost import hookimpl


class {cls}:
    @hookimpl
    def prefetch(self, query):
        return "{answer}"
'''


def write_provider(root: Path, name: str, *, answer: str = "", entry: str = "provider:P",
                   files: dict[str, str] | None = None, manifest: str | None = None,
                   requires: list[str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if manifest is None:
        manifest = (f'name = "{name}"\nversion = "1.0.0"\ndescription = "the {name} provider"\n'
                    f'entry = "{entry}"\n')
        if requires is not None:
            manifest += f"requires = {json.dumps(requires)}\n"
    (folder / "plugin.toml").write_text(manifest, encoding="utf-8")
    if files is None:
        files = {"provider.py": PROVIDER.format(cls="P", answer=answer or f"{name} recall")}
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def synthetic_modules(name: str) -> list[str]:
    return [k for k in sys.modules if k.startswith(f"memhost_ext_{name}_")]


REAL_BUNDLED_ROOT = discovery.bundled_root


@pytest.fixture(autouse=True)
def _no_real_bundled_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Providers shipped with memhost stay out of these tests; each test makes its own."""
    empty = tmp_path / "no-bundled-providers"
    empty.mkdir()
    monkeypatch.setattr(scan, "bundled_root", lambda: empty)


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    path = tmp_path / "bundled"
    path.mkdir()
    return path


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site directory on sys.path where tests install distributions (dist-info and code)."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    monkeypatch.delenv("MEMHOST_DISABLE_ENTRYPOINTS")
    return path


def install_distribution(site: Path, dist: str, version: str, entry_points: dict[str, str],
                         package: str, files: dict[str, str]) -> None:
    """Write a distribution the way pip leaves it: code plus a ``.dist-info`` folder."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                                   f"Summary: {dist} for tests\n", encoding="utf-8")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[memhost.providers]\n{lines}", encoding="utf-8")
    (info / "top_level.txt").write_text(package + "\n", encoding="utf-8")
    for relative, text in files.items():
        path = site / package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def forget_modules():
    """Remove the named top-level packages (and submodules) from sys.modules after the test."""
    names: list[str] = []
    yield names
    for key in list(sys.modules):
        if any(key == n or key.startswith(n + ".") for n in names):
            del sys.modules[key]


# -- the three sources ----------------------------------------------------------------------------


def test_a_bundled_folder_is_found_and_loaded(home: Path, bundled: Path) -> None:
    folder = write_provider(bundled, "shipped", answer="from the bundled folder")
    found = discovery.discover(home, bundled_dir=bundled)
    candidate = found.get("shipped")
    assert candidate is not None
    assert (candidate.source, candidate.path, candidate.version, candidate.status) == \
        ("bundled", folder, "1.0.0", "available")
    provider = discovery.load_provider("shipped", home, bundled_dir=bundled)
    assert provider.prefetch(query="q") == "from the bundled folder"


def test_the_bundled_root_is_the_plugins_package_folder() -> None:
    import memhost.plugins

    assert REAL_BUNDLED_ROOT() == Path(memhost.plugins.__file__).resolve().parent


def test_a_user_folder_with_relative_imports_between_modules(home: Path) -> None:
    write_provider(home / "plugins", "notes", entry="provider:NotesProvider", files={
        "provider.py": '''
            from memhost import hookimpl

            from . import words
            from .store import Store


            class NotesProvider:
                def __init__(self):
                    self.store = Store()

                @hookimpl
                def prefetch(self, query):
                    return self.store.find(words.split(query))
            ''',
        "store.py": '''
            from .words import normalise


            class Store:
                notes = ["Deploys happen on Tuesdays"]

                def find(self, wanted):
                    return "; ".join(n for n in self.notes if wanted & set(normalise(n).split()))
            ''',
        "words.py": '''
            def normalise(text):
                return text.lower()


            def split(text):
                return set(normalise(text).split())
            ''',
    })
    provider = discovery.load_provider("notes", home)
    assert provider.prefetch(query="when are deploys") == "Deploys happen on Tuesdays"
    package = pathload.package_name("notes", home / "plugins" / "notes")
    assert sorted(synthetic_modules("notes")) == sorted(
        [package, f"{package}.provider", f"{package}.store", f"{package}.words"])


def test_two_folders_with_one_name_never_share_modules(tmp_path: Path) -> None:
    homes = [tmp_path / "one", tmp_path / "two"]
    for index, home in enumerate(homes):
        write_provider(home / "plugins", "twin", answer=f"home {index}")
    first, second = (discovery.load_provider("twin", h) for h in homes)
    assert first.prefetch(query="q") == "home 0"
    assert second.prefetch(query="q") == "home 1"
    assert type(first).__module__ != type(second).__module__
    assert len({k.split(".")[0] for k in synthetic_modules("twin")}) == 2


@pytest.mark.parametrize("value", ["class", "instance", "factory", "module"])
def test_an_installed_distribution_is_found_through_its_entry_point(
        home: Path, site: Path, forget_modules: list[str], value: str) -> None:
    package = f"memhost_epdemo_{value}"
    forget_modules.append(package)
    target = {"class": f"{package}.provider:EpProvider",
              "instance": f"{package}.provider:INSTANCE",
              "factory": f"{package}.provider:make",
              "module": f"{package}.hooks"}[value]
    install_distribution(site, f"memhost-epdemo-{value}", "1.2.3", {f"ep-{value}": target},
                         package, {
        "__init__.py": "",
        "provider.py": '''
            from memhost import hookimpl


            class EpProvider:
                @hookimpl
                def prefetch(self, query):
                    return "from the entry point"


            INSTANCE = EpProvider()


            def make():
                return EpProvider()
            ''',
        "hooks.py": '''
            from memhost import hookimpl


            @hookimpl
            def prefetch(query):
                return "from the entry point"
            ''',
        "config_schema.py": "",
    })
    found = discovery.discover(home)
    candidate = found.get(f"ep-{value}")
    assert candidate is not None, found.as_dict()
    assert candidate.source == "entrypoint"
    assert (candidate.distribution, candidate.dist_version) == (f"memhost-epdemo-{value}", "1.2.3")
    assert candidate.description == f"memhost-epdemo-{value} for tests"
    assert candidate.path == site / package
    assert package not in sys.modules, "listing imported the provider's package"
    assert discovery.schema_path(f"ep-{value}", home) == site / package / "config_schema.py"
    assert package not in sys.modules, "finding the schema file imported the provider's package"

    provider = discovery.load_provider(f"ep-{value}", home)
    assert provider.prefetch(query="q") == "from the entry point"


def test_entry_points_are_skipped_when_switched_off(home: Path, site: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   forget_modules: list[str]) -> None:
    forget_modules.append("memhost_epoff")
    install_distribution(site, "memhost-epoff", "0.1", {"epoff": "memhost_epoff:P"},
                         "memhost_epoff", {"__init__.py": PROVIDER.format(cls="P", answer="x")})
    assert "epoff" in discovery.known_names(home)
    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    assert "epoff" not in discovery.known_names(home)
    assert "epoff" in discovery.known_names(home, entrypoints=True)
    assert "epoff" not in discovery.known_names(home.parent, entrypoints=False)


# -- precedence, blocking, failures ---------------------------------------------------------------


def test_the_first_source_wins_and_every_shadowed_copy_is_reported_once(
        home: Path, bundled: Path, site: Path, forget_modules: list[str],
        caplog: pytest.LogCaptureFixture) -> None:
    forget_modules.append("memhost_epdup")
    write_provider(bundled, "dup", answer="bundled")
    user_copy = write_provider(home / "plugins", "dup", answer="user")
    install_distribution(site, "memhost-epdup", "2.0", {"dup": "memhost_epdup:P"},
                         "memhost_epdup", {"__init__.py": PROVIDER.format(cls="P", answer="ep")})
    with caplog.at_level(logging.WARNING, logger="memhost.discovery"):
        found = discovery.discover(home, bundled_dir=bundled)
        discovery.discover(home, bundled_dir=bundled)
    assert found.get("dup").source == "bundled"
    shadowed = {c.source: c for c in found.shadowed}
    assert set(shadowed) == {"user", "entrypoint"}
    assert shadowed["user"].path == user_copy
    assert shadowed["user"].shadowed_by == f"bundled {bundled / 'dup'}"
    assert shadowed["entrypoint"].where == "memhost-epdup 2.0"
    warnings = [r.getMessage() for r in caplog.records if "shadowed" in r.getMessage()]
    assert len(warnings) == 2, warnings  # one per shadowed copy, not one per discover()
    assert str(user_copy) in warnings[0]
    assert discovery.load_provider("dup", home, bundled_dir=bundled).prefetch(query="") == "bundled"


def test_blocked_names_are_listed_and_refused_while_others_load(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_provider(home / "plugins", "alpha")
    write_provider(home / "plugins", "beta")
    monkeypatch.setenv("MEMHOST_DISABLED_PROVIDERS", " alpha , gamma")
    found = discovery.discover(home)
    assert found.blocked == ["alpha", "gamma"]
    assert found.get("alpha").status == "blocked"
    with pytest.raises(ProviderError, match="blocked by MEMHOST_DISABLED_PROVIDERS"):
        discovery.load_provider("alpha", home)
    assert discovery.load_provider("beta", home).prefetch(query="") == "beta recall"


@pytest.mark.parametrize(("manifest", "expected"), [
    ('name = "broken"\nversion = "1.0"\nentry = "provider:P"\ndescription = "x"\nentyr = "y"\n',
     "unknown key 'entyr' (did you mean 'entry'?)"),
    ('name = "broken"\nversion = "1.0"\n', "key 'entry' is required"),
    ('name = "broken"\nversion = "one"\nentry = "provider:P"\n', "key 'version' = 'one'"),
    ('name = "broken"\nversion = "1.0"\nentry = "provider.py"\n', "key 'entry' = 'provider.py'"),
    ('name = "broken"\nversion = "1.0"\nentry = "provider:P"\nrequires = ["not a req!!"]\n',
     "requires[0]"),
    ('name = "other"\nversion = "1.0"\nentry = "provider:P"\n', "does not match the folder name"),
    ('name = "broken\nversion', "not valid TOML"),
    ('name = "broken"\nversion = "1.0"\nx = ' + "[" * 5000 + "]" * 5000, "it nests too deeply"),
], ids=["unknown key", "no entry", "bad version", "bad entry", "bad requirement", "other name",
        "not TOML", "nested too deeply"])
def test_a_broken_manifest_is_recorded_with_file_and_key_while_others_load(
        home: Path, manifest: str, expected: str) -> None:
    folder = write_provider(home / "plugins", "broken", manifest=manifest)
    write_provider(home / "plugins", "fine")
    found = discovery.discover(home)
    assert found.get("broken").status == "failed"
    [failure] = found.failures
    assert (failure.name, failure.source, failure.path) == ("broken", "user", str(folder))
    assert str(folder / "plugin.toml") in failure.error
    assert expected in failure.error
    with pytest.raises(ProviderError, match="cannot be loaded") as raised:
        discovery.load_provider("broken", home)
    assert expected in str(raised.value)
    assert discovery.load_provider("fine", home).prefetch(query="") == "fine recall"


def test_a_folder_without_plugin_toml_is_reported(home: Path) -> None:
    (home / "plugins" / "stray").mkdir(parents=True)
    [failure] = discovery.discover(home).failures
    assert "plugin.toml: missing" in failure.error


def test_strict_mode_raises_instead_of_recording(home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_provider(home / "plugins", "broken", manifest="name = 1\n")
    write_provider(home / "plugins", "fine")
    assert discovery.discover(home).failures
    monkeypatch.setenv("MEMHOST_STRICT_PROVIDERS", "1")
    with pytest.raises(ProviderError, match="MEMHOST_STRICT_PROVIDERS"):
        discovery.discover(home)
    assert discovery.discover(home, strict=False).get("fine") is not None


def test_folders_starting_with_underscore_or_dot_and_plain_files_are_ignored(home: Path) -> None:
    for name in ("_private", ".hidden"):
        write_provider(home / "plugins", name, manifest="not toml at all [")
    (home / "plugins" / "README.md").write_text("notes", encoding="utf-8")
    found = discovery.discover(home)
    assert found.candidates == [] and found.failures == []


def test_listing_runs_no_provider_code(home: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'a').write('x')\n"
    write_provider(home / "plugins", "quiet", files={
        "provider.py": code + PROVIDER.format(cls="P", answer="q"),
        "__init__.py": code,
        "config_schema.py": code,
    })
    found = discovery.discover(home)
    assert found.get("quiet").status == "available"
    assert discovery.schema_path("quiet", home) == home / "plugins" / "quiet" / "config_schema.py"
    discovery.known_names(home)
    assert not marker.exists()
    assert synthetic_modules("quiet") == []


def test_an_import_that_raises_is_recorded_and_leaves_nothing_behind(home: Path) -> None:
    folder = write_provider(home / "plugins", "raises", files={
        "provider.py": "from .helper import VALUE\nfrom memhost import hookimpl\n\n"
                       "class P:\n    @hookimpl\n    def prefetch(self, query):\n"
                       "        return VALUE\n",
        "helper.py": "VALUE = 'ok'\nraise RuntimeError('boom while importing')\n",
    })
    write_provider(home / "plugins", "fine")
    with pytest.raises(discovery.ProviderLoadError) as raised:
        discovery.load_provider("raises", home)
    message = str(raised.value)
    assert "'raises'" in message and str(folder) in message
    assert "failed to import: RuntimeError: boom while importing" in message
    failure = raised.value.failure
    assert str(folder / "helper.py") in failure.traceback
    assert synthetic_modules("raises") == []
    # The record is kept for doctor and listings; the others still load.
    assert [f.error for f in discovery.discover(home).failures] == [message]
    assert discovery.load_provider("fine", home).prefetch(query="") == "fine recall"
    # Fixed on disk, it loads at the next attempt, and the record is gone.
    (folder / "helper.py").write_text("VALUE = 'fixed'\n", encoding="utf-8")
    assert discovery.load_provider("raises", home).prefetch(query="") == "fixed"
    assert discovery.discover(home).failures == []


@pytest.mark.parametrize(("entry", "source", "expected"), [
    ("provider:Missing", PROVIDER.format(cls="P", answer="x"),
     "no provider found: 'Missing' is not defined in module"),
    ("provider:P", "class P:\n    def prefetch(self, query):\n        return 'x'\n",
     "no provider found: P has no methods marked @memhost.hookimpl"),
    ("provider", "X = 1\n", "no provider found: the module defines no @memhost.hookimpl"),
    ("nothere:P", PROVIDER.format(cls="P", answer="x"), "names a module that does not exist"),
    ("provider:P", "class P:\n    def __init__(self):\n        raise ValueError('no key')\n",
     "P() raised ValueError: no key"),
])
def test_a_module_without_a_usable_provider_says_what_is_missing(
        home: Path, entry: str, source: str, expected: str) -> None:
    folder = write_provider(home / "plugins", "empty", entry=entry, files={"provider.py": source})
    with pytest.raises(ProviderError, match="'empty'") as raised:
        discovery.load_provider("empty", home)
    assert expected in str(raised.value)
    package = pathload.package_name("empty", folder)
    assert [k for k in sys.modules if k.split(".")[0] == package] == []
    # Fixed on disk, the next attempt reads the new code.
    (folder / "plugin.toml").write_text('name = "empty"\nversion = "1"\nentry = "fixed:P"\n')
    (folder / "fixed.py").write_text(PROVIDER.format(cls="P", answer="fixed"))
    assert discovery.load_provider("empty", home).prefetch(query="") == "fixed"


def test_missing_requirements_make_a_provider_unavailable_with_the_install_command(
        home: Path) -> None:
    write_provider(home / "plugins", "needs", requires=["memhost-surely-absent-package>=1",
                                                        "pluggy>=1"])
    write_provider(home / "plugins", "tooold", requires=["pluggy>=999"])
    write_provider(home / "plugins", "satisfied",
                   requires=["pluggy>=1", "absent-elsewhere; sys_platform == 'nowhere'"])
    found = discovery.discover(home)
    needs = found.get("needs")
    assert needs.status == "unavailable"
    assert needs.missing == ("memhost-surely-absent-package>=1",)
    assert "pip install 'memhost-surely-absent-package>=1'" in needs.reason
    assert "installed:" in found.get("tooold").reason
    assert found.get("satisfied").status == "available"
    with pytest.raises(ProviderError, match="unavailable: needs memhost-surely-absent-package"):
        discovery.load_provider("needs", home)


def test_unknown_names_get_the_known_names_and_close_matches(home: Path) -> None:
    write_provider(home / "plugins", "notes")
    write_provider(home / "plugins", "mem0")
    with pytest.raises(ProviderError) as raised:
        discovery.load_provider("ntoes", home)
    assert "no memory provider is named 'ntoes'" in str(raised.value)
    assert "Did you mean 'notes'?" in str(raised.value)
    assert "Known providers: mem0, notes" in str(raised.value)
    with pytest.raises(ConfigError, match="memory.provider: .*Did you mean 'notes'"):
        discovery.validate_provider_name("Notes", home)
    with pytest.raises(ConfigError, match="Known providers: mem0, notes"):
        discovery.validate_provider_name("openai", home)
    assert discovery.validate_provider_name(" notes ", home) == "notes"
    for builtin in ("", "builtin", "none", "BUILTIN", " None "):
        assert discovery.validate_provider_name(builtin, home) == ""


def test_concurrent_loads_of_one_folder_import_it_once(home: Path, tmp_path: Path) -> None:
    counter = tmp_path / "imports"
    write_provider(home / "plugins", "slow", files={
        "provider.py": f"import time\nopen({str(counter)!r}, 'a').write('x')\ntime.sleep(0.3)\n"
                       + PROVIDER.format(cls="P", answer="slow"),
    })
    results: list[object] = []
    errors: list[BaseException] = []

    def load() -> None:
        try:
            results.append(discovery.load_provider("slow", home))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert counter.read_text() == "x"
    assert len({type(r) for r in results}) == 1 and len(results) == 6


# -- the manager ----------------------------------------------------------------------------------


def configure(home: Path, name: str) -> None:
    (home / "config.toml").write_text(f'[memory]\nprovider = "{name}"\n', encoding="utf-8")


@pytest.mark.parametrize(("setup", "why"), [
    ("unknown", "no memory provider is named 'gone'"),
    ("unavailable", "unavailable: the service URL is not set"),
    ("import-raises", "failed to import: ImportError: no module named fancydb"),
    ("blocked", "blocked by MEMHOST_DISABLED_PROVIDERS"),
])
def test_a_configured_provider_that_cannot_be_used_is_reported_loudly(
        home: Path, setup: str, why: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    write_provider(home / "plugins", "gonee")
    if setup == "unavailable":
        write_provider(home / "plugins", "gone", files={"provider.py": '''
            from memhost import hookimpl


            class P:
                @hookimpl
                def check_available(self, config):
                    return None if config.get("url") else "the service URL is not set"
            '''})
    elif setup == "import-raises":
        write_provider(home / "plugins", "gone", files={
            "provider.py": "raise ImportError('no module named fancydb')\n"})
    elif setup == "blocked":
        write_provider(home / "plugins", "gone")
        monkeypatch.setenv("MEMHOST_DISABLED_PROVIDERS", "gone")
    configure(home, "gone")
    with caplog.at_level(logging.WARNING):
        manager = MemoryManager.from_home(home)
    try:
        status = manager.status()
        assert status["configured_provider"] == "gone"
        assert status["configured_provider_active"] is False
        assert status["builtin_only"] is True
        [problem] = status["problems"]
        assert problem["provider"] == "gone"
        assert why in problem["problem"]
        assert "memory.provider" in problem["problem"]
        assert "Only the builtin memory is active" in problem["problem"]
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("'gone'" in w and why.split(":")[0] in w and "Only the builtin memory is active"
                   in w for w in warnings), warnings
    finally:
        manager.shutdown()


def test_strict_mode_makes_the_manager_raise_for_its_configured_provider(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(home, "gone")
    monkeypatch.setenv("MEMHOST_STRICT_PROVIDERS", "1")
    with pytest.raises(ProviderError, match="'gone'.*not active.*MEMHOST_STRICT_PROVIDERS"):
        MemoryManager.from_home(home)


def test_a_configured_provider_gets_its_schema_values_and_secrets(home: Path) -> None:
    write_provider(home / "plugins", "tuned", entry="provider:Tuned", files={
        "provider.py": '''
            from memhost import hookimpl

            SEEN = []


            class Tuned:
                @hookimpl
                def check_available(self, config):
                    SEEN.append(("check_available", dict(config)))

                @hookimpl
                def initialize(self, session_id, config):
                    SEEN.append(("initialize", dict(config)))
            ''',
        "config_schema.py": '''
            from memhost.schema import ConfigField, ProviderConfigSchema

            CONFIG_SCHEMA = ProviderConfigSchema(name="tuned", fields=(
                ConfigField("limit", kind="number", default=5),
                ConfigField("mode", kind="text", default="fast"),
                ConfigField("token", kind="secret", env_key="TUNED_TOKEN"),
            ))
            ''',
    })
    (home / "config.toml").write_text('[memory]\nprovider = "tuned"\n\n[providers.tuned]\n'
                                      'mode = "careful"\n', encoding="utf-8")
    (home / ".env").write_text('TUNED_TOKEN="s3cret-value"\n', encoding="utf-8")
    manager = MemoryManager.from_home(home)
    try:
        assert manager.status()["configured_provider_active"] is True
        manager.start_session("s1")
        module = sys.modules[type(manager._external.plugin).__module__]
        expected = {"limit": 5, "mode": "careful", "token": "s3cret-value"}
        assert module.SEEN == [("check_available", expected), ("initialize", expected)]
    finally:
        manager.shutdown()


def test_a_schema_file_that_raises_does_not_stop_the_provider(home: Path,
                                                              caplog: pytest.LogCaptureFixture
                                                              ) -> None:
    write_provider(home / "plugins", "badschema", files={
        "provider.py": PROVIDER.format(cls="P", answer="still here"),
        "config_schema.py": "raise RuntimeError('schema exploded')\n",
    })
    write_provider(home / "plugins", "fine")
    found = discovery.discover(home)
    assert [c.status for c in found.candidates] == ["available", "available"]
    configure(home, "badschema")
    with caplog.at_level(logging.WARNING, logger="memhost.discovery"):
        manager = MemoryManager.from_home(home)
    try:
        assert manager.status()["configured_provider_active"] is True
        assert any("schema exploded" in r.getMessage() for r in caplog.records)
    finally:
        manager.shutdown()


@pytest.mark.parametrize("name", ["builtin", "memories", "pending", "outbox"])
def test_manifest_refuses_reserved_names(tmp_path: Path, name: str) -> None:
    from memhost.discovery.manifest import Manifest

    with pytest.raises(ValueError, match="reserved"):
        Manifest(name=name, version="1.0", entry="provider:P")
