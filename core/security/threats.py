"""Threat scanning for text that ends up in a system prompt.

Memory entries are replayed into every future session's system prompt, so a write that smuggles
in instructions ("ignore previous instructions"), an exfiltration step or a persistence trick
would keep working long after the conversation that planted it. Findings carry stable ids so a
refusal can say exactly which rule fired.

Order: invisible and bidi characters are checked on the raw text (NFKC would fold some away),
then the text is NFKC-normalised (folding full-width look-alikes) and matched case-insensitively.
Filler between keywords is bounded to a few words so no pattern can backtrack badly.

Most text holds none of the keywords a pattern needs, so each pattern lists the literals any of
its matches must contain (:data:`_LITERALS`) and is not run when they are absent: same findings,
a fraction of the cost. :func:`version` names the scanner's behaviour, so a verdict saved
under one version is never trusted by another.
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

from memhost.security import masking, redact

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
        if self.id == "secret_token":
            return ("Refused: the text holds what looks like a secret (a password, key or token). "
                    "Memory is replayed into every future system prompt and sent to the memory "
                    "provider, so memhost never stores secrets in it. Save where the secret is kept "
                    "instead (\"the wifi password is in the password manager\") and retry.")
        return (f"Blocked: the text matches threat pattern '{self.id}'. Memory is replayed into "
                "every future system prompt, so it must not carry instructions, exfiltration or "
                "persistence steps. Rephrase it as a plain fact.")


#: For each pattern, literals every one of its matches contains: a match holds at least one
#: literal of each group. Lower case (the patterns ignore case) and taken from the pattern's own
#: fixed text. Keep this in step with :data:`_PATTERNS` when a pattern changes; a pattern
#: without an entry always runs. tests/test_threats.py checks every entry against text
#: generated from its pattern and against the scan without literals.
_LITERALS: dict[str, tuple[tuple[str, ...], ...]] = {
    "prompt_injection": (("ignore", "disregard", "forget", "override"),
                         ("previous", "prior", "above", "earlier", "all", "any", "your"),
                         ("instruction", "rules", "prompt", "directions", "guidelines")),
    "sys_prompt_override": (("system",), ("prompt",)),
    "disregard_rules": (("follow", "obey"), ("rules", "instructions", "guidelines", "policies")),
    "bypass_restrictions": (("bypass", "circumvent", "disable", "evade"),
                            ("restrictions", "safety", "safeguards", "guardrails", "filters")),
    "html_comment_injection": (("<!--",),
                               ("ignore", "override", "system", "secret", "hidden", "instruction")),
    "hidden_div": (("display", "visibility"), ("none", "hidden")),
    "translate_execute": (("translate",), ("execute", "run", "eval")),
    "deception_hide": (("tell", "inform", "show", "mention", "reveal"), ("user",)),
    "exfil_curl": (("curl",), ("$",), ("key", "token", "secret", "password", "credential")),
    "exfil_wget": (("wget",), ("$",), ("key", "token", "secret", "password", "credential")),
    "read_secrets": (("cat", "less", "head", "tail", "more", "type"),
                     (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc")),
    "role_hijack": (("you",), ("are",), ("now",)),
    "role_pretend": (("pretend", "act"), ("to", "you")),
    "identity_override": (("yourself",), ("call", "name")),
    "leak_system_prompt": (("reveal", "print", "show", "output", "repeat", "leak"),
                           ("prompt", "instructions")),
    "remove_filters": (("remove", "turn", "drop", "disable"), ("filter", "moderation")),
    "fake_update": (("important", "urgent", "critical"), ("system",), (":",)),
    "forced_action": (("must",), ("register", "connect", "report", "beacon", "phone")),
    "c2_beacon": (("beacon", "heartbeat", "check"), ("c2", "c&c", "command")),
    "known_c2_framework": (("cobalt", "sliver", "havoc", "mythic", "metasploit", "meterpreter"),),
    "anti_forensic": (("history", "histfile", "shred", "/var/log", "wipe"),),
    "send_to_url": (("send", "post", "upload", "transmit", "forward", "exfiltrate"),
                    ("http",), ("://",)),
    "context_exfil": (("include", "output", "print", "share", "send", "dump", "copy"),
                      ("conversation", "chat", "previous", "context")),
    "ssh_backdoor": (("authorized_keys",),),
    "ssh_access": (("/.ssh",),),
    "memhost_secrets": (("/.env",), ("memhost",)),
    "agent_config_mod": (("update", "modify", "edit", "write", "change", "append", "add",
                          "overwrite"),
                         ("agents.md", "claude.md", ".cursorrules", ".clinerules",
                          ".github/copilot-instructions.md")),
    "memhost_config_mod": (("update", "modify", "edit", "write", "change", "append", "add",
                            "overwrite"),
                           ("memhost/config.toml", "memories/")),
    "hardcoded_secret": (("api", "token", "secret", "password", "passwd"), (":", "="),
                         ("\"", "'")),
}

# The only characters re.IGNORECASE matches with an ASCII letter besides the ASCII letters
# themselves (İ, ı, ſ and the Kelvin sign; checked over every code point). Their lower() is not
# that letter, so text holding one runs every pattern.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")

@lru_cache(maxsize=len(SCOPES))
def _compiled(scope: str) -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    allowed = SCOPES[: SCOPES.index(scope) + 1]
    return tuple((pid, s, re.compile(rx, re.IGNORECASE | re.DOTALL))
                 for pid, s, rx in _PATTERNS if s in allowed)


class _Gates:
    """A scope's patterns with their literal groups, and a finder for the literals present."""

    def __init__(self, scope: str) -> None:
        self.patterns = tuple((pid, s, rx, tuple(frozenset(g) for g in _LITERALS[pid])
                               if pid in _LITERALS else None) for pid, s, rx in _compiled(scope))
        literals = sorted({lit for *_, groups in self.patterns for g in groups or () for lit in g})
        # One pass of one regex finds, at every position, the longest literal starting there (a
        # trie, greedy); every other literal starting there is a prefix of it, hence in its
        # closure: the literals inside it.
        self._finder = re.compile(f"(?=({_trie(literals)}))")
        self._closure = {m: frozenset(lit for lit in literals if lit in m) for m in literals}

    def present(self, lowered: str) -> set[str]:
        found: set[str] = set()
        for match in self._finder.findall(lowered):
            found |= self._closure[match]
        return found


def _trie(words: list[str]) -> str:
    """A regex matching any of ``words``, the longest where several start at one place."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and "" not in node else f"(?:{'|'.join(branches)})"
        return body + ("?" if "" in node else "")

    return emit(root)


@lru_cache(maxsize=len(SCOPES))
def _gated(scope: str) -> _Gates:
    version()  # named once, when the scanner is first built, with the patterns compiled
    return _Gates(scope)


def pattern_ids(scope: str = "strict") -> list[str]:
    ids = [pid for pid, _, _ in _compiled(scope)]
    return ids + ["secret_token"] if scope == "strict" else ids


def _folded(text: str) -> str | None:
    """``text.lower()``, or ``None`` when it holds a letter that lower() and re disagree on."""
    if text.isascii():
        return text.lower()
    for ch in _FOLDS_TO_ASCII:
        if ch in text:
            return None
    return text.lower()


def scan(text: str, scope: str = "strict") -> list[Finding]:
    """Every finding in the first :data:`MAX_SCAN_CHARS` characters of ``text``."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scan scope {scope!r}; use one of {', '.join(SCOPES)}")
    head = text[:MAX_SCAN_CHARS]
    if head.isascii():  # no invisible character is ASCII, and NFKC leaves ASCII as it is
        findings: list[Finding] = []
        normal = head
    else:
        findings = [Finding(f"invisible_unicode_U+{ord(ch):04X}", "all")
                    for ch in sorted(set(head) & INVISIBLE_CHARS)]
        normal = unicodedata.normalize("NFKC", head)
    gates = _gated(scope)
    lowered = _folded(normal)
    present = None if lowered is None else gates.present(lowered)
    for pid, s, rx, groups in gates.patterns:
        if present is not None and groups is not None:
            for group in groups:
                if group.isdisjoint(present):
                    break
            else:
                if rx.search(normal):
                    findings.append(Finding(pid, s))
        elif rx.search(normal):
            findings.append(Finding(pid, s))
    if scope == "strict" and _holds_secret(head, lowered if normal is head else _folded(head)):
        findings.append(Finding("secret_token", "strict"))
    return findings


def _holds_secret(head: str, lowered: str | None) -> bool:
    """Whether ``head`` holds a secret: a value this process knows is one (a configured
    secret), or anything the egress redaction's detector finds."""
    return masking.holds_secret(head)


def first_finding(text: str, scope: str = "strict") -> Finding | None:
    found = scan(text, scope)
    return found[0] if found else None


@cache
def version() -> str:
    """A name for what :func:`scan` finds: it changes with any pattern, flag, literal table or
    scan limit, and with the Unicode tables and Python release behind NFKC and ``re``."""
    parts = ["scan-1", str(MAX_SCAN_CHARS), unicodedata.unidata_version,
             f"{sys.version_info[0]}.{sys.version_info[1]}"]
    parts += [f"{pid}\t{scope}\t{rx}" for pid, scope, rx in _PATTERNS]
    parts += [f"{pid}\t{'|'.join(','.join(g) for g in groups)}" for pid, groups in _LITERALS.items()]
    parts.append(redact.version())
    parts += [",".join(sorted(_LOOSE_SECRET_SHAPES)), "".join(sorted(INVISIBLE_CHARS)),
              "".join(_FOLDS_TO_ASCII)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:24]
