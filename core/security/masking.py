"""No secret in any error, log line, status field, API answer or trace.

Two things are masked, by one function, :func:`scrub`:

- the values of every secret this process has read from (or written to) the env store
  (``<home>/.env`` and the process environment, through :class:`memhost.schema.envstore.EnvStore`),
  whatever their key names: a provider's DSN, a ``license_key``, the review model's API key.
  :func:`remember` adds one; the env store calls it for every value it reads or writes;
- whatever the secret detector finds (:mod:`memhost.security.redact`), so a credential that
  never went through the env store (a DSN typed into a text field, a token in a driver's error)
  is masked too.

It is applied where text leaves memhost, not where each message is written: a log record of any
memhost logger (:func:`install_logging`, a record factory, so handlers the host adds are covered
too; records of other loggers have the remembered values masked), everything the ``memhost``
command prints (:class:`ScrubbingStream`), ``MemoryManager.status()``, the settings API's
answers, the MCP server's answers, and ``MEMHOST_TRACE_HOOKS`` lines.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
import traceback
from pathlib import Path
from typing import Any, TextIO, TypeVar

from memhost.security.redact import (
    MASK,
    MIN_MASKED,
    find_secrets,
    known_values,
    mask_values,
    redact,
)

T = TypeVar("T")

_values: set[str] = set()
_lock = threading.Lock()


def remember(value: str | None) -> None:
    """Mask ``value`` wherever it appears from now on (a secret this process holds)."""
    if not value or len(value) < MIN_MASKED or value in _values or value == MASK:
        return
    with _lock:
        # A multi-line value (a PEM key kept in .env) is also masked line by line, since a
        # log or traceback may show one of its lines.
        parts = {value, *(line.strip() for line in value.splitlines()
                          if len(line.strip()) >= MIN_MASKED)}
        _values.update(parts)
        # Kept by redact, longest first, so egress masks them too (what a provider is handed).
        mask_values(tuple(sorted(_values, key=len, reverse=True)))


def remember_found(value: T) -> T:
    """Remember every secret the detector finds in ``value`` (a config: strings nested in dicts
    and lists); returns ``value``."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            for found in find_secrets(item):
                remember(found)
        elif isinstance(item, dict):
            for key, inner in item.items():  # a key names its value: {"api_token": "…"}
                stack.append(f"{key}: {inner}" if isinstance(inner, str) else inner)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return value


def remember_home(home: Path) -> None:
    """Remember the secrets of ``home``: every value in its .env, and whatever the detector
    finds in its config.toml (a token typed into a provider's text field), so a command masks
    them even when a child process is what read them. Unreadable files are skipped: the
    command that needs them reports that."""
    import tomllib

    from memhost.home import config_path
    from memhost.schema.envstore import EnvStore

    with contextlib.suppress(OSError, ValueError):
        EnvStore(home).remember_all()
    # Nesting too deep to parse (RecursionError) is a broken file like any other: the config's
    # own reading says what is wrong with it.
    with contextlib.suppress(OSError, ValueError, RecursionError):
        remember_found(tomllib.loads(config_path(home).read_text(encoding="utf-8")))


def forget_all() -> None:
    """Forget every remembered value (tests, and a host that switches homes)."""
    with _lock:
        _values.clear()
        mask_values(())


def mask_known(text: str) -> str:
    """``text`` with every remembered secret value masked (cheap: no detector)."""
    for value in known_values():
        if value in text:
            text = text.replace(value, MASK)
    return text


def scrub(text: str) -> str:
    """``text`` with remembered secret values and everything the detector finds masked."""
    return redact(mask_known(text))


def scrub_value(value: T) -> T:
    """:func:`scrub` for a JSON-like value (dicts, lists, tuples of strings): remembered values
    masked everywhere, then :func:`redact`, which also masks a value whose key names a secret
    (``{"api_token": "…"}``)."""
    return redact(_mask_known_in(value))


def _mask_known_in(value: Any) -> Any:
    if not known_values():
        return value
    if isinstance(value, str):
        return mask_known(value)
    if isinstance(value, dict):
        return {_mask_known_in(k): _mask_known_in(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_mask_known_in(item) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value


def describe_error(exc: BaseException) -> str:
    """``"TypeName: message"`` for an exception, scrubbed: how an error is shown anywhere."""
    return scrub(f"{type(exc).__name__}: {exc}")


# -- logging --------------------------------------------------------------------------------------


class SecretFilter(logging.Filter):
    """Masks secrets in a record's message, traceback and stack: the message is formatted here
    (``record.msg`` becomes the masked text, ``record.args`` empty) and the traceback text is
    kept in ``record.exc_text``, which formatters use instead of formatting it again."""

    def __init__(self, *, detector: bool = True) -> None:
        super().__init__()
        self.clean = scrub if detector else mask_known

    def filter(self, record: logging.LogRecord) -> bool:
        if self.clean is mask_known and not known_values():
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string is logging's to report, not ours
            return True
        clean = self.clean(message)
        if clean != message or record.args:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            record.exc_text = self.clean("".join(
                traceback.format_exception(*record.exc_info)).rstrip("\n"))
        if record.stack_info:
            record.stack_info = self.clean(record.stack_info)
        return True


_MEMHOST = SecretFilter()
_OTHERS = SecretFilter(detector=False)
_installed = False


def install_logging() -> None:
    """Mask secrets in every log record from now on (idempotent): records of memhost's loggers
    (``memhost``, ``memhost.*``) fully, others for the remembered values only."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            name = record.name
            if name == "memhost" or name.startswith("memhost."):
                _MEMHOST.filter(record)
            elif known_values():
                _OTHERS.filter(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


# -- the command line's output --------------------------------------------------------------------


class ScrubbingStream(io.TextIOBase):
    """A text stream that scrubs each complete line before passing it on (a secret split over
    two writes is still whole when its line is scrubbed); :meth:`flush` passes on the rest."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.pending = ""
        self.lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self.lock:
            self.pending += text
            if "\n" in self.pending:
                done, _, self.pending = self.pending.rpartition("\n")
                self.inner.write(scrub(done + "\n"))
        return len(text)

    def flush(self) -> None:
        with self.lock:
            if self.pending:
                self.inner.write(scrub(self.pending))
                self.pending = ""
        self.inner.flush()

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return self.inner.isatty()

    @property
    def buffer(self) -> Any:
        """The binary stream underneath (a protocol such as MCP over stdio writes bytes)."""
        return self.inner.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


def unscrubbed(stream: TextIO) -> TextIO:
    """The stream under a :class:`ScrubbingStream` (for the one line a server prints on purpose:
    its own token, which the user needs)."""
    if isinstance(stream, ScrubbingStream):
        stream.flush()
        return stream.inner
    return stream


install_logging()  # importing this module is what turns masking on for the process
