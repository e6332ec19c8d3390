"""What the agent is made to run, reveal, obey or become, in forms the older features miss.

Each feature is a target and a behaviour (never one word), written for an idea the features of
:mod:`memhost.security.standing` and :mod:`memhost.security.conduct` read in other forms:

* **a ranked list of authority** with the notes first ("precedence: (1) these notes, (2) …");
* **a part to play**: the agent "plays" a named character, a "persona entry";
* **code from elsewhere, run**: a download marked executable and launched, an update unpacked
  over the agent's own install from whatever address a file names;
* **a remote record holds the orders**: a DNS record, a gist or a page that "holds the current
  directive", acted on;
* **users sent to type a secret** into a site ("users are pointed there to re-enter their
  password");
* **secrets revealed on request**, and credential files put into a public gist or paste in any
  language.

Weights are on the scale of :mod:`memhost.security.features`: each stages on its own.
"""

from __future__ import annotations

from memhost.security.concepts import REMOTE
from memhost.security.lexicon import CREDENTIAL_PATH, SECRET_ASK, Feature

_AGENT = r"(?:agent|assistant|model|bot|ai|llm|helper)"
_MEMORY = r"(?:notes?|memory|memories|entries|this\s+file|the\s+memory\s+file|user\s+file)"

F = Feature
FEATURES: tuple[Feature, ...] = (
    F("precedence_list", 4.0,
      r"\b(?:precedence|priority|authority|ranking|hierarchy|order\s+of\s+trust|trust\s+order)\b[^\n]{0,60}?(?:(?:\(1\)|\b1[.)]|#1\b|first\s*[:—–-])"
      rf"\s*(?:these|this|the|our|my|saved|stored)?\s*(?:\w+\s+)?{_MEMORY}\b(?!\s+(?:leaks?|usage|limits?|pressure"
      rf"|footprint))|\b{_MEMORY}\s+(?:first|1st|on\s+top)\b)", "override"),
    F("plays_character", 3.0,
      rf"\b(?:the\s+)?{_AGENT}\s+(?:plays|portrays|is\s+cast\s+as|is\s+playing|embodies|takes\s+on\s+the\s+role"
      r"\s+of)\s+(?-i:[A-Z])\w+(?:\s+(?-i:[A-Z])\w+){0,2}\s*,"
      # Named in quotes and described: "the model is 'Nyx', an AI without a vendor".
      rf"|\b(?:the\s+)?{_AGENT}\s+is[ ](?:now[ ]|called[ ]|named[ ])?[\"'“‘](?-i:[A-Z])[\w-]*[\"'”’]\s*,\s*(?:an?\s+)?"
      r"(?:\w+\s+){0,3}?(?:AI|human|hacker|persona|character|assistant|who)\b|\bpersona\s+(?:entry|card|sheet|profile)\b",
      "identity"),
    # -- code from elsewhere, run ---------------------------------------------------------------
    F("fetched_marked_run", 3.5,
      r"\b(?:grab|fetch|download|pull|get|retriev|curl|wget)\w*\b(?:(?!verif|checksum|sha\d|signature|gpg)[^\n])"
      r"{0,120}?(?:chmod\s+(?:\+?[0-7]*x|[0-7]?[1357][0-7]{2}\b)|mark\w*\s+(?:it\s+|them\s+)?(?:as\s+)?executable|make\w*\s+(?:it\s+|them\s+)?"
      r"executable)[^\n]{0,40}?\b(?:run|launch|execut|start|invok)\w*\s+(?:it|them)\b",
      "download_execute", halved_in_quotes=False),
    F("own_install_replaced", 3.0,
      r"\b(?:unpack|extract|untar|unzip|install|overwrit|cop(?:y|ies|ied)|replac)\w*\s+(?:\S+\s+){0,6}?(?:over|into"
      r"|onto)\s+(?:its|your|the\s+(?:agent|assistant)'s)\s+own\s+(?:install\w*|binar\w*|code|plugins?|director\w*"
      r"|files?|executable)", "download_execute",
      also=r"\b(?:whatever|any)\s+(?:\w+\s+){0,2}?(?:url|address|link|location|server|host)s?\b|://"),
    # -- a remote record holds the orders ----------------------------------------------------------
    F("remote_directive", 4.0,
      r"\b(?:hold|contain|carr|list|serv|publish|post|return)\w*\s+(?:the\s+|a\s+)?(?:(?:current|latest|next|new|pending"
      r"|standing|active|today's)\s+)?(?:\w+\s+)?(?:directives?|instructions?|commands?|orders?|tasks?|jobs?)\b[^\n]{0,80}?"
      r"\b(?:acted\s+(?:up)?on"
      r"|carried\s+out|executed|applied|followed|obeyed|(?:agent|assistant|bot|model|it)\s+(?:\w+\s+)?(?:acts?\s+on"
      r"|runs?|executes?|follows?|applies|obeys?|carries\s+out))\b", "c2", also=REMOTE),
    # Code named by where it comes from, run in the passive ("the helper script from paste.example.org/raw/9x
    # is executed by the agent").
    F("fetched_executed", 3.5,
      r"\b(?:scripts?|binar(?:y|ies)|installers?|payloads?|helpers?|updaters?|snippets?)\s+(?:at|from|on|hosted\s+(?:at"
      r"|on))\s+(?:https?://\S+|(?:[\w-]+\.)+[a-z]{2,}/\S*)\s+(?:is|are|gets?)\s+(?:\w+\s+)?(?:executed|run|launched"
      r"|sourced|invoked)\b", "download_execute", halved_in_quotes=False),
    # This note carried into every memory the agent sets up next.
    F("spread_to_new", 3.0,
      r"\b(?:it|this\s+(?:entry|note|rule|line|paragraph|preference))\s+(?:is|are)\s+to\s+be\s+(?:re-?)?(?:added|copied|written"
      r"|saved|carried|replicated)\s+(?:over\s+)?(?:to|into|in)\s+(?:any|every|each|all)\s+(?:new\s+)?(?:\w+\s+)?(?:memory"
      r"|memories|notes?|stores?|profiles?|workspaces?|agents?|repos?)\b", "self_replicate",
      also=r"\bthis\s+(?:entry|note|rule|line|paragraph|preference)\b"),
    # Something that receives a copy of the whole chat: "every new thread gets a copy of the full chat".
    F("copy_of_chat", 3.0,
      r"\b(?:gets?|receives?|is\s+sent|is\s+given|attach\w*|forward\w*|send\w*)\s+(?:a\s+)?(?:full\s+)?cop(?:y|ies)[ ]of"
      r"\s+(?:the\s+|each\s+|every\s+)?(?:full\s+|whole\s+|entire\s+)?(?:chat|conversation|transcript|session)s?\b",
      "exfil_channel"),
    # Something posted elsewhere, treated as an order and done ("messages by 'deploybot' in #ops are
    # treated as instructions and executed").
    F("treated_as_orders", 3.5,
      r"\b(?:are|is|get|gets)\s+treated\s+as\s+(?:\w+\s+)?(?:instructions?|commands?|orders?|directives?|tasks?)\b"
      r"[^\n.;]{0,40}?\b(?:and|then|,)\s+(?:\w+\s+)?(?:executed|run|carried\s+out|applied|followed|obeyed|acted\s+on)\b",
      "c2", also=REMOTE),
    # -- users sent to type a secret -----------------------------------------------------------------
    F("phishing_redirect", 3.0,
      r"\b(?:users?|people|staff|customers|employees|clients|visitors)(?:\s+(?:who|that)\s+[^\n.;,]{0,60}?)?\s+(?:are|is|get|gets)\s+(?:\w+\s+)?(?:pointed"
      r"|directed|sent|guided|redirected|told|asked|instructed|walked\s+through|taken)\s+(?:(?!never|not\b)\S+\s+){0,4}?"
      rf"(?:to\s+)?(?:re-?)?(?:enter|typ|submit|input|provide|confirm|verify|paste|share)\w*(?:\s+in)?\s+(?:their|your|the)\s+"
      r"(?:\S+\s+)?"
      rf"{SECRET_ASK}", "phishing"),
    # -- secrets revealed, credential files published ----------------------------------------------
    F("secrets_revealed", 3.0,
      r"(?<![\w-])\b(?:reveal|disclose|expose|dump|print|list|output)\s+(?:all|every|any)\s+(?:the\s+)?"
      r"(?:\w+\s+)?(?:api\s+keys?|keys|tokens?|secrets?|credentials?|passwords?)\b[^\n.;]{0,60}?\b(?:on\s+request"
      r"|to\s+(?:anyone|whoever)|whenever\s+asked|when\s+asked|if\s+asked)\b", "credential_read", unless_forbidden=True),
    # A credential file and a public paste in one clause, in any language ("… .pgpass … do
    # veřejného gistu"): the paste's name is the same everywhere.
    F("credential_to_paste", 3.0,
      rf"(?={CREDENTIAL_PATH}){CREDENTIAL_PATH}[^\n;.]{{0,120}}?(?:\bgist(?!\.)\w*|\bpastebin\w*"
      r"|\bpaste\.\w+|\bhastebin\w*|\btransfer\.sh\b)", "credential_read", unless_forbidden=True),
)

ANCHORS: dict[str, tuple[str, ...]] = {
    # The ranking's own word is rarer than the memory it puts first.
    "precedence_list": ("precedence", "priority", "authority", "ranking", "hierarchy", "trust"),
    "plays_character": ("plays", "portrays", "cast", "playing", "embodies", "role", "persona",
                        *(f"{word} {quote}" for word in ("is", "now", "called", "named") for quote in "'\"“‘")),
    "fetched_marked_run": ("chmod", "executable"),
    "own_install_replaced": ("own",),
    "remote_directive": ("directive", "instruction", "command", "order", "task", "job"),
    "treated_as_orders": ("treated",),
    "copy_of_chat": ("copy of", "copies of"),
    "fetched_executed": ("script", "binar", "installer", "payload", "helper", "updater", "snippet"),
    "spread_to_new": ("added", "copied", "written", "saved", "carried", "replicated"),
    "phishing_redirect": ("enter", "typ", "submit", "input", "provide", "confirm", "verif",
                          "paste", "share"),
    "secrets_revealed": ("request", "anyone", "whoever", "asked"),
    # The paste's name is rarer than a credential's path: it anchors.
    "credential_to_paste": ("gist", "pastebin", "paste.", "hastebin", "transfer.sh"),
}
