"""cold_start: what a fresh ``memhost`` process costs, and what ``import memhost`` pulls in.

Rows: the wall time of ``memhost --help``, ``memhost providers list`` (on an empty home) and
``python -c "import memhost"``, each against ``python -c pass`` started the same way; and an
import check: ``import memhost`` must not import a web server, an LLM client or a database
driver (the note also says what ``from memhost import MemoryManager``, a host's first line,
pulls in).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import (
    NOT_AVAILABLE,
    Context,
    Row,
    Target,
    alternate,
    benchmark,
    timed,
    unavailable,
)

#: Modules ``import memhost`` must never load: web servers, LLM/HTTP clients, database drivers.
HEAVY = ("starlette", "uvicorn", "fastapi", "aiohttp", "http.server", "httpx", "openai",
         "anthropic", "requests", "sqlite3", "_sqlite3", "psycopg", "psycopg2", "psycopg_pool",
         "asyncpg")


def _memhost_command() -> list[str]:
    script = Path(sys.executable).with_name("memhost")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memhost"]


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def _loaded(statement: str, env: dict[str, str]) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = _run([sys.executable, "-c", code], env)
    if done.returncode != 0:
        raise RuntimeError(f"{statement!r} failed: {done.stderr.strip()[-300:]}")
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    return [m for m in HEAVY if m in modules or any(k.startswith(m + ".") for k in modules)]


@benchmark("cold_start", "memhost --help / providers list / import vs python -c pass (ms); heavy imports")
def cold_start(ctx: Context) -> list[Row]:
    import os

    rounds = ctx.size(5, 15)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="memhost-cold-", dir=ctx.scratch) as home:
        env = {**os.environ, "MEMHOST_HOME": home, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("MEMHOST_TRACE_HOOKS", None)
        cli = _memhost_command()
        baseline = [sys.executable, "-c", "pass"]
        cases = {
            "memhost --help": [*cli, "--help"],
            "providers list": [*cli, "providers", "list"],
            "import memhost": [sys.executable, "-c", "import memhost"],
        }
        for case, command in cases.items():
            probe = _run(command, env)
            if probe.returncode != 0:
                if "invalid choice" in probe.stderr:
                    rows.append(unavailable("cold_start", NOT_AVAILABLE, "the command does not "
                                            "exist in this checkout", case=case))
                    continue
                raise RuntimeError(f"{' '.join(command[1:])} exited {probe.returncode}: "
                                   f"{probe.stderr.strip()[-300:]}")
            paired = alternate(rounds, {
                "memhost": lambda c=command: timed(lambda: _run(c, env)) * 1e3,
                "baseline": lambda: timed(lambda: _run(baseline, env)) * 1e3,
            })
            m, b = paired.medians()
            rows.append(Row("cold_start", case, m, b, paired.ratio(), "ms", paired.rounds,
                            note=f"{m - b:.0f} ms over a bare interpreter",
                            extra={"over_python_ms": m - b}))

        heavy = _loaded("import memhost", env)
        host = _loaded("from memhost import MemoryManager", env)
        row = Row("cold_start", "heavy imports", float(len(heavy)), 0.0, None, "modules", 1,
                  note=("import memhost: " + (", ".join(heavy) or "none of " + "/".join(HEAVY[:3]) + "/…")
                        + "; MemoryManager: " + (", ".join(host) or "none")),
                  extra={"import_memhost": heavy, "import_manager": host, "checked": list(HEAVY)})
        rows.append(row.judge(Target("memhost", "==", 0)))
    return rows
