"""``memhost providers check`` runs its scripted session against a scratch store: the turn it
writes ("Remember that deployments happen on Tuesdays.") never reaches the user's real recall
store, and the scratch store is gone afterwards. Against the real SQLite file and the real
PostgreSQL server."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memhost.authoring.checker import TURN
from memhost.config import update_config
from memhost.schema.envstore import EnvStore
from cli_runner import run_memhost

MARK = "deployments happen on Tuesdays"


def check(home: Path, name: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    return run_memhost(["providers", "check", name], env=env, timeout=180)


def sqlite_bodies(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT body FROM items")]


@pytest.mark.parametrize("where", ["recall.db", "absolute"])
def test_sqlite_check_leaves_the_real_database_untouched(home: Path, tmp_path: Path,
                                                         where: str) -> None:
    from memhost.discovery import load_provider

    path = tmp_path / "elsewhere" / "real.db" if where == "absolute" else home / "recall.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    update_config(home, {("memory", "provider"): "sqlite",
                         ("providers", "sqlite", "path"): str(path) if where == "absolute"
                         else "recall.db"})
    real = load_provider("sqlite", home)
    real.initialize(session_id="real", home=home, config={"path": str(path)},
                    context="primary", user_id="")
    real.sync_turn(user_content="I keep bees", assistant_content="Noted: bees.",
                   session_id="real", messages=[])
    real.shutdown()
    before = sorted(sqlite_bodies(path))

    result = check(home, "sqlite")

    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(sqlite_bodies(path)) == before
    assert not any(MARK in body for body in before)
    assert "PASS  session: sync_turn" in result.stdout and "scratch" in result.stdout


@pytest.mark.postgres
def test_postgres_check_writes_to_a_scratch_schema_and_drops_it(home: Path) -> None:
    from postgres_server import drop_run_schemas, execute, new_schema, require_postgres

    dsn = require_postgres()
    schema = new_schema("chk")
    try:
        EnvStore(home).set("MEMHOST_POSTGRES_DSN", dsn)
        update_config(home, {("memory", "provider"): "postgres",
                             ("providers", "postgres", "schema"): schema,
                             ("providers", "postgres", "user_id"): "alice"})
        schemas_before = {row[0] for row in execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memhost_check_%'")}

        result = check(home, "postgres")

        assert result.returncode == 0, result.stdout + result.stderr
        # The real schema was never even created: nothing was written there.
        real = execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s", schema)
        assert real == [(0,)]
        assert "scratch" in result.stdout
        schemas_after = {row[0] for row in execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memhost_check_%'")}
        assert schemas_after == schemas_before  # the scratch schema was dropped
    finally:
        drop_run_schemas()


def test_the_scripted_turn_is_the_one_the_issue_saw() -> None:
    assert MARK in TURN[0]


@pytest.mark.parametrize(("body", "said"), [
    ("raise RuntimeError('no scratch for you')", "scratch_config() failed: RuntimeError"),
    ("return ['not', 'a', 'dict']", "scratch_config() returned list"),
    ("import time; time.sleep(30)", "scratch_config() did not return within"),
])
def test_a_failing_scratch_config_fails_the_check_and_runs_no_session(home: Path, body: str,
                                                                      said: str) -> None:
    from memhost.authoring.checker import check_provider

    folder = home / "plugins" / "faulty"
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        'name = "faulty"\nversion = "0.1.0"\nentry = "provider:Faulty"\n')
    folder.joinpath("provider.py").write_text(
        "from memhost import hookimpl\n\n"
        "class Faulty:\n"
        "    @hookimpl\n"
        "    def scratch_config(self, config):\n"
        f"        {body}\n\n"
        "    @hookimpl\n"
        "    def sync_turn(self, user_content):\n"
        "        raise AssertionError('the session must not run')\n")

    report = check_provider("faulty", home, scale=0.1)

    steps = {step.check: step for step in report.steps}
    assert steps["scratch store"].status == "FAIL" and said in steps["scratch store"].detail
    assert steps["session"].status == "SKIP"
    assert "session: sync_turn" not in steps and not report.ok
