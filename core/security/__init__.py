"""Security: what memhost keeps out of prompts and away from providers.

:mod:`~memhost.security.threats` scans text that ends up in a system prompt for injected
instructions, exfiltration and persistence tricks, and invisible characters;
:mod:`~memhost.security.redact` masks secrets in everything handed to a provider (egress
redaction).
"""
