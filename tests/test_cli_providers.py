"""``memhost providers`` and the providers section of ``memhost doctor``: the real console
script, run as a process against temporary homes holding real provider folders
(``tests/data/providers``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from cli_runner import run_memhost

DATA = Path(__file__).resolve().parent / "data" / "providers"
BIN = Path(sys.executable).parent
SECRET = "echo-secret-value-4f9a2c"


def memhost(home: Path, *args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_memhost(args, env={**os.environ, "MEMHOST_HOME": str(home), **(env or {})},
                       timeout=180, cwd=cwd)


def install(home: Path, *names: str) -> None:
    for name in names:
        shutil.copytree(DATA / name, home / "plugins" / name)


def by_name(rows: Iterable[dict]) -> dict[str, dict]:
    return {row["name"]: row for row in rows}


def write_dist_info(site: Path, dist: str, name: str, target: str) -> None:
    info = site / f"{dist.replace('-', '_')}-9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 9.9\n"
                                   "Summary: installed for tests\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[memhost.providers]\n{name} = {target}\n",
                                           encoding="utf-8")


# -- the author's kit -----------------------------------------------------------------------------


def test_new_then_check_passes_on_a_fresh_home(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"  # does not exist yet
    created = memhost(home, "providers", "new", "demo")
    assert created.returncode == 0, created.stderr
    folder = home / "plugins" / "demo"
    for name in ("plugin.toml", "provider.py", "notes.py", "config_schema.py", "README.md",
                 "tests/test_provider.py"):
        assert (folder / name).is_file(), name

    checked = memhost(home, "providers", "check", "demo")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")]
    for check in ("manifest", "load", "hooks", "tools", "config schema", "check_available",
                  "session: initialize", "session: prefetch", "session: sync_turn",
                  "session: shutdown"):
        assert any(line.startswith("PASS") and f"  {check} " in line for line in lines), check
    assert "demo: all checks passed." in checked.stdout

    # The new provider is discovered, and can be made the active one.
    used = memhost(home, "providers", "use", "demo")
    assert used.returncode == 0, used.stderr
    listed = json.loads(memhost(home, "providers", "list", "--json", "--check").stdout)
    assert by_name(listed["providers"])["demo"]["status"] == "active"


def test_new_refuses_a_bad_name_and_an_existing_folder(home: Path) -> None:
    bad = memhost(home, "providers", "new", "no/slash")
    assert bad.returncode == 2 and "cannot name a provider" in bad.stderr
    assert memhost(home, "providers", "new", "builtin").returncode == 2
    assert memhost(home, "providers", "new", "demo").returncode == 0
    again = memhost(home, "providers", "new", "demo")
    assert again.returncode == 2 and "already exists" in again.stderr


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           *args], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def test_the_scaffolded_folder_passes_its_own_test_under_pytest(home: Path) -> None:
    assert memhost(home, "providers", "new", "demo").returncode == 0
    folder = home / "plugins" / "demo"
    result = run_pytest(folder, "-v")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # The contract suite ran (through the memhost pytest plugin), not only the local test.
    assert "TestDemoProvider::test_full_manager_session_has_no_provider_faults PASSED" in \
        result.stdout
    assert "TestDemoProvider::test_every_tool_answers_with_json PASSED" in result.stdout
    assert "::test_a_note_added_with_the_tool_is_recalled PASSED" in result.stdout


def test_the_scaffolded_package_passes_its_test_and_its_entry_point_check(
        home: Path, tmp_path: Path) -> None:
    made = memhost(home, "providers", "new", "pkgdemo", "--package", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    project = tmp_path / "memhost-pkgdemo"
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points."memhost.providers"]' in pyproject
    assert 'pkgdemo = "memhost_pkgdemo.provider:PkgdemoProvider"' in pyproject
    result = run_pytest(project, "-v")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "TestPkgdemoProvider::test_full_manager_session_has_no_provider_faults PASSED" in \
        result.stdout

    # Installed (its dist-info on the path), it is found through its entry point and checks clean.
    site = tmp_path / "site"
    write_dist_info(site, "memhost-pkgdemo", "pkgdemo", "memhost_pkgdemo.provider:PkgdemoProvider")
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(project / "src")]),
           "MEMHOST_DISABLE_ENTRYPOINTS": ""}
    checked = memhost(home, "providers", "check", "pkgdemo", env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "entry point pkgdemo = memhost_pkgdemo.provider:PkgdemoProvider" in checked.stdout
    assert "PASS  config schema" in checked.stdout  # found next to the module, not imported


# -- list -----------------------------------------------------------------------------------------


@pytest.fixture
def stocked(home: Path, tmp_path: Path) -> dict[str, object]:
    """A home with several providers, a broken manifest, a blocked one and an entry-point copy of
    ``echo`` (shadowed by the user folder); env for the commands to see all of it."""
    install(home, "echo", "picky", "explodes", "badschema")
    broken = home / "plugins" / "broken"
    broken.mkdir()
    (broken / "plugin.toml").write_text('name = "broken"\nversion = "1.0"\n', encoding="utf-8")
    site = tmp_path / "site"
    write_dist_info(site, "memhost-echo-copy", "echo", "memhost_echo_copy:Echo")
    (home / ".env").write_text(f'ECHO_API_KEY="{SECRET}"\n', encoding="utf-8")
    marker = tmp_path / "imported.txt"
    env = {"PYTHONPATH": str(site), "MEMHOST_DISABLE_ENTRYPOINTS": "",
           "MEMHOST_DISABLED_PROVIDERS": "badschema", "MEMHOST_TEST_MARKER": str(marker)}
    return {"env": env, "marker": marker, "site": site}


def test_list_reports_sources_statuses_shadows_blocks_and_failures_without_running_code(
        home: Path, stocked: dict) -> None:
    result = memhost(home, "providers", "list", "--json", env=stocked["env"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = by_name(r for r in data["providers"] if r["source"] != "bundled")
    assert set(rows) == {"echo", "picky", "explodes", "badschema", "broken"}
    assert (rows["echo"]["source"], rows["echo"]["version"], rows["echo"]["status"]) == \
        ("user", "0.3.0", "available")
    assert rows["echo"]["path"] == str(home / "plugins" / "echo")
    assert rows["badschema"]["status"] == "blocked"
    assert rows["broken"]["status"] == "failed"
    assert "key 'entry' is required" in rows["broken"]["reason"]
    assert rows["explodes"]["status"] == "available"  # nothing was imported to find out
    [shadow] = data["shadowed"]
    assert (shadow["name"], shadow["source"], shadow["distribution"]) == \
        ("echo", "entrypoint", "memhost-echo-copy")
    assert shadow["shadowed_by"] == f"user {home / 'plugins' / 'echo'}"
    assert data["blocked"] == ["badschema"]
    assert [f["name"] for f in data["failures"] if f["source"] != "bundled"] == ["broken"]
    assert not stocked["marker"].exists(), "listing ran provider code"

    text = memhost(home, "providers", "list", env=stocked["env"]).stdout
    assert "shadowed: echo from entrypoint memhost-echo-copy 9.9" in text
    assert "blocked by MEMHOST_DISABLED_PROVIDERS: badschema" in text
    assert "memory.provider: builtin" in text
    assert not stocked["marker"].exists()


def test_list_check_loads_providers_and_reports_why_each_is_not_usable(
        home: Path, stocked: dict) -> None:
    (home / "config.toml").write_text('[memory]\nprovider = "echo"\n', encoding="utf-8")
    result = memhost(home, "providers", "list", "--json", "--check", env=stocked["env"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = by_name(data["providers"])
    assert rows["echo"]["status"] == "active" and rows["echo"]["configured"]
    assert rows["picky"]["status"] == "unavailable"
    assert "set providers.picky.endpoint" in rows["picky"]["reason"]
    assert rows["explodes"]["status"] == "failed"
    assert "RuntimeError: explodes could not reach its database" in rows["explodes"]["reason"]
    failure = next(f for f in data["failures"] if f["name"] == "explodes")
    assert "Traceback" in failure["traceback"] and "provider.py" in failure["traceback"]
    assert stocked["marker"].read_text().split() == ["echo", "explodes"]

    text = memhost(home, "providers", "list", "--check", env=stocked["env"]).stdout
    assert "* memory.provider = 'echo' is active." in text
    assert "unavailable: picky needs an endpoint" in text


# -- show and use ---------------------------------------------------------------------------------


def test_show_gives_manifest_hooks_tools_and_settings_but_never_a_secret(
        home: Path, stocked: dict) -> None:
    result = memhost(home, "providers", "show", "echo", env=stocked["env"])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "echo 0.3.0" in out
    assert f"source:   user {home / 'plugins' / 'echo'}" in out
    assert "requires: pluggy>=1" in out
    assert "shadows:  entrypoint memhost-echo-copy" in out
    assert "hooks:    check_available, handle_tool_call, initialize, prefetch, session_end, " \
           "shutdown, sync_turn, tool_schemas" in out
    assert "echo_say: Say something back." in out
    assert "greeting [text] = 'hello' (default)" in out
    assert "api_key [secret] secret in .env as ECHO_API_KEY: set" in out
    data = json.loads(memhost(home, "providers", "show", "echo", "--json",
                              env=stocked["env"]).stdout)
    assert [t["name"] for t in data["tools"]] == ["echo_say"]
    for output in (out, json.dumps(data)):
        assert SECRET not in output


def test_show_reports_a_schema_file_that_raises(home: Path) -> None:
    install(home, "badschema")
    result = memhost(home, "providers", "show", "badschema")
    assert result.returncode == 1
    assert "hooks:    prefetch" in result.stdout
    assert "settings: FAILED" in result.stdout and "the schema exploded" in result.stdout


def test_show_an_unknown_name_suggests_close_matches(home: Path) -> None:
    install(home, "echo")
    result = memhost(home, "providers", "show", "ecko")
    assert result.returncode == 2
    assert "Did you mean 'echo'?" in result.stderr


def test_use_validates_the_name_and_keeps_config_comments(home: Path) -> None:
    install(home, "echo", "picky")
    config = home / "config.toml"
    config.write_text("# my settings\n[memory]\n# how much to remember\nmemory_char_limit = 3000\n",
                      encoding="utf-8")
    before = config.read_bytes()
    wrong = memhost(home, "providers", "use", "echoo")
    assert wrong.returncode == 2
    assert "Did you mean 'echo'?" in wrong.stderr and "Known providers: echo, picky" in wrong.stderr
    assert config.read_bytes() == before

    assert memhost(home, "providers", "use", "echo").returncode == 0
    text = config.read_text(encoding="utf-8")
    assert 'provider = "echo"' in text
    assert "# my settings" in text and "# how much to remember" in text

    assert memhost(home, "providers", "use", "builtin").returncode == 0
    assert "provider" not in config.read_text(encoding="utf-8")
    assert "# how much to remember" in config.read_text(encoding="utf-8")


# -- check ----------------------------------------------------------------------------------------


def steps(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    return {s["check"]: s for s in json.loads(result.stdout)["steps"]}


def test_check_a_folder_by_path(tmp_path: Path, home: Path) -> None:
    result = memhost(home, "providers", "check", str(DATA / "echo"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "echo: all checks passed." in result.stdout


def test_check_reports_every_broken_rule_and_exits_non_zero(home: Path) -> None:
    install(home, "faulty")
    result = memhost(home, "providers", "check", "faulty", "--json")
    assert result.returncode == 1
    found = steps(result)
    assert found["tools"]["status"] == "FAIL"
    assert "tool 'memory' uses a reserved core tool name" in found["tools"]["detail"]
    assert "schema 1: schema has no string 'name'" in found["tools"]["detail"]
    assert found["session: prefetch"]["status"] == "FAIL"
    assert "returned dict, expected str or None" in found["session: prefetch"]["detail"]
    assert found["session: sync_turn"]["status"] == "FAIL"
    assert "ValueError: sync went wrong" in found["session: sync_turn"]["detail"]
    assert found["hooks"]["status"] == "PASS"

    text = memhost(home, "providers", "check", "faulty").stdout
    assert "FAIL  tools" in text and "faulty: 3 checks failed." in text


def test_check_bounds_prefetch_by_the_configured_timeout(home: Path) -> None:
    install(home, "sleepy")
    (home / "config.toml").write_text("[memory]\nprefetch_timeout = 0.5\n", encoding="utf-8")
    found = steps(memhost(home, "providers", "check", "sleepy", "--json"))
    assert found["session: prefetch"]["status"] == "FAIL"
    assert "did not return within 0.5s" in found["session: prefetch"]["detail"]


@pytest.mark.parametrize(("name", "check", "detail"), [
    ("explodes", "load", "failed to import: RuntimeError: explodes could not reach"),
    ("badschema", "config schema", "the schema exploded"),
    ("picky", "check_available", "unavailable: picky needs an endpoint"),
    ("ecko", "manifest", "Did you mean 'echo'?"),
])
def test_check_stops_at_the_first_blocking_failure(home: Path, name: str, check: str,
                                                   detail: str) -> None:
    install(home, "echo", "explodes", "badschema", "picky")
    result = memhost(home, "providers", "check", name, "--json")
    assert result.returncode == 1
    found = steps(result)
    assert found[check]["status"] == "FAIL" and detail in found[check]["detail"]
    assert not any(k.startswith("session: ") for k in found), "the session ran after a failure"


def test_check_refuses_a_check_available_that_uses_the_network(home: Path) -> None:
    folder = home / "plugins" / "chatty"
    folder.mkdir(parents=True)
    (folder / "plugin.toml").write_text('name = "chatty"\nversion = "1"\nentry = "p:C"\n')
    (folder / "p.py").write_text(textwrap.dedent('''
        import socket

        from memhost import hookimpl


        class C:
            @hookimpl
            def check_available(self, config):
                try:
                    socket.create_connection(("example.invalid", 443), timeout=1)
                except OSError:
                    return None
                return None
        '''))
    found = steps(memhost(home, "providers", "check", "chatty", "--json"))
    assert found["check_available"]["status"] == "FAIL"
    assert "tried to use the network" in found["check_available"]["detail"]


# -- doctor ---------------------------------------------------------------------------------------


def test_doctor_says_which_provider_is_not_active_and_why(home: Path, stocked: dict) -> None:
    (home / "config.toml").write_text('[memory]\nprovider = "explodes"\n', encoding="utf-8")
    env = {**stocked["env"], "MEMHOST_DISABLED_PROVIDERS": ""}
    result = memhost(home, "doctor", env=env)
    assert result.returncode == 1
    out = result.stdout
    assert "memory.provider = 'explodes': NOT active (builtin memory only)" in out
    assert ("! configured provider 'explodes' (memory.provider) is not active: failed: "
            "memory provider 'explodes'") in out
    assert "RuntimeError: explodes could not reach its database driver" in out
    assert "Only the builtin memory is active." in out
    assert "- provider 'echo' from entrypoint memhost-echo-copy 9.9 is shadowed" in out
    assert "secrets of echo: ECHO_API_KEY set" in out
    assert "provider 'badschema': its config schema cannot be loaded" in out
    assert "provider 'broken' (user" in out and "key 'entry' is required" in out

    data = json.loads(memhost(home, "doctor", "--json", env=env).stdout)
    section = next(s for s in data["sections"] if s["name"] == "providers")
    assert section["configured"] == "explodes" and section["configured_active"] is False
    assert section["secrets"]["echo"] == {"ECHO_API_KEY": True}
    assert any(f["name"] == "explodes" and "Traceback" in f["traceback"]
               for f in section["failures"])
    for output in (out, json.dumps(data)):
        assert SECRET not in output


def test_doctor_with_a_working_provider_has_no_provider_problem(home: Path) -> None:
    install(home, "echo")
    (home / "config.toml").write_text('[memory]\nprovider = "echo"\n', encoding="utf-8")
    data = json.loads(memhost(home, "doctor", "--json").stdout)
    section = next(s for s in data["sections"] if s["name"] == "providers")
    assert section["configured_active"] is True
    assert not [p for p in section["problems"] if "echo" in p or "configured" in p]
    assert "memory.provider = 'echo': active" in section["lines"]
    assert "secrets of echo: ECHO_API_KEY not set" in section["lines"]
