"""Texts the secret detector's engine found nothing in, remembered from one process to the next.

The engine builds its whole rule set on its first scan in a process (0.1–0.3 s of CPU), and
almost every ``memhost`` command prints a line that reaches it: a path or a setting's name is a
long run of token characters, the kind of text a vendor's key is. The lines a command prints
are mostly the lines it printed last time. So a process told where to keep them (the command
line: its home's ``cache/`` folder) keeps a digest of each text the engine found nothing in,
and a later process takes such a text as clean without building the engine again.

What is kept, and why it is safe:

* a 16-byte keyed BLAKE2b digest per text, never the text; a text the engine found something in
  is never kept, so a secret it finds is found again in every process;
* the key is the detector's version (the engine's release and memhost's own rules): another
  version finds none of the digests, and its texts are scanned afresh;
* memhost's own rules and the home's configured secret values are checked on every text, kept
  or not; only the engine's answer is remembered;
* the file is 0600 in a 0700 folder, like the memory beside it: a process that could add a
  digest to it could as well edit the memory files themselves.

The file only grows by appended digests (one ``write`` each, so processes appending at once do
not interleave); past :data:`MAX_BYTES` it is started again. A file that cannot be read or
written is ignored: the engine then scans, as it would without this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from memhost.files import ensure_private_dir, open_append_private

log = logging.getLogger(__name__)

DIGEST_BYTES = 16
#: About 32,000 texts: a command's lines for many homes and versions of its output.
MAX_BYTES = 32768 * DIGEST_BYTES
FILENAME = "secret-engine-clean"


class CleanTexts:
    """The digests kept in one file, read the first time they are asked for."""

    def __init__(self, path: Path, version: Callable[[], str]) -> None:
        self.path = path
        self._version = version  # named when first needed: a command may scan nothing
        self._key: bytes | None = None
        self._known: set[bytes] | None = None
        self._fd = -1
        self._lock = threading.Lock()

    def _digest(self, text: str) -> bytes:
        if self._key is None:
            self._key = hashlib.sha256(self._version().encode("utf-8")).digest()
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=self._key,
                               digest_size=DIGEST_BYTES).digest()

    def _load(self) -> set[bytes]:
        if self._known is None:
            try:
                data = self.path.read_bytes()
            except OSError:
                data = b""
            if len(data) > MAX_BYTES:
                data = b""
                with contextlib.suppress(OSError):
                    os.unlink(self.path)  # started again
            whole = len(data) - len(data) % DIGEST_BYTES  # a torn last digest is left out
            self._known = {data[i:i + DIGEST_BYTES] for i in range(0, whole, DIGEST_BYTES)}
        return self._known

    def known(self, text: str) -> bool:
        """Whether the engine found nothing in ``text`` before (in any process)."""
        digest = self._digest(text)
        with self._lock:
            return digest in self._load()

    def add(self, text: str) -> None:
        """Keep ``text`` as one the engine found nothing in."""
        digest = self._digest(text)
        with self._lock:
            known = self._load()
            if digest in known:
                return
            known.add(digest)
            try:
                if self._fd < 0:
                    folder = self.path.parent
                    if not folder.parent.is_dir():
                        return  # no home yet: a command that only reads must not make one
                    ensure_private_dir(folder)
                    self._fd = open_append_private(self.path)
                os.write(self._fd, digest)
            except OSError as exc:  # a read-only home: every process scans, that is all
                log.debug("could not keep a clean text in %s: %s", self.path, exc)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
