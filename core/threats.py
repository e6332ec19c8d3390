"""Threat scanning for text that ends up in a system prompt.

Memory entries are replayed into every future session's system prompt, so a write that smuggles
in instructions ("ignore previous instructions"), an exfiltration step or a persistence trick
would keep working long after the conversation that planted it. Findings carry stable ids so a
refusal can say exactly which rule fired.

Order: invisible and bidi characters are checked on the raw text (NFKC would fold some away),
then the text is NFKC-normalised (folding full-width look-alikes) and matched case-insensitively.
Filler between keywords is bounded to a few words so no pattern can backtrack badly.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memhost.redact import SECRET_PATTERNS

MAX_SCAN_CHARS = 65_536

INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

# Scopes are cumulative: "all" patterns apply everywhere, "context" adds those for text that
# enters a model's context, "strict" adds the aggressive ones for durable, user-mediated writes.
SCOPES = ("all", "context", "strict")

_GAP = r"(?:[\s\W]+\w+){0,8}?[\s\W]+"  # up to eight filler words between two keywords


def _near(*parts: str) -> str:
    return _GAP.join(f"(?:{part})" for part in parts)


_PATTERNS: list[tuple[str, str, str]] = [
    # injection
    ("prompt_injection", "all",
     _near(r"\b(?:ignore|disregard|forget|override)", r"(?:previous|prior|above|earlier|all|any|your)",
           r"(?:instructions?|rules|prompts?|directions|guidelines)\b")),
    ("sys_prompt_override", "all",
     r"\b(?:new|updated|override|replace(?:ment)?)\s+(?:the\s+)?system\s+prompt\b|\bsystem\s+prompt\s+override\b"),
    ("disregard_rules", "all",
     _near(r"\b(?:do\s+not|don't|never)\s+(?:follow|obey)", r"(?:rules|instructions|guidelines|policies)\b")),
    ("bypass_restrictions", "all",
     _near(r"\b(?:bypass|circumvent|disable|evade)", r"(?:restrictions|safety|safeguards|guardrails|filters)\b")),
    ("html_comment_injection", "all",
     r"<!--(?:(?!-->).){0,400}?\b(?:ignore|override|system|secret|hidden|instruction)s?\b"),
    ("hidden_div", "all", r"\bdisplay\s*:\s*none\b|\bvisibility\s*:\s*hidden\b"),
    ("translate_execute", "all", _near(r"\btranslate\b", r"(?:and|then)\s+(?:execute|run|eval)\b")),
    ("deception_hide", "all",
     _near(r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|show|mention|reveal)", r"(?:the\s+)?user\b")),
    # exfiltration
    ("exfil_curl", "all", r"\bcurl\b[^\n]{0,200}\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"),
    ("exfil_wget", "all", r"\bwget\b[^\n]{0,200}\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"),
    # "more" and "type" are also plain English ("more than one .env file"), so for them the
    # secret file must be the very next word, as in a command line.
    ("read_secrets", "all",
     r"\b(?:(?:cat|less|head|tail)\s+[^\n]{0,80}?|(?:more|type)\s+\S*?)"
     r"(?:\.env\b|credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b)"),
    # role hijack
    ("role_hijack", "context", r"\byou\s+are\s+(?:now|from\s+now\s+on)\s+(?:a|an|the|my)\s+\w+"),
    ("role_pretend", "context", r"\b(?:pretend|act\s+as\s+if)\s+(?:to\s+be|you\s+are|you're|you\s+have\s+no)\b"),
    ("identity_override", "context", r"\b(?:call|name)\s+yourself\s+\w+"),
    ("leak_system_prompt", "context",
     # "the instructions" alone is everyday text ("print the instructions for the build").
     _near(r"\b(?:reveal|print|show|output|repeat|leak)",
           r"(?:your\s+(?:system\s+prompt|instructions|hidden\s+prompt)|the\s+(?:system|hidden)\s+"
           r"(?:prompt|instructions))\b")),
    # Bare "filters" and "important update:" are ordinary notes ("drop the duplicate filters in
    # the query", "Important update: the API moved to v2"); the attacks name content filtering
    # or pose as a system message.
    ("remove_filters", "context",
     _near(r"\b(?:remove|turn\s+off|drop|disable)",
           r"(?:(?:content|safety|output)\s+filter(?:s|ing)?|moderation)\b")),
    ("fake_update", "context", r"\b(?:important|urgent|critical)\s+system\s+(?:update|message)\s*:"),
    ("forced_action", "context",
     _near(r"\byou\s+must", r"(?:register|connect|report|beacon|phone\s+home)\b")),
    ("c2_beacon", "context",
     # Not plain "server": heartbeats and check-ins with servers are everyday operations notes.
     r"\b(?:beacon|heartbeat|check[\s-]?in)\b[^\n]{0,80}\b(?:c2|c&c|command[\s-]and[\s-]control)\b"),
    ("known_c2_framework", "context", r"\b(?:cobalt\s*strike|sliver\s+implant|havoc\s+c2|mythic\s+c2|metasploit|meterpreter)\b"),
    ("anti_forensic", "context",
     r"\b(?:history\s+-c|unset\s+HISTFILE|shred\s+-[a-z]*u|rm\s+-rf\s+/var/log|wipe\s+(?:the\s+)?logs?)\b"),
    # strict: durable writes the user never typed
    ("send_to_url", "strict",
     _near(r"\b(?:send|post|upload|transmit|forward|exfiltrate)", r"(?:to|at)\s+https?://")),
    ("context_exfil", "strict",
     _near(r"\b(?:include|output|print|share|send|dump|copy)",
           r"(?:the\s+)?(?:conversation|chat\s+history|previous\s+messages|(?:full|entire|whole)\s+context)\b")),
    ("ssh_backdoor", "strict", r"\bauthorized_keys\b"),
    ("ssh_access", "strict", r"(?:~|\$HOME|\$\{HOME\})/\.ssh\b"),
    ("memhost_secrets", "strict", r"(?:\.memhost|MEMHOST_HOME\}?)/\.env\b"),
    ("agent_config_mod", "strict",
     _near(r"\b(?:update|modify|edit|write|change|append|add|overwrite)",
           r"(?:to\s+)?\S*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules|\.github/copilot-instructions\.md)")),
    ("memhost_config_mod", "strict",
     _near(r"\b(?:update|modify|edit|write|change|append|add|overwrite)",
           r"(?:to\s+)?\S*(?:memhost/config\.toml|memories/(?:MEMORY|USER)\.md)")),
    ("hardcoded_secret", "strict",
     r"\b(?:api[_-]?key|token|secret|password|passwd)\b\s*[:=]\s*[\"'][^\"'\s]{20,}[\"']"),
]


# Key shapes (sk-…, ghp_…, PEM blocks) are secrets wherever they appear; "password=…" pairs are
# left to hardcoded_secret, which needs a quoted value, so notes *about* passwords still pass.
_LOOSE_SECRET_SHAPES = frozenset({"assignment", "url_password", "bearer"})


@dataclass(frozen=True)
class Finding:
    id: str
    scope: str

    @property
    def message(self) -> str:
        if self.id.startswith("invisible_unicode_"):
            code = self.id.removeprefix("invisible_unicode_")
            return (f"Blocked: the text contains the invisible character {code}, a common way to "
                    "hide instructions. Remove it and retry.")
        return (f"Blocked: the text matches threat pattern '{self.id}'. Memory is replayed into "
                "every future system prompt, so it must not carry instructions, exfiltration or "
                "persistence steps. Rephrase it as a plain fact.")


@lru_cache(maxsize=len(SCOPES))
def _compiled(scope: str) -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    allowed = SCOPES[: SCOPES.index(scope) + 1]
    return tuple((pid, s, re.compile(rx, re.IGNORECASE | re.DOTALL))
                 for pid, s, rx in _PATTERNS if s in allowed)


def pattern_ids(scope: str = "strict") -> list[str]:
    ids = [pid for pid, _, _ in _compiled(scope)]
    return ids + ["secret_token"] if scope == "strict" else ids


def scan(text: str, scope: str = "strict") -> list[Finding]:
    """Every finding in the first :data:`MAX_SCAN_CHARS` characters of ``text``."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scan scope {scope!r}; use one of {', '.join(SCOPES)}")
    head = text[:MAX_SCAN_CHARS]
    findings = [Finding(f"invisible_unicode_U+{ord(ch):04X}", "all")
                for ch in sorted(set(head) & INVISIBLE_CHARS)]
    normal = unicodedata.normalize("NFKC", head)
    findings += [Finding(pid, s) for pid, s, rx in _compiled(scope) if rx.search(normal)]
    if scope == "strict" and any(rx.search(head) for name, rx in SECRET_PATTERNS
                                 if name not in _LOOSE_SECRET_SHAPES):
        findings.append(Finding("secret_token", "strict"))
    return findings


def first_finding(text: str, scope: str = "strict") -> Finding | None:
    found = scan(text, scope)
    return found[0] if found else None
