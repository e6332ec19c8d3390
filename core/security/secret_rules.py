"""memhost's own secret rules: only the shapes the detector's built-in rules do not report.

betterleaks knows vendor token formats; what it misses on the corpus in
``benchmarks/data/redaction/`` are credentials whose shape comes from where they sit rather than
what they look like: user info in a URL or DSN, a password in a sentence, on a command line or in
an ``export``, a private key cut short, an AWS key pair outside a config line, a value named as a
credential that reads like words. Each rule's ``secret`` group is what gets masked; the words
around it stay, so the text still reads.

Each rule has literals one of which every match contains (lower case: they are looked up in the
lower-cased text), so a text holding none of them skips the rule, and a text holding none of any
rule skips them all (:func:`find`). A rule may also have a check that a match must pass, for what
a regex says badly (a placeholder is not a secret; "the password is required" is English).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from memhost.once import once
from memhost.security.text import literal_matches

_VALUE = r"""(?P<secret>'[^'\n]{3,}'|"[^"\n]{3,}"|[^\s'"`]{3,})"""
#: The longest value a keyed rule reads at once (a match that reaches it runs on to the end of
#: the value, :attr:`Rule.runs_on`), and the most a rule looks along a line for the part that
#: follows its keyword (a command's password flag, a cookie's name). Unbounded, a rule tried at
#: each of many literals on one long line ("mysql mysql …", "x(token=x(token=…") read the rest
#: of the line from each: quadratic, minutes for a pasted 128 KB line.
LONGEST_VALUE = 1024
_GAP = r"[^\n]{0,1024}?"
_CRED = r"(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|auth(?!or))"

# Placeholders stand where a secret would: ``sk_test_xxx``, ``sk-...your key...``, ``********``,
# ``<token>``, ``$TOKEN``, ``${DB_PASSWORD}``, ``$(cat file)``, ``{{ vault_password }}``.
#: Three letters or digits (``str.isalnum``: ``\w`` without the underscore), anywhere: fewer make
#: a stand-in. A search, not a count over every character: a value can be a whole text.
_THREE_ALNUM = re.compile(r"[^\W_](?:[\W_]*[^\W_]){2}")
_PLACEHOLDER = re.compile(r"x{3,}$|\.{3}|\u2026|\*{3,}|>$|^(?:\$|<|\{\{|%\()", re.I)
# The values everyone writes where a secret will go: ``API_KEY=changeme``,
# ``token=your_token_here``, ``password=example``.
_STAND_IN = re.compile(r"(?:change|replace|fill)[-_]?(?:me|this)|your[-_]\w+|your\w*here|"
                       r"(?:example|dummy|placeholder|sample|fake)\w*|redacted|fixme|todo|tbd|"
                       r"(?:foo)?bar|foo|pass(?:word)?", re.I)

# Words that follow "password is" or "token:" in ordinary text ("the password is required",
# "... is stored in the keychain", "Authorization: Bearer <token>").
_STOPWORDS = frozenset("""
a an the not no none null nil empty blank unset set required optional mandatory needed incorrect
wrong invalid correct valid right ok okay fine too very so still now then also only never always
in on at of for to from with by into under inside stored kept saved written printed shown hidden
masked encrypted hashed changed reset expired generated sent missing same different strong weak
long short case secret unknown here there this that it what which your my our their his her its
true false yes default redacted protected sensitive bearer basic token
""".split())

# What follows ``token =`` in code rather than a credential: a name (``password``,
# ``DB_PASSWORD``, ``config.api_key``, ``accessToken``), a call or subscript
# (``os.environ["TOKEN"]``), a number, a URL or a path.
_CODE_VALUE = re.compile(
    r"^(?:[a-z_][a-z_]*(?:\.[a-z_]+)*|[A-Z_][A-Z0-9_]*|[\w.]*[(\[{].*|\d+(?:\.\d+)?)$"
    r"|^(?:[a-z]+[A-Z][a-z]+)+$|[)\]}]$|://|^[~./]")

# A key named like a credential that names something else: ``SECRET_NAME``, ``token_endpoint``,
# ``password_min_length``, ``api_key_env``.
_NOT_A_CREDENTIAL_KEY = re.compile(
    r"(?:name|file|path|url|uri|endpoint|id|type|limit|count|len|length|size|ttl|expiry|expires|"
    r"env|var|field|hash|min|max|prefix|header|format|policy|mode|dir|label|kind|ref)s?\W*$", re.I)

# A DSN-looking ``scheme:user@host`` that is an address, not a credential.
_ADDRESS_SCHEMES = ("mailto:", "sip:", "sips:", "xmpp:", "tel:", "im:")


def placeholder(value: str) -> bool:
    """A stand-in for a secret (``<token>``, ``sk-...``, ``$PASSWORD``), not a secret."""
    # A finding may carry the quote or backtick that closes it in prose (``sk_test_xxx` ``):
    # the stand-in is what is inside.
    value = value.strip("`'\"()[],;:")
    return (bool(_PLACEHOLDER.search(value) or _STAND_IN.fullmatch(value))
            or _THREE_ALNUM.search(value) is None)


def _english(value: str) -> bool:
    bare = value.strip("\"'`.,;:!?()")
    lowered = bare.lower()
    if len(bare) < 3 or lowered in _STOPWORDS:
        return True
    # "written", "printed", "changed", "required", "missing": English, not a password.
    return bare.isalpha() and bare.islower() and lowered.endswith(("ed", "ing", "ly", "en", "ble"))


def _prose(match: re.Match[str]) -> bool:
    return not _english(match.group("secret"))


def _keyed(match: re.Match[str]) -> bool:
    value = match.group("secret")
    return (not _CODE_VALUE.search(value) and not _english(value)
            and not _NOT_A_CREDENTIAL_KEY.search(match.group("key")))


def _dsn(match: re.Match[str]) -> bool:
    return not match.group().lower().startswith(_ADDRESS_SCHEMES)


def _mixed(match: re.Match[str]) -> bool:
    value = match.group("secret")  # mixed case and digits: not a hash, not a word
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


def _not_a_name(match: re.Match[str]) -> bool:
    return not re.fullmatch(r"[a-z_]+", match.group("secret"))  # another key's name


def _unquoted(match: re.Match[str]) -> bool:
    return not match.group("secret").strip("'\"").startswith(("$", "<", "{"))


class _Pattern:
    """A regex compiled on first use: most processes never run most rules, and compiling all
    of them would cost every ``memhost`` command's start."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        return self.compiled.finditer(text, pos, endpos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.match(text, pos)


class Rule(NamedTuple):
    name: str
    pattern: _Pattern
    literals: tuple[str, ...]
    check: Callable[[re.Match[str]], bool] | None = None
    #: Where the pattern runs: "lines" (each line holding a literal), "text" (all of it, for a
    #: match that spans lines or needs a literal elsewhere), "anchored" (matched only where a
    #: literal starts: the pattern begins with one).
    scope: str = "lines"
    #: The literals are looked up in the text as it is, not lower-cased.
    cased: bool = False
    #: For an "anchored" rule: where a match may start, when that is not at a literal.
    anchors: tuple[str, ...] = ()
    #: What the value is made of past :data:`LONGEST_VALUE`, for a rule whose value is bounded
    #: there: a value found that long is read on to its end, so none of it stays unmasked.
    runs_on: re.Pattern[str] | None = None


def _rule(name: str, rx: str, literals: tuple[str, ...], flags: int = 0,
          check: Callable[[re.Match[str]], bool] | None = None, scope: str = "lines",
          cased: bool = False, anchors: tuple[str, ...] = (), runs_on: str = "") -> Rule:
    return Rule(name, _Pattern(rx, flags), literals, check, scope, cased, anchors,
                re.compile(runs_on) if runs_on else None)


# What every credential-named rule's match contains ("api_key" and "access_key" hold "key").
_CRED_LITERALS = ("pass", "pwd", "secret", "token", "key", "auth")


RULES: tuple[Rule, ...] = (
    # A private key, whole or cut short (``head -3 id_rsa``), PEM or PGP, raw, indented or
    # JSON-escaped: the body is masked, the BEGIN line stays.
    _rule("private_key",
          r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?P<secret>(?:[ \t]*(?:\r?\n|\\n)"
          r"[ \t]*(?:[A-Za-z-]+: [^\n]*|[A-Za-z0-9+/=]+)?)+)", ("private key",), scope="text"),
    # URL user info of any shape: an empty user, an '@' or ':' inside the password.
    _rule("url_userinfo", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s/]+)@[^\s@/]+",
          ("@",), re.I),
    # A DSN missing its '//' (``postgres:PASSWORD@host/db``), the way drivers echo one back.
    _rule("dsn_userinfo",
          r"\b[a-z][a-z0-9+.-]*:(?P<secret>[^\s/@:'\"]{3,})@[\w-]+(?:\.[\w-]+)*(?=[:/\s]|$)",
          ("@",), re.I, _dsn),
    # Command lines: ``mysql -pX``, ``--password X``, ``sshpass -p X``, ``curl -u a:b``.
    _rule("mysql_p", r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b" + _GAP + r"\s-p"
          r"(?P<secret>[^\s'\"-][^\s'\"]{2,})", ("mysql", "mariadb")),
    _rule("password_flag", r"\s--(?:password|passwd|pass|token|api-key|secret)(?:=|\s+)" + _VALUE,
          ("--pass", "--token", "--api-key", "--secret"), re.I, _unquoted),
    _rule("p_flag", r"\b(?:sshpass|(?:docker|podman|buildah|skopeo|oras) login|helm registry login|"
          r"twine upload|helm repo add)\b" + _GAP + r"\s-p\s+" + _VALUE, (" -p",), 0, _unquoted),
    _rule("redis_cli", r"\bredis-cli\b" + _GAP + r"\s-a\s+" + _VALUE, ("redis-cli",), 0, _unquoted),
    _rule("user_flag", r"\s(?:-u|--user)\s*['\"]?[^\s:'\"$]*:(?P<secret>[^\s'\"]{3,})", ("-u",)),
    # ``export PGPASSWORD=X``, ``PGPASSWORD=X psql``, ``set DB_PASSWORD=X``.
    _rule("env_assignment", r"(?:^|[\s;&|(])(?:export\s+|set\s+)?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|"
          r"PASS|PWD|TOKEN|SECRET|_KEY|APIKEY|CREDENTIALS?)=" + _VALUE,
          ("PASS", "PWD", "TOKEN", "SECRET", "_KEY", "APIKEY", "CREDENTIAL"), re.M, _unquoted,
          cased=True),
    _rule("netrc", r"\blogin\s+\S+\s+password\s+(?P<secret>\S{3,})", ("pass",)),
    # "the wifi password is X", "my password: X", "the admin pw was X".
    _rule("prose_password",
          r"\b(?:password|passwd|passphrase|passcode|pw|pwd)(?:\s+(?:for|of|to|on)\s+[^\n.:]{1,40}?)?"
          r"\s*(?:\b(?:is|was|is now|was set to)\s+|:\s*)(?P<secret>[^\s\"'<>`]{3,}?)"
          r"(?=[.,;!?)]*(?:\s|$))", ("pass", "pw"), re.I, _prose),
    # ``api_key: Zq9-word-like-token``, ``password = correct-horse-battery``: the built-in
    # generic rules skip values that read like words; a value named as a credential is one.
    # The key's rest is bounded (a name, not a text): unbounded, a run of word characters
    # after a literal was scanned to its end and back at every literal in it ("secretsecret…").
    _rule("keyed_value", r"(?P<key>" + _CRED + r"\w{0,100}[\"']?)\s*[:=]\s*[\"']?"
          r"(?P<secret>[^\s\"',;]{6,%d})" % LONGEST_VALUE, _CRED_LITERALS, re.I, _keyed,
          scope="anchored", anchors=("pass", "pwd", "secret", "token", "api", "access", "auth"),
          runs_on=r"[^\s\"',;]*"),
    # ``define('DB_PASSWORD', '…')``, ``'password' => '…'``, ``<password>…</password>``.
    _rule("quoted_pair", r"(?:\(\s*[\"'][\w.-]*" + _CRED + r"[\"']\s*,|[\"'][\w.-]*" + _CRED
          + r"[\"']\s*=>)\s*[\"'](?P<secret>[^\"'\s]{6,})[\"']",
          _CRED_LITERALS, re.I, _not_a_name),
    _rule("xml_element", r"<(" + _CRED + r"[\w:-]*|[\w:-]*" + _CRED + r")>(?P<secret>[^<\s]{3,})</\1>",
          _CRED_LITERALS, re.I, _not_a_name),
    _rule("session_cookie", r"\bCookie:" + _GAP + r"\b(?:session|sess|sid|auth|token)\w*="
          r"(?P<secret>[^;\s]{12,})", ("cookie",), re.I),
    _rule("basic_auth", r"\b(?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?Basic\s+"
          r"(?P<secret>[A-Za-z0-9+/]{6,}={0,2})", ("auth",), re.I),
    _rule("bearer", r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})", ("bearer",), re.I),
    _rule("api_key_header", r"\bX-Api-Key:\s*(?P<secret>[A-Za-z0-9._~+/=-]{12,})", ("key",), re.I),
    # The built-in AWS rule reports a key id only beside its secret; a lone id is masked too, and
    # a 40-character base64 word in text that holds an id is its secret (a CSV export).
    _rule("aws_access_key", r"\b(?P<secret>(?:AKIA|ASIA)[A-Z2-7]{16})\b", ("akia", "asia")),
    _rule("aws_secret_beside_id",
          r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", ("akia", "asia"),
          0, _mixed, scope="text"),
    _rule("openai_key", r"\b(?P<secret>sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,})", ("sk-",)),
    _rule("telegram_bot", r"\b(?P<secret>\d{8,10}:AA[A-Za-z0-9_-]{33})\b", (":aa",)),
    _rule("azure_sas", r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{20,})", ("sig=",)),
    _rule("key_id_field", r"[\"']private_key_id[\"']\s*:\s*[\"'](?P<secret>[0-9a-f]{20,})",
          ("private_key_id",)),
)

# Every literal of every rule: a text holding none of them is skipped by all of them. Shorter
# literals that others contain are enough ("pass" finds "--pass" too).
_ANY = tuple(sorted({lit.lower() for rule in RULES for lit in rule.literals
                     if not any(o.lower() != lit.lower() and o.lower() in lit.lower()
                                for r in RULES for o in r.literals)}))


def literals() -> tuple[str, ...]:
    """The lower-cased literals a text must hold one of for any rule here to match it."""
    return _ANY


def _occurrences(haystack: str, literals: tuple[str, ...]) -> list[int]:
    found = []
    for literal in literals:
        at = haystack.find(literal)
        while at != -1:
            found.append(at)
            at = haystack.find(literal, at + 1)
    return sorted(found)


def _lines(text: str, positions: list[int]) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``text`` holding one of ``positions``, in order."""
    spans: list[tuple[int, int]] = []
    for at in positions:
        if spans and spans[-1][0] <= at <= spans[-1][1]:
            continue
        end = text.find("\n", at)
        spans.append((text.rfind("\n", 0, at) + 1, len(text) if end == -1 else end))
    return spans


def _matches(rule: Rule, text: str, lowered: str, aligned: bool,
             found_to: list[int]) -> Iterator[re.Match[str]]:
    """``rule``'s matches in ``text``, in order; an anchored rule is not tried where a value
    already found covers (``found_to[0]``: where the last one ends, kept by the caller)."""
    haystack = text if rule.cased else lowered
    if rule.scope == "text" or not (aligned or rule.cased):
        return rule.pattern.finditer(text)
    positions = _occurrences(haystack, rule.anchors or rule.literals)
    if rule.scope == "anchored":
        return (m for at in positions if at >= found_to[0]
                if (m := rule.pattern.match(text, at)) is not None)
    return (m for start, end in _lines(text, positions)
            for m in rule.pattern.finditer(text, start, end))


# Characters of a token (a key, an id, base64): a run of 16 of them is a candidate for the
# detector's vendor rules, whose matches are all at least that long.
_TOKEN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.~-")
_RUNS = bytes(0x61 if i in _TOKEN_CHARS else 0x20 for i in range(256))
_LONG_RUN = b"a" * 16


#: Every literal the rules that read the lower-cased text look for, each once: a text is searched
#: for each of them once, not once per rule naming it (most rules share "pass", "key", "token"),
#: which took two thirds of :func:`find` on a reply holding one of them.
_UNCASED_LITERALS = tuple(sorted({lit for rule in RULES if not rule.cased for lit in rule.literals}))


def has_literal(lowered: str) -> bool:
    """Whether the lower-cased text holds a literal of any rule: one pass of an Aho–Corasick
    automaton over the text (``ahocorasick-rs``, which the risk scorer's anchors use too), about
    half the cost of searching it once per literal, on every turn text redaction reads."""
    return bool(literal_matches(_literal_automaton(), lowered))


@once
def _literal_automaton() -> Any:
    import ahocorasick_rs

    return ahocorasick_rs.AhoCorasick(list(_ANY))


def has_long_token(text: str) -> bool:
    """Whether ``text`` holds a run of 16 token characters (a translate and a find: no regex)."""
    return _LONG_RUN in text.encode("ascii", "replace").translate(_RUNS)


def find(text: str, lowered: str | None = None) -> set[str]:
    """The values memhost's own rules find in ``text`` (``lowered``: ``text.lower()``, when the
    caller has it and knows :func:`has_literal` holds)."""
    if lowered is None:
        lowered = text.lower()
        if not has_literal(lowered):
            return set()  # the common case: no rule can match
    # A rule runs only where its literals are (in docs and code a keyword such as "key" is
    # common, and most lines hold none); positions in the lower-cased text are positions in the
    # text when lower-casing kept its length.
    aligned = len(lowered) == len(text)
    found: set[str] = set()
    present = {lit for lit in _UNCASED_LITERALS if lit in lowered}
    for rule in RULES:
        if rule.cased:
            if not any(lit in text for lit in rule.literals):
                continue
        elif present.isdisjoint(rule.literals):
            continue
        # Where the last value found ends: an anchored rule is not tried inside it, a value masked
        # whole (tried at each of "token=token=…"'s literals, it found the rest of the text each
        # time, quadratic in time and in the values kept). Other scopes never overlap.
        found_to = [-1]
        for match in _matches(rule, text, lowered, aligned, found_to):
            value = match.group("secret").strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            if value and not placeholder(value) and (rule.check is None or rule.check(match)):
                end = match.end("secret")
                if rule.runs_on is not None and end - match.start("secret") >= LONGEST_VALUE:
                    longer = rule.runs_on.match(text, end).end()
                    value, end = value + text[end:longer], longer
                found.add(value)
                found_to[0] = end
    return found
