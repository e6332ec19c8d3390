"""Egress redaction: secrets never leave memhost for a provider.

Everything handed to a provider (turn text, tool output, transcripts, mirror payloads, nested in
dicts and lists) goes through :func:`redact`. A value masked anywhere in one hand-off is masked
everywhere in it, so a key first seen in a tool result is also caught where the model later
repeats it bare. The caller's objects are never mutated; unchanged values come back as the same
objects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

MASK = "[redacted]"

T = TypeVar("T")

# Each pattern's "secret" group is what gets masked; the rest (a key name, "Bearer ") stays so
# the text still reads sensibly.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, flags))
    for name, rx, flags in [
        ("pem_block", r"(?P<secret>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----)", re.S),
        ("openai_key", r"(?P<secret>\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,})", 0),
        ("github_token", r"(?P<secret>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))", 0),
        ("aws_access_key", r"(?P<secret>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)", 0),
        ("slack_token", r"(?P<secret>\bxox[abposr]-[A-Za-z0-9-]{10,})", 0),
        ("google_api_key", r"(?P<secret>\bAIza[0-9A-Za-z_-]{35})", 0),
        ("gitlab_token", r"(?P<secret>\bglpat-[A-Za-z0-9_-]{20,})", 0),
        ("huggingface_token", r"(?P<secret>\bhf_[A-Za-z0-9]{30,})", 0),
        ("jwt", r"(?P<secret>\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", 0),
        ("bearer", r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})", re.I),
        # Basic credentials are base64 of "user:password"; only in a header, since "Basic" on
        # its own starts ordinary phrases ("Basic understanding").
        ("basic_auth", r"\bAuthorization[\"']?\s*[:=]\s*[\"']?Basic\s+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})", re.I),
        ("url_password", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]{4,})@", re.I),
        ("assignment",
         # An optional prefix ("DB_", "GITHUB_", "my-") still names a credential.
         r"\b(?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
         # "auth" but not "author"/"authority": "author: Jane Austen" is not a credential.
         r"secret[_-]?key|client[_-]?secret|authorization|auth(?!or))\w*[\"']?\s*[:=]\s*[\"']?"
         r"(?!(?:Bearer|Basic|Token)\b)(?P<secret>[^\s\"',;]{6,})", re.I),
    ]
)


# Literals every match of a pattern contains (lower case for the case-insensitive patterns).
# Most text handed to a provider holds no secret, and a dozen regex scans of a turn cost hundreds
# of microseconds, while looking for these literals costs a few: find_secrets skips a pattern
# whose literals are all absent. Keep this in step with SECRET_PATTERNS when a pattern changes;
# a pattern without an entry here is always run.
_LITERALS: dict[str, tuple[str, ...]] = {
    "pem_block": ("-----BEGIN ",),
    "openai_key": ("sk-",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "aws_access_key": ("AKIA", "ASIA"),
    "slack_token": ("xox",),
    "google_api_key": ("AIza",),
    "gitlab_token": ("glpat-",),
    "huggingface_token": ("hf_",),
    "jwt": ("eyJ",),
    "bearer": ("bearer",),
    "basic_auth": ("authorization",),
    "url_password": ("://",),
    "assignment": ("pass", "pwd", "secret", "token", "key", "auth"),
}


# Per pattern: its literals (None: always run) and whether they are matched case-insensitively.
_GATES = tuple((pattern, _LITERALS.get(name), bool(pattern.flags & re.IGNORECASE))
               for name, pattern in SECRET_PATTERNS)
_CASED = tuple(lit for _, lits, folded in _GATES if lits and not folded for lit in lits)
_FOLDED = tuple(lit for _, lits, folded in _GATES if lits and folded for lit in lits)
_ALL_GATED = all(lits is not None for _, lits, _ in _GATES)


# The only non-ASCII characters that re.IGNORECASE matches with an ASCII letter (İ, ı, ſ and the
# Kelvin sign; checked over every code point).
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def _contains_any(text: str, literals: tuple[str, ...]) -> bool:
    for literal in literals:
        if literal in text:
            return True
    return False


def find_secrets(text: str) -> set[str]:
    """The secret values in ``text``, as they appear."""
    found: set[str] = set()
    # text.lower() finds a case-insensitive literal exactly where re.IGNORECASE would, unless the
    # text holds one of the four letters re's case folding pairs with an ASCII letter; such text
    # runs every case-insensitive pattern.
    lowered = (text.lower() if text.isascii() or not _contains_any(text, _FOLDS_TO_ASCII)
               else None)
    if (lowered is not None and _ALL_GATED and not _contains_any(text, _CASED)
            and not _contains_any(lowered, _FOLDED)):
        return found  # the common case: not one literal of any pattern is present
    for pattern, literals, folded in _GATES:
        if literals is not None:
            haystack = lowered if folded else text
            if haystack is not None and not _contains_any(haystack, literals):
                continue
        for match in pattern.finditer(text):
            secret = match.group("secret")
            if secret and secret != MASK:
                found.add(secret)
    return found


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)


def _mask_text(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


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
        # _strings() looks inside sets to find secrets, so they must be masked here too.
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


def _keyed_secrets(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if (isinstance(key, str) and isinstance(item, str) and len(item) >= 4
                    and item != MASK and _SECRET_KEY.match(key)):
                yield item
            yield from _keyed_secrets(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _keyed_secrets(item)


def redact(value: T) -> T:
    """Mask every secret in ``value`` (a string or any nesting of dicts, lists, tuples and sets)."""
    secrets: set[str] = set(_keyed_secrets(value))
    scanned: set[str] = set()
    for text in _strings(value):
        if text not in scanned:  # a sync's transcript repeats its turn: scan each text once
            scanned.add(text)
            secrets |= find_secrets(text)
    if not secrets:
        return value
    # Longest first, so a secret that contains a shorter one is masked whole.
    ordered = sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True)
    return _rebuild(value, ordered)


def redact_many(*values: Any) -> tuple[Any, ...]:
    """Redact several values as one hand-off: a secret found in one is masked in all."""
    return tuple(redact(list(values)))
