"""The secret detector's engine's answers, remembered from one process to the next.

The engine builds its whole rule set on its first scan in a process (0.1–0.3 s of CPU), and
almost every ``memhost`` command hands it a text: a path or a setting's name is a long run of
token characters, the kind of text a vendor's key is, and a home whose settings hold a token
hands it that setting's line in every command. The texts a command scans are mostly the texts
it scanned last time. So a process told where to keep them (the command line: its home's
``cache/`` folder) keeps the engine's answer for each text it read, and a later process
answers such a text from the text itself without building the engine again. Two files:

* ``secret-engine-clean``: a digest per text the engine found nothing in (most of them), read
  as a set of fixed-size records;
* ``secret-engine-found``: a digest per text it found something in, and the offset and length
  of each value found.

What is kept, and why it is safe:

* a 16-byte keyed BLAKE2b digest per text, never the text, and where each finding is, never
  the value: the value is taken from the text again, so the files alone tell nobody a secret;
* the key is the detector's version (the engine's release and memhost's own rules): another
  version finds none of the digests, and its texts are scanned afresh;
* memhost's own rules and the home's configured secret values are checked on every text, kept
  or not; only the engine's answer is remembered;
* the files are 0600 in a 0700 folder, like the memory beside them: a process that could add a
  record to them could as well edit the memory files themselves.

The files only grow by appended records (one ``write`` each, so processes appending at once
do not interleave); past :data:`MAX_BYTES` a file is started again. A file that cannot be read
or written is ignored: the engine then scans, as it would without this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from memhost.files import ensure_private_dir, open_append_private

log = logging.getLogger(__name__)

DIGEST_BYTES = 16
CLEAN_FILE = "secret-engine-clean"
FOUND_FILE = "secret-engine-found"
#: Either file past this size is started again (the clean one then held ~32,000 texts).
MAX_BYTES = 512 * 1024
#: A record of the found file: the digest, how many findings (1–255), each one's place.
_COUNT = struct.Struct("<B")
_SPAN = struct.Struct("<II")

Spans = tuple[tuple[int, int], ...]


class _Appended:
    """One file of records, appended to with one ``write`` per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1
        self._stopped = False

    def read(self) -> bytes:
        try:
            data = self.path.read_bytes()
        except OSError:
            return b""
        if len(data) > MAX_BYTES:
            with contextlib.suppress(OSError):
                os.unlink(self.path)  # started again
            return b""
        return data

    def append(self, record: bytes) -> None:
        if self._stopped:
            return
        try:
            if self._fd < 0:
                folder = self.path.parent
                if not folder.parent.is_dir():
                    return  # no home yet: a command that only reads must not make one
                ensure_private_dir(folder)
                self._fd = open_append_private(self.path)
            if os.write(self._fd, record) != len(record):
                # Cut short (a full disk): a record appended after it would be read out of
                # step, so this process appends no more.
                self._stopped = True
        except OSError as exc:  # a read-only home: every process scans, that is all
            log.debug("could not keep the engine's answer in %s: %s", self.path, exc)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class EngineAnswers:
    """The answers kept in one folder, read the first time they are asked for."""

    def __init__(self, folder: Path, version: Callable[[], str]) -> None:
        self.folder = folder
        self._version = version  # named when first needed: a command may scan nothing
        self._key: bytes | None = None
        self._clean_file = _Appended(folder / CLEAN_FILE)
        self._found_file = _Appended(folder / FOUND_FILE)
        self._clean: set[bytes] | None = None
        self._found: dict[bytes, Spans] = {}
        self._lock = threading.Lock()

    def _digest(self, text: str) -> bytes:
        if self._key is None:
            self._key = hashlib.sha256(self._version().encode("utf-8")).digest()
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=self._key,
                               digest_size=DIGEST_BYTES).digest()

    def _load(self) -> set[bytes]:
        if self._clean is None:
            data = self._clean_file.read()
            whole = len(data) - len(data) % DIGEST_BYTES  # a torn last digest is left out
            self._clean = {data[i:i + DIGEST_BYTES] for i in range(0, whole, DIGEST_BYTES)}
            self._found = _found_records(self._found_file.read())
        return self._clean

    def answer(self, text: str) -> frozenset[str] | None:
        """The values the engine reported in ``text`` when a process scanned it before (empty:
        it found nothing), taken from ``text``; ``None`` when no process kept its answer."""
        digest = self._digest(text)
        with self._lock:
            if digest in self._load():
                return frozenset()
            spans = self._found.get(digest)
        if spans is None:
            return None
        values = [text[start:start + length] for start, length in spans]
        if any(len(value) != length for value, (_, length) in zip(values, spans, strict=True)):
            return None  # a record that does not fit its text: scan it again
        return frozenset(values)

    def add(self, text: str, values: Iterable[str] = ()) -> None:
        """Keep the engine's answer for ``text``: the values it reported in it (each a part of
        ``text``), or none."""
        values = set(values)
        if len(values) > 255 or not all(value and value in text for value in values):
            return  # not kept: the engine reads such a text again
        spans = tuple(sorted((text.index(value), len(value)) for value in values))
        digest = self._digest(text)
        with self._lock:
            clean = self._load()
            if digest in clean or digest in self._found:
                return
            if spans:
                self._found[digest] = spans
                self._found_file.append(digest + _COUNT.pack(len(spans))
                                        + b"".join(_SPAN.pack(*span) for span in spans))
            else:
                clean.add(digest)
                self._clean_file.append(digest)

    def close(self) -> None:
        with self._lock:
            self._clean_file.close()
            self._found_file.close()


def _found_records(data: bytes) -> dict[bytes, Spans]:
    """The found file's records; a torn last record (a process stopped mid-write) is left out."""
    found: dict[bytes, Spans] = {}
    at, end = 0, len(data)
    while at + DIGEST_BYTES + _COUNT.size <= end:
        digest = data[at:at + DIGEST_BYTES]
        (count,) = _COUNT.unpack_from(data, at + DIGEST_BYTES)
        start = at + DIGEST_BYTES + _COUNT.size
        stop = start + count * _SPAN.size
        if stop > end:
            break
        found[digest] = tuple(_SPAN.unpack_from(data, start + i * _SPAN.size)
                              for i in range(count))
        at = stop
    return found
