"""A long-lived writer process for the concurrency benchmark (``python -m benchmarks.writer``).

It reads one JSON command per line on stdin, prepares, answers ``ready``, waits for the start
file, runs its writes and answers with its start and end times (``time.monotonic``, one clock
for every process on the machine) and how many writes failed. An empty line ends it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _answer(data: dict) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def texts(tag: str, count: int) -> list[str]:
    """The entries a writer adds."""
    return [f"{tag} entry {i} The user prefers short answers with one example." for i in range(count)]


def _warm_up() -> None:
    """One write of each kind, of an entry like those timed, so one-time costs are not timed:
    imports, the features its words reach compiled, the learned reading's table read (a note
    of fewer than eight distinct words, as "warm-up entry" was, never reaches it)."""
    import tempfile

    from benchmarks import bare
    from memhost.builtin_providers.store import MemoryStore

    entry = texts("warm-up", 1)[0]
    with tempfile.TemporaryDirectory(prefix="memhost-writer-") as scratch:
        assert MemoryStore(Path(scratch) / "home").add("memory", entry).ok
        bare.durable_edit(Path(scratch) / "bare.md", bare.append(entry))


def main() -> int:
    from benchmarks import bare
    from memhost.builtin_providers.store import MemoryStore

    stores: dict[str, MemoryStore] = {}
    _warm_up()
    for line in sys.stdin:
        if not line.strip():
            break
        cmd = json.loads(line)
        count, tag, go = cmd["count"], cmd["tag"], Path(cmd["go"])
        entries = texts(tag, count)
        if cmd["mode"] == "memhost":
            home = cmd["home"]
            store = stores.get(home)
            if store is None:
                store = stores[home] = MemoryStore(Path(home), memory_char_limit=10_000_000,
                                                   lock_timeout=300)

            def write(text: str) -> bool:
                return store.add("memory", text).ok
        else:
            path = Path(cmd["file"])

            def write(text: str) -> bool:
                bare.durable_edit(path, bare.append(text))
                return True
        _answer({"ready": True})
        while not go.exists():
            time.sleep(0.0005)
        failed = 0
        start = time.monotonic()
        for text in entries:
            if not write(text):
                failed += 1
        _answer({"start": start, "end": time.monotonic(), "failed": failed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
