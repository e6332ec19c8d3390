"""Tables memhost ships beside its modules and writes from what they are made of (the
prefilter's RE2 patterns from the features, the secret engine's keywords from its rule set):
each module's ``main`` writes its table again, or with ``--check`` exits 1 when the shipped one
is not what it would write (a test runs the check)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def write_or_check(path: Path, text: str, argv: list[str] | None, *, prog: str,
                   description: str, summary: str) -> int:
    """Write ``text`` to ``path``, or with ``--check`` in ``argv`` compare it with what is
    there; ``summary`` says what the table holds."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true",
                        help=f"only check that {path.name} is current (exit 1 when it is not)")
    args = parser.parse_args(argv)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path.name} is stale: run {prog}", file=sys.stderr)
            return 1
        print(f"{path.name} is current ({summary})")
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({summary})")
    return 0
