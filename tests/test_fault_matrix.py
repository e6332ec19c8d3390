"""The fault matrix: every hook × every way a provider fails, one whole host session each.

For each (hook, mode) the session (see ``fault_matrix_host.py``) must show that:

- every turn completes and the builtin memory keeps working;
- nothing a failing provider produced reaches the user: no exception text or wrong-typed value
  in the system prompt, the recall block, the tool list or the compression note, and recalled
  text only inside its ``<memory-context>`` fence;
- every write the host handed over is accounted for: delivered, parked as failed (a file in
  ``failed/``, counted in ``status()`` and the shutdown report) or kept in the outbox (counted
  in both too) — none vanishes;
- the fault is visible in ``status()`` (a problem, the provider's health, or the hook's errors);
- shutdown keeps its bound. Where a provider call hangs, the host runs in its own process and
  the process must exit right after ``shutdown()`` returns: a hanging thread that kept it alive
  would be a fault of memhost, not of the provider.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_python_code
from fault_matrix_host import BOUNDS, LEAK, MODES, RECALLED, TURNS, run_session
from memhost.fencing import scrub_text
from memhost.outbox import Outbox
from memhost.providers import HOST_HOOKS, RETURN_TYPES
from providers_for_tests import bounded

HERE = Path(__file__).resolve().parent
#: How long the host process may take to exit once shutdown() returned (interpreter teardown).
EXIT_GRACE = 5.0


#: ``python tests/fault_matrix_host.py HOOK MODE``, as ``python -c`` so that a command server
#: forks it (:func:`cli_runner.run_python_code`): the process ends as any does, its threads
#: joined, so one that memhost left running still keeps it alive.
HOST = (f"import runpy, sys; sys.path.insert(0, {str(HERE)!r}); "
        f"runpy.run_path({str(HERE / 'fault_matrix_host.py')!r}, run_name='__main__')")


def in_subprocess(home: Path, hook: str, mode: str) -> dict[str, Any]:
    done = run_python_code(HOST, hook, mode, env={**os.environ, "MEMHOST_HOME": str(home)})
    exited = time.monotonic()
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # Both clocks are the system's monotonic clock.
    assert exited - seen["shutdown_returned"] < EXIT_GRACE, "the process outlived shutdown()"
    return seen


def in_process(home: Path, hook: str, mode: str) -> dict[str, Any]:
    return bounded(lambda: run_session(home, hook, mode), timeout=60)


# A hanging hook's session runs in a process of its own and waits out its bounds: long-running.
@pytest.mark.parametrize("mode", [pytest.param(mode, marks=pytest.mark.slow) if mode == "hangs"
                                  else mode for mode in MODES])
@pytest.mark.parametrize("hook", HOST_HOOKS)  # scratch_config: see test_check_scratch.py
def test_fault_matrix(home: Path, hook: str, mode: str) -> None:
    seen = (in_subprocess if mode == "hangs" else in_process)(home, hook, mode)

    # The turns completed and the builtin memory took every write.
    assert len(seen["turns"]) == TURNS
    answers = [json.loads(a) for a in seen["answers"]]
    memory = [a for a in answers if "usage" in a or "entry_count" in a]
    assert len(memory) == TURNS and all(a["success"] for a in memory), answers
    for n in range(TURNS):
        assert f"Matrix fact number {n}" in seen["memory_file"]

    # Nothing from the failing provider reaches the user; recall only fenced.
    for shown in (seen["prompt"], seen["kept"], " ".join(seen["tools"])):
        assert LEAK not in shown and RECALLED not in shown
    for turn in seen["turns"]:
        assert LEAK not in turn["context"]
        if turn["context"]:
            assert turn["context"].startswith("<memory-context>")
            assert RECALLED not in scrub_text(turn["context"])

    # Every write is delivered, parked as failed or kept in the outbox, and counted.
    report, status = seen["report"], seen["status"]
    failed_files = list((home / "outbox" / "matrix" / "failed").glob("*.json"))
    assert report["failed_writes"] == status["failed_writes"] == len(failed_files)
    kept = Outbox(home, "matrix").pending_count()
    assert report["kept_in_outbox"] == status["outbox_pending"] == kept
    assert seen["delivered"] + report["failed_writes"] + report["kept_in_outbox"] == seen["written"]
    if report["failed_writes"] or report["kept_in_outbox"]:
        assert report["status"] != "drained"

    # The fault is visible: a problem, a health that is not ok, errors counted on the hook, or
    # a shutdown that says what it could not do. (A wrong value from a hook that returns
    # nothing is no fault: memhost ignores it.)
    if mode != "wrong_type" or hook in RETURN_TYPES:
        loud = (any(p["provider"] == "matrix" for p in status["problems"])
                or (seen["health"] or {}).get("state", "ok") != "ok"
                or seen["hook_errors"].get(hook) or report["status"] != "drained")
        assert loud, (hook, mode, status, report)

    # Shutdown kept its bound (plus the moment the report takes).
    assert seen["shutdown_took"] < BOUNDS["shutdown_timeout"] + 1.0

