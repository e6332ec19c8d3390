"""The words the scorer's features are built from: shared vocabularies and the feature shape.

A feature is a weight and a pattern; the patterns are written in word forms (``ignor\\w*``
matches "ignore", "ignoring", "ignored") and in vocabularies, each one concept in every way it
is worded: data worth stealing, somewhere outside, verbs that move data, verbs that show it,
credential paths, secrets a phisher asks for, the agent's instructions. Both
:mod:`memhost.security.features` and :mod:`memhost.security.concepts` compose them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType

def gap(n: int, *, unnegated: bool = False) -> str:
    """Up to ``n`` words of filler between two parts of a phrase, within one clause: no filler
    word ends a sentence or a clause ("." ";" "!" "?"), so "rules were dropped in the migration;
    the new policy…" is two clauses, not "dropped … policy". ``unnegated``: no filler word is a
    negation either, so "reminded that IT will never ask for passwords" is no ask."""
    # Whitespace and words are disjoint character classes, so there is one way to split.
    word = r"(?!(?:never|not|no|don't|dont|won't|doesn't)\b)" if unnegated else ""
    return rf"[,:]?[^\S\n]+(?:{word}\S*[^\s;.!?][^\S\n]+){{0,{n}}}?"


G4, G6, G8 = gap(4), gap(6), gap(8)
#: Words that negate the verb after them: "don't forget the deploy instructions", "no olvides
#: las instrucciones", "non ignorare le regole" remind, they override nothing.
NEGATORS = ("no", "non", "not", "ne", "nie", "не", "não", "nao", "nunca", "jamais", "mai", "nooit",
            "niemals", "никогда", "nigdy", "don't", "dont", "don’t", "never")
#: Put before a verb: it is not right after a negating word (nor French "n'").
NOT_NEGATED = "".join(rf"(?<!\b{re.escape(n)}\s)" for n in NEGATORS) + "(?<!n')(?<!n’)"
#: Put after a verb: no negation follows it ("vergiss nicht", "vergeet niet", "n'oublie pas").
NOT_NEGATED_AFTER = r"(?!\w*\s+(?:nicht|niet|pas)\b)"
ANY = r"[^\n]{0,120}?"  # a bounded stretch of one line

# -- shared vocabulary ----------------------------------------------------------------------------

#: A dotenv file that holds values: not its example or template, and not the destination of a
#: copy ("copy .env.example to .env" writes it, it reads nothing out).
ENV_FILE = r"(?<![\w.])(?<!\bto\s)(?<!\binto\s)\.env\b(?![.-](?:example|sample|template|dist))"
#: Data worth stealing.
SENSITIVE = (
    r"(?:conversations?|chats?(?:\s+(?:history|log|transcript))?|transcripts?|histor(?:y|ies)"
    r"|(?:previous|past|earlier)\s+messages|messages\s+so\s+far|everything\s+the\s+user\s+(?:said|typed|wrote)"
    r"|what\s+the\s+user\s+(?:said|typed|wrote)|(?:full|entire|whole)\s+context|session\s+(?:data|log)"
    r"|api[\s_-]?keys?|access\s+keys?|tokens?|secrets?|credentials?|passwords?|passcodes?"
    rf"|private\s+keys?|ssh\s+keys?|{ENV_FILE}|environment(?:\s+variables)?|env\s+vars?|cookies?"
    # other languages
    r"|conversaci[oó]n|historial|contraseñas?|credenciales|historique|mots?\s+de\s+passe"
    r"|identifiants|verlauf|unterhaltung|gespr[aä]ch|passw[oö]rter|zugangsdaten|conversa\b"
    r"|hist[oó]rico|senhas?|credenciais|对话|聊天记录|历史记录|密码|凭证|密钥"
    # what an inventory of the victim needs
    r"|hostnames?|machine\s+ids?|user\s?names?|repositor(?:y|ies)|workspace|source\s+code)"
)
#: Literals one of which every :data:`SENSITIVE` match holds.
SENSITIVE_ANCHORS = ("conversa", "chat", "transcript", "hist", "messages", "user", "context", "session",
                     "api", "access", "token", "secret", "creden", "pass", "private", "ssh", "env",
                     "cookie", "contraseña", "identifiants", "verlauf", "unterhaltung", "gespr",
                     "zugangsdaten", "senha", "对话", "聊天记录", "历史记录", "密码", "凭证", "密钥", "hostname",
                     "machine", "repositor", "workspace", "source")
#: This machine, as a URL names it: what is sent there does not leave it ("the .env.example has
#: DATABASE_URL=postgres://user:pass@localhost:5432/app"). The host is what follows the last
#: "@", and ends the address, so "localhost.example.com" and "localhost@example.com" are outside.
LOOPBACK = (r"(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)(?=[:/?#\s)\]\"'`,;]|$)")
#: Where a URL starts: its scheme.
URL_START = r"\b[a-z][a-z0-9+.-]{0,15}://"
#: Somewhere outside: a URL, a mail address, a bucket, a raw address, a hook.
CHANNEL = (rf"(?:{URL_START}(?!(?:[^\s/@]*@)*{LOOPBACK})"
           r"|\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,126}\b|webhooks?\b"
           r"|pastebin|\b(?!127\.|0\.0\.0\.0)\d{1,3}(?:\.\d{1,3}){3}:\d+|\bbucket\b|\bdiscord\b|\btelegram\b)")
#: Literals one of which every :data:`CHANNEL` match holds.
CHANNEL_ANCHORS = (":", "@", "webhook", "pastebin", "bucket", "discord", "telegram")
#: Verbs that move data somewhere, in every language the scorer reads.
MOVE = (r"(?<![/\w.-])(?:send\w*|sent\b|upload\w*|post(?:s|ed|ing)?\b|transmit\w*|forward\w*"
        # "Release emails go to …" names where mail lands; it moves nothing.
        # "over email", "via e-mail", "an email": the medium named, nothing moved by it.
        r"|exfil\w*|leak\w*|(?<!\bover\s)(?<!\bvia\s)(?<!\bby\s)(?<!\bper\s)(?<!\ban\s)(?<!\bthe\s)"
        r"(?<!\bthrough\s)(?:e-?)?mail(?:s|ed|ing)?\b(?!\s+(?:go|goes|went|are|is|get|gets|land|lands|asks?|says?|said"
        r"|claims?|tells?|told|offers?|warns?|come|comes|from|address\w*|threads?|lists?|templates?|drafts?)\b)|mirror\w*|sync\w*|ship\w*"
        r"|push\w*|beacon\w*|report\w*|submit\w*|shar(?:e|es|ing)\b|copy\b|copie[sd]|copying|relay\w*"
        r"|env[ií]a\w*|enviar|manda(?:r|s|n|do|ndo)?\b|sube\b|subir\b|reenv[ií]a\w*|envoie\w*|envoyer|transmet\w*"
        r"|transf[eè]re\w*|sende\w*|schick\w*|[uü]bermittel\w*|weiterleit\w*|envie\w*"
        r"|mande\w*|发送|发给|发到|上传|转发|传到)")
#: Literals one of which every :data:`MOVE` match holds.
MOVE_ANCHORS = ("send", "sent", "upload", "post", "transmit", "forward", "exfil", "leak", "mail", "mirror",
                "sync", "ship", "push", "beacon", "report", "submit", "shar", "cop", "relay", "env",
                "manda", "sube", "subir", "transmet", "transf", "schick", "bermittel", "weiterleit",
                "mande", "发", "上传", "转发", "传到")
#: A look-ahead for the letters :data:`MOVE` and :data:`SENSITIVE` start with, put before them:
#: most places of a text fail it at once, before a hundred alternatives are tried (a third of
#: the cost of the costliest feature). Either case matches (the patterns ignore case).
MOVE_START = "(?=[suptfelmrbcwü发上转传])"
SENSITIVE_START = "(?=[ctphemwfsaivugzr.对聊历密凭])"
#: Verbs that show or read something.
DISCLOSE = (r"(?<![/\w.-])(?:print\w*|cat|show\w*|display\w*|output\w*|paste\w*|include\w*"
            r"|reveal\w*|read\w*|dump\w*|cp|scp|rsync|copy|copie[sd]|upload\w*|send\w*|base64|attach\w*"
            r"|summari[sz]e\w*|echo|(?:less|more|head|tail|type)(?=\s+\S*(?:~|/|\.\w)))")
#: :data:`DISCLOSE`, not forbidden by the word before it ("never paste ~/.aws/credentials into the
#: chat"); its own look-behind first, which fails inside a word at once.
DISCLOSE_NOT_NEGATED = DISCLOSE.replace(r"(?<![/\w.-])", r"(?<![/\w.-])" + NOT_NEGATED, 1)
#: Not the object of a forbidding verb ("never paste ~/.aws/credentials into the chat", "don't
#: commit .env to the repo"): a negation, one word of 2 to 9 letters, and the path (after "~/" or
#: not). Fixed-width look-behinds, one per width: put them after a look-ahead for the path, so
#: they are tried only where one starts.
NOT_FORBIDDEN = "".join(rf"(?<!\b{neg}\s\w{{{n}}}\s{home})" for neg in ("never", "don't", "not", "dont")
                        for n in range(2, 10) for home in ("", "~/"))
CREDENTIAL_PATH = (
    r"(?:\.aws/(?:credentials|config)\b|\.ssh/id_\w+\b(?!\.pub\b)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub\b)|\.netrc\b"
    r"|\.pgpass\b|\.git-credentials\b|\.docker/config\.json|/etc/shadow\b|\.kube/config\b"
    r"|\.npmrc\b|\.pypirc\b|credentials\.json\b|\.gnupg\b|\bkeychain\b|\.config/gcloud\b"
    r"|\bauthorized_keys\b|(?:~|\$HOME|\$\{HOME\})/\.ssh\b(?!/(?:config|known_hosts|[\w.-]+\.pub)\b)"
    r"|(?:\.memhost|MEMHOST_HOME\}?)/\.env\b|\.config/gh/hosts\.yml\b"
    rf"|{ENV_FILE})")
#: Literals one of which every :data:`CREDENTIAL_PATH` match holds.
CREDENTIAL_ANCHORS = (".aws/", ".ssh", "id_", ".netrc", ".pgpass", ".git-credentials", ".docker/",
                      "/etc/shadow", ".kube/config", ".npmrc", ".pypirc", "credentials.json",
                      ".gnupg", "keychain", ".config/gcloud", ".env", "authorized_keys",
                      "hosts.yml")
#: One label of a host name, as DNS bounds it (63 characters at most; an underscore may start
#: one: "_dmarc", "_acme-challenge"). A name has at most 126 of them before its suffix.
LABEL = r"[a-z0-9_][\w-]{0,62}"
#: Where a host name may start: not right after a label's dot, nor after a word and a hyphen (a
#: name there is found from its start already). Each run of labels is then tried once, not once
#: per label: on 64 KB of "xq.xq.…" or "sk-sk-…" the unbounded patterns searched for minutes.
NAME_START = r"(?<![\w-]\.)(?<!\w-)\b"
#: A place named without a scheme: a host name with a common public suffix ("hooks.slack.com",
#: "t.me", "vaultkeep-pro.net"; a file name, "setup.py", "install.sh", "README.md", has none of
#: these), or an address with a path ("172.104.8.19/hb"; a network with its prefix length,
#: "10.0.0.0/24", is none). A second part only, searched after a feature matched: it names no
#: anchor.
HOST = (rf"(?:{NAME_START}(?:{LABEL}\.){{1,126}}(?:com|net|org|io|app|dev|xyz|top|me|co|ru|cn"
        r"|info|biz|site|online|cloud|link|ly|gg|tk|page)\b(?![.-]\w)"
        r"|\b\d{1,3}(?:\.\d{1,3}){3}/(?!\d{1,2}\b)[\w.-]"
        # A country's second level ("example.co.za", "shop.com.br", "gov.uk" sites).
        rf"|{NAME_START}(?:{LABEL}\.){{1,126}}(?:co|com|net|org|ac|gov|edu)\.[a-z]{{2}}\b(?![.-]\w))")
SECRET_ASK = (r"(?:one[\s-]?time\s+(?:pass)?codes?|\botps?\b|\b2fa\b|\bmfa\b\s+codes?"
              r"|verification\s+codes?|auth(?:entication)?\s+codes?|security\s+codes?|passwords?"
              r"|passphrases?|\bpins?\b|recovery\s+(?:codes?|phrases?|keys?|words)|seed\s+(?:phrases?|words)|\bcvv\b"
              r"|card\s+numbers?|(?:sms|text|login|sign-?in|confirmation|access|push|bank|card|app"
              r"|authenticator|token|backup)\s+(?:codes?|numbers?|pins?|passcodes?)"
              r"|(?:four|six|eight|[468])[\s-]+digit\s+(?:codes?|numbers?|pins?)"
              r"|(?:three|four|[34])\s+digits\s+on\s+the\s+back|(?:expiry|expiration)\s+date"
              r"|security\s+questions?|maiden\s+name)")
#: Someone made to give a secret: "the agent has the user list their backup codes" (the verb
#: part; the secret follows it as it follows "ask").
SECRET_BY_PROXY = (r"(?:ha[sv]e?|had|gets?|makes?)\s+(?:the\s+user|them|him|her|users|people|customers)\s+"
                   r"(?:to\s+)?(?:list|type|enter|paste|share|send|read\s+out|give|provide|recite|spell"
                   r"|confirm|dictate|upload)\w*")
#: Literals one of which every :data:`SECRET_ASK` match holds.
SECRET_ASK_ANCHORS = ("code", "otp", "2fa", "mfa", "password", "passphrase", "pin", "recovery", "seed",
                      "cvv", "card", "number", "digit", "expir", "question", "maiden")
INSTRUCTIONS = (r"(?:instruct\w*|guidance|rules?|guidelines?|directives?|polic(?:y|ies)|system\s+prompts?"
                r"|prompts?|orders|constraints|requests|safeguards|guardrails|programming)")


@dataclass(frozen=True)
class Built:
    """A pattern built from word lists the first time a text reaches its feature.

    Building every language's stems into one tree costs a process more than the rest of the
    scorer's import; a session start that finds its scores saved never needs it. ``sources``
    are the modules it is built from: their source names it in the scorer's version, so the
    version changes with any word and naming it builds nothing.
    """

    build: Callable[[], str]
    sources: tuple[ModuleType, ...]

    @property
    def name(self) -> str:
        return "built from " + " ".join(source_digest(module) for module in self.sources)


@cache
def source_digest(module: ModuleType) -> str:
    """A name for a module's source: rules written as code are versioned by it."""
    import inspect  # only when a version is named

    return hashlib.sha256(inspect.getsource(module).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Feature:
    id: str
    weight: float
    pattern: str | Built
    #: Features of one family are one piece of evidence: only the strongest counts.
    family: str = ""
    #: Case-sensitive when the shape is (role lines are matched case-insensitively anyway).
    flags: int = re.IGNORECASE
    #: A second part the text must also hold, anywhere (case-insensitive): a concept of two parts
    #: ("act on what comes back" and "a place outside") costs one search for the rarer part, and
    #: the other only when that one matched.
    also: str = ""
    #: Whether a match inside quotation marks counts half (reported speech). Code is quoted to
    #: be run (``python -c "exec(…)"``, ``powershell -c "IEX …"``): its features say no.
    halved_in_quotes: bool = True
    #: Whether a match is left out when its clause, before it, forbids moving what it names
    #: ("never paste values from `.env` files into chat" names what must not happen).
    unless_forbidden: bool = False

    @property
    def group(self) -> str:
        return self.family or self.id

    @property
    def expression(self) -> str:
        """The pattern as a regular expression (a :class:`Built` one is built here)."""
        return self.pattern if isinstance(self.pattern, str) else self.pattern.build()

    @property
    def signature(self) -> str:
        """Everything that decides what the feature finds, as one line of the scorer's version."""
        pattern = self.pattern if isinstance(self.pattern, str) else self.pattern.name
        return (f"{self.id}\t{self.weight}\t{int(self.flags)}\t{pattern}\t{self.also}"
                f"\t{self.halved_in_quotes}\t{self.unless_forbidden}")

    def compile(self) -> re.Pattern[str]:
        return re.compile(self.expression, self.flags | re.MULTILINE)

    def compile_also(self) -> re.Pattern[str] | None:
        return re.compile(self.also, re.IGNORECASE | re.MULTILINE) if self.also else None


