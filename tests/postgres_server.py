"""The PostgreSQL server the postgres provider's tests run against.

``MEMHOST_TEST_POSTGRES_DSN`` names it (default: 127.0.0.1:5432, database ``test``, user
``postgres``, trust auth, as CI starts it). A test asks for it through :func:`require_postgres`:
skipped with the reason when the server or psycopg is missing, failed instead under CI (see
:mod:`services`). Each test run works in its own schemas (``memhost_t<pid>_<random>...``) and
drops them at the end.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from services import require_service

DSN = os.environ.get("MEMHOST_TEST_POSTGRES_DSN",
                     "host=127.0.0.1 port=5432 dbname=test user=postgres")
RUN_PREFIX = f"memhost_t{os.getpid()}_{secrets.token_hex(3)}"


def postgres_problem(dsn: str = DSN) -> str | None:
    """Why the tests cannot use the server, or ``None``."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        return f"psycopg is not installed ({exc}); pip install -e '.[test]'"
    try:
        with psycopg.connect(dsn, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return f"cannot connect to PostgreSQL ({dsn}): {type(exc).__name__}: {exc}"
    return None


def require_postgres() -> str:
    """The DSN of a reachable server, or skip (fail under CI)."""
    require_service("PostgreSQL", postgres_problem())
    return DSN


def new_schema(label: str = "") -> str:
    """A schema name no other test run uses (dropped by :func:`drop_run_schemas`)."""
    return f"{RUN_PREFIX}_{label}{secrets.token_hex(3)}"[:63]


def execute(sql: str, *params: Any, dsn: str = DSN) -> list[tuple[Any, ...]]:
    """Run one statement on a connection of its own (autocommit); the rows it returned."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(sql, params or None)
        return cursor.fetchall() if cursor.description else []


def terminate(application_name: str) -> int:
    """End every server connection with this application name, from a separate connection, as
    a server restart or a dropped network would; how many were ended."""
    found = execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s AND pid <> pg_backend_pid()", application_name)
    return sum(1 for (ended,) in found if ended)


def drop_run_schemas() -> None:
    """Drop every schema this test run created."""
    if postgres_problem() is not None:
        return
    for (name,) in execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s",
                           RUN_PREFIX + "%"):
        execute(f'DROP SCHEMA "{name}" CASCADE')
