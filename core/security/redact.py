"""Egress redaction: secrets never leave memhost for a provider.

Everything handed to a provider (turn text, tool output, transcripts, mirror payloads, nested in
dicts and lists) goes through :func:`redact`. It masks what the secret detector finds and the
values this process knows to be secrets whatever they look like (a provider's password read from
``.env``: :func:`memhost.security.masking.remember` hands them over, :func:`mask_values`). A value
masked anywhere in one hand-off is masked everywhere in it, so a key first seen in a tool result
is also caught where the model later repeats it bare. Half a character (a lone surrogate: JSON's
``"\\ud800"`` decodes to one) leaves as U+FFFD: no UTF-8 database, file or wire can carry it, and
a provider handed one failed its write, which then came back from the outbox at every start. The
caller's objects are never mutated; unchanged values come back as the same objects.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, TypeVar

from memhost.security import detector
from memhost.security.text import encodable, half_character

MASK = "[redacted]"

T = TypeVar("T")


#: Secret values this process holds, longest first (:func:`mask_values`).
_KNOWN: tuple[str, ...] = ()


def mask_values(values: tuple[str, ...]) -> None:
    """Mask these values too, in everything :func:`redact` sees from now on (the whole set,
    longest first: :func:`memhost.security.masking.remember` gives it)."""
    global _KNOWN
    _KNOWN = values


def known_values() -> tuple[str, ...]:
    """The values :func:`mask_values` was last given."""
    return _KNOWN


def holds_known_value(text: str) -> bool:
    """Whether ``text`` holds one of :func:`known_values` (a substring search each: no
    detector, nothing cached, since the values change while a process runs)."""
    return any(value in text for value in _KNOWN)


def find_secrets(text: str) -> set[str]:
    """The secret values in ``text``, as they appear once its invisible characters are folded
    (a token split by a zero-width space is found whole)."""
    return set(detector.scan(_folded(text))) - {MASK}


def _folded(text: str) -> str:
    # ASCII holds no invisible character; the Unicode tables are loaded only for other text.
    if text.isascii():
        return text
    from memhost.security.text import strip_invisible

    return strip_invisible(text)


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds anything :func:`redact` would mask."""
    return any(len(s) >= MIN_MASKED for s in find_secrets(text))


def version() -> str:
    """Changes whenever what :func:`find_secrets` reports may change (for cached verdicts)."""
    return detector.version()


# A shorter value is not masked: replacing it wherever it appears would garble ordinary words.
MIN_MASKED = 4


def _mask_text(text: str, secrets: list[str]) -> str:
    if not text.isascii() and any(s not in text and s in (folded := _folded(text))
                                  for s in secrets):
        text = folded  # a secret split by invisible characters: mask the folded text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return encodable(text)  # after masking: a value may hold the surrogate itself


def _rebuild(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _mask_text(value, secrets)
    if isinstance(value, dict):
        pairs = [(_rebuild(k, secrets), _rebuild(v, secrets)) for k, v in value.items()]
        if all(nk is k and nv is v for (nk, nv), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, (list, tuple)):
        items = [_rebuild(item, secrets) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    if isinstance(value, (set, frozenset)):
        # _collect() looks inside sets to find secrets, so they must be masked here too.
        members = {_rebuild(item, secrets) for item in value}
        if members == value:
            return value
        return type(value)(members)
    return value


# A dict key that names a credential: its string value is a secret whatever it looks like
# ({"password": "hunter2"}, {"DB_PASSWORD": ...}, {"dsn": ...}).
_SECRET_KEY = re.compile(
    r"^(?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|"
    r"access[_-]?key|secret[_-]?key|client[_-]?secret|private[_-]?key|authorization|dsn)s?$",
    re.IGNORECASE)


@lru_cache(maxsize=1024)
def _names_secret(key: str) -> bool:
    # A transcript repeats the same few keys ("role", "content") in every message.
    return _SECRET_KEY.match(key) is not None


def _collect(value: Any, texts: set[str], keyed: set[str]) -> None:
    """Every string in ``value`` (dict keys too) into ``texts``, and every string whose key
    names a credential into ``keyed``, in one walk (a turn's hand-off is walked on the host's
    thread, so this is kept lean)."""
    if isinstance(value, str):
        texts.add(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                texts.add(key)
                if isinstance(item, str):
                    texts.add(item)
                    if len(item) >= MIN_MASKED and item != MASK and _names_secret(key):
                        keyed.add(item)
                    continue
            else:
                _collect(key, texts, keyed)
            _collect(item, texts, keyed)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            if isinstance(item, str):
                texts.add(item)
            else:
                _collect(item, texts, keyed)


# The detector reports nothing in a text this short (folding only makes a text shorter).
_SHORTEST_SCANNED = 8


def redact(value: T) -> T:
    """Mask every secret in ``value`` (a string or any nesting of dicts, lists, tuples and sets)."""
    texts: set[str] = set()  # a sync's transcript repeats its turn: each text is scanned once
    secrets: set[str] = set()
    _collect(value, texts, secrets)
    known = _KNOWN
    for text in texts:
        if len(text) >= _SHORTEST_SCANNED:
            found = detector.scan(_folded(text))
            if found:
                secrets |= found
        if known:
            secrets.update(value for value in known if value in text)
    secrets.discard(MASK)
    if not secrets and not any(map(half_character, texts)):
        return value
    # Longest first, so a secret that contains a shorter one is masked whole.
    ordered = sorted((s for s in secrets if len(s) >= MIN_MASKED), key=len, reverse=True)
    return _rebuild(value, ordered)


def redact_many(*values: Any) -> tuple[Any, ...]:
    """Redact several values as one hand-off: a secret found in one is masked in all."""
    return tuple(redact(list(values)))
