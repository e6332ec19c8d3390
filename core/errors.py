"""The exceptions memhost raises, and the one a provider may raise on purpose."""

from __future__ import annotations


class MemhostError(Exception):
    """Base class: every memhost error carries a message a person can act on."""


class ConfigError(MemhostError):
    """The configuration is invalid; the message names the file, the key and what is expected."""


class ProviderError(MemhostError):
    """A provider could not be registered or loaded; the message names the provider."""


class RetryableError(MemhostError):
    """Raised by a provider when a write failed for a passing reason (a locked database, a
    dropped connection). The manager keeps the write in the outbox and retries it, in order,
    with backoff, instead of counting it as lost."""
