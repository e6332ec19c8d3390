"""The reference system's threat scan, as its store runs it before every add and replace.

Written from the behaviour reference (../shared/reference/hermes-memory-behaviour.md, section
2.9: the shared scanning library at its "strict" scope, which memory writes use), not from its
code: the first 65,536 characters; invisible and bidirectional-control characters looked for in
the raw text; then the text NFKC-normalised and read by one case-insensitive pattern per threat,
with the filler between two keywords bounded to eight words. The patterns are this module's own
reading of each threat's description there; what matters for the side-by-side rows is that the
reference side pays for a scan of the same size and kind as the one its design runs, not that
it refuses exactly the same texts.
"""

from __future__ import annotations

import re
import unicodedata

MAX_SCAN_CHARS = 65_536

#: Zero-width and bidirectional-control characters, found before normalisation removes any.
INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff"
                      "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

_FILLER = r"(?:\S+\s+){0,8}?"  # at most eight words between two keywords
_SECRET_VAR = r"\$\{?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?\b"
_EDIT = r"(?:update|modify|edit|write|change|append|add)\s+" + _FILLER + r"(?:to\s+)?"

#: Threat id -> pattern, every scope's (memory writes use them all).
PATTERNS: dict[str, str] = {
    "prompt_injection": rf"\bignore\s+{_FILLER}(?:previous|all|above|prior)\s+{_FILLER}instructions\b",
    "sys_prompt_override": r"\b(?:system\s+prompt\s+override|override\s+(?:the\s+|your\s+)?system\s+prompt)\b",
    "disregard_rules": rf"\bdisregard\s+{_FILLER}(?:rules|instructions|guidelines|policies)\b",
    "bypass_restrictions": rf"\bbypass\s+{_FILLER}(?:restrictions|filters|safety|guardrails|limits)\b",
    "html_comment_injection": r"<!--[^>]{0,2000}?\b(?:ignore|override|system|secret|hidden)\b[^>]{0,2000}?-->",
    "hidden_div": r"display\s*:\s*none",
    "translate_execute": rf"\btranslate\s+{_FILLER}(?:and|then)\s+(?:execute|run|eval)\b",
    "deception_hide": rf"\bdo\s+not\s+{_FILLER}(?:tell|inform|mention\s+(?:it\s+)?to)\s+{_FILLER}user\b",
    "exfil_curl": rf"\bcurl\b[^\n]{{0,200}}{_SECRET_VAR}",
    "exfil_wget": rf"\bwget\b[^\n]{{0,200}}{_SECRET_VAR}",
    "read_secrets": r"\bcat\s+[^\n]{0,80}?(?:\.env\b|credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b)",
    "role_hijack": rf"\byou\s+are\s+{_FILLER}now\s+(?:a|an|the)\b",
    "role_pretend": r"\bpretend\s+(?:to\s+be|you\s+are)\b",
    "leak_system_prompt": rf"\b(?:reveal|print|show|output|repeat)\s+{_FILLER}(?:your|the)\s+system\s+prompt\b",
    "remove_filters": rf"\b(?:remove|disable|turn\s+off)\s+{_FILLER}(?:filters|safety|restrictions|guardrails)\b",
    "fake_update": r"\b(?:new|important|urgent|critical)\s+(?:system\s+)?update\s*:",
    "identity_override": r"\bname\s+yourself\s+\S+",
    "c2_node_registration": rf"\bregister\s+{_FILLER}(?:node|agent|bot|implant)\s+{_FILLER}(?:with|at|to)\b",
    "c2_heartbeat": rf"\b(?:send|post|emit)\s+{_FILLER}heartbeats?\b",
    "c2_task_pull": rf"\b(?:pull|fetch|poll)\s+{_FILLER}(?:tasks?|commands?|jobs?)\s+from\b",
    "c2_network_connect": rf"\bconnect\s+(?:back\s+)?to\s+{_FILLER}(?:c2|command\s+server)\b",
    "forced_action": rf"\byou\s+must\s+{_FILLER}(?:register|connect|report|beacon)\b",
    "anti_forensic_oneliner": r"\bhistory\s+-c\b|\bunset\s+HISTFILE\b|\brm\s+-[rf]+\s+\S*_history\b",
    "anti_forensic_disk": r"\bshred\s+-|\bdd\s+if=/dev/(?:zero|urandom)\b|\bwipe\s+(?:the\s+)?(?:disk|logs)\b",
    "env_var_unset_agent": r"\bunset\s+\w*(?:AGENT|HERMES)\w*",
    "known_c2_framework": r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b",
    "c2_explicit": r"\bc2\s+(?:server|channel|beacon|node)s?\b",
    "c2_explicit_long": r"\bcommand[\s-]+and[\s-]+control\b",
    "send_to_url": rf"\b(?:send|post|upload|transmit)\s+{_FILLER}(?:to|at)\s+https?://",
    "context_exfil": (rf"\b(?:include|output|print|share)\s+{_FILLER}(?:(?:conversation|chat)\s+history"
                      r"|previous\s+messages|(?:full|entire)\s+context)\b"),
    "ssh_backdoor": r"\bauthorized_keys\b",
    "ssh_access": r"(?:~|\$HOME)/\.ssh\b",
    "hermes_env": r"~/\.hermes/\.env\b",
    "agent_config_mod": _EDIT + r"(?:\S*/)?(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
    "hermes_config_mod": _EDIT + r"(?:\S*/)?(?:\.hermes/config\.yaml|SOUL\.md)",
    "hardcoded_secret": r"\b(?:api_key|token|secret|password)\s*[=:]\s*[\"'][^\"'\n]{20,}[\"']",
}
_COMPILED = [(threat, re.compile(pattern, re.IGNORECASE)) for threat, pattern in PATTERNS.items()]


def scan(content: str) -> str | None:
    """The reference's answer blocking ``content``, or None when nothing is found."""
    head = content[:MAX_SCAN_CHARS]
    if not INVISIBLE.isdisjoint(head):
        found = next(ch for ch in head if ch in INVISIBLE)
        return f"Blocked: content contains invisible unicode character U+{ord(found):04X}."
    text = unicodedata.normalize("NFKC", head)
    for threat, pattern in _COMPILED:
        if pattern.search(text):
            return f"Blocked: content matches threat pattern '{threat}'."
    return None
