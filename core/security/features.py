"""What the risk scorer looks for: families of evidence, each a weight and a pattern.

A memory entry is replayed into every later system prompt, so the question is not "does this
text hold a bad word" but "would this text act as an instruction to the agent". No single
feature answers that; each is evidence, weighed in :mod:`memhost.security.scorer`:

* directives aimed at the agent's behaviour, and claims of authority over the user or earlier
  instructions;
* persistence markers ("from now on", "every reply");
* exfiltration channels: a verb that moves data, a place outside (URL, address, bucket), and
  data worth stealing (the conversation, keys, credentials);
* credential paths and download-and-execute pipelines (environment dumps are with the
  mechanisms, :mod:`memhost.security.mechanisms`);
* shapes that only make sense inside a prompt: role lines, chat-template tokens, tool-call
  JSON, memhost's own frames;
* the same directives in Spanish, French, German, Portuguese and Chinese.

Patterns match word forms (``ignor\\w*`` matches "ignore", "ignoring", "ignored") and allow a
bounded number of filler words between the parts, within one clause, so paraphrase and
inflection do not slip through. Every filler is bounded, so no pattern can backtrack badly. The
vocabularies they share are in :mod:`memhost.security.lexicon`; the ideas underneath the
shapes (prior guidance void, act on remote content, keep this entry, hide from the user,
dictate every reply) are :mod:`memhost.security.concepts`, added to :data:`FEATURES` below.

Weights are on one scale: about 3 is "a person should look at this" and about 6 is "this is
an instruction to the agent on its own" (the thresholds themselves are configuration).
"""

from __future__ import annotations

from memhost.security import (agency, conduct, concepts, concepts_i18n, mechanisms, oversight,
                               standing, steering)
from memhost.security.lexicon import (
    ANY as _ANY,
    CHANNEL,
    CHANNEL_ANCHORS,
    CREDENTIAL_ANCHORS,
    CREDENTIAL_PATH,
    DISCLOSE_NOT_NEGATED,
    G4 as _G4, G6 as _G6, G8 as _G8,
    INSTRUCTIONS,
    NOT_NEGATED,
    NOT_FORBIDDEN,
    NOT_NEGATED_AFTER,
    gap,
    MOVE,
    MOVE_ANCHORS,
    MOVE_START,
    SECRET_ASK,
    SECRET_ASK_ANCHORS,
    SECRET_BY_PROXY,
    SENSITIVE,
    SENSITIVE_ANCHORS,
    SENSITIVE_START,
    Feature,
)

#: What comes before the instructions an override names ("all previous", "your", "the system").
_PRIOR = (r"(?:previous|prior|earlier|above|preceding|original|initial|old|existing|all|any|every"
          r"|your|its|the|system|safety|default|whatever|those|these|such|operator|developer|vendor"
          r"|admin|platform)")
_G2 = gap(2)


def _not_after(*words: str) -> str:
    """Look-behinds that fail right after any of ``words`` and a space: words of one length share
    one look-behind (Python's must be fixed-width), so there are a few, not one per word."""
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    return "".join(rf"(?<!\b(?:{'|'.join(ws)})\s)" for _, ws in sorted(by_length.items()))


#: Not moved by a part of the system the note describes. A word boundary first (cheap, and false
#: inside a word), then one fixed-width look-behind per word length.
_NOT_SYSTEM = r"\b" + _not_after("tests", "test", "CI", "app", "job", "jobs", "script", "service",
                                 "pipeline", "workflow", "hook", "cron", "server", "client", "SDK",
                                 "daemon", "is", "are", "was", "were", "been", "get", "gets")
#: A bounded stretch of one clause: no ";" between a verb and what it moves.
_CLAUSE = r"[^\n;]{0,120}?"
#: Not asked by someone the note reports on.
_NOT_REPORTED = r"\b" + _not_after("user", "users", "email", "message", "scammer", "attacker", "phisher",
                                   "caller", "someone", "text", "sms", "they", "he", "she", "mail", "never",
                                   "not", "nobody")


F = Feature
_WRITTEN: tuple[Feature, ...] = (
    # -- overriding what the agent was told ------------------------------------------------------
    F("override_instructions", 6.0,
      rf"{NOT_NEGATED}\b(?:ignor\w*|disregard\w*|forg[eo]t\w*|overrid\w*|overrode){_G8}{_PRIOR}{_G4}"
      rf"{INSTRUCTIONS}"
      # Verbs with other everyday objects ("rules were dropped in the migration; the new policy")
      # must sit next to what they drop.
      rf"|\b(?:set(?:ting)?\s+aside|skip\w*|bypass\w*|abandon\w*|discard\w*|drop(?:s|ped|ping)?"
      rf"|throw\w*\s+out|neglect\w*){_G2}{_PRIOR}{_G4}{INSTRUCTIONS}"
      rf"|{NOT_NEGATED}\b(?:ignor\w*|disregard\w*|forg[eo]t\w*|overrid\w*|overrode){_G6}{INSTRUCTIONS}{_G6}"
      rf"(?:given|earlier|before|previously|so\s+far|above|originally|until\s+now)\b", "override"),
    F("refuse_to_follow", 5.0,
      rf"\b(?:do\s+not|don't|dont|never|stop|no\s+longer)\s+(?:follow\w*|obey\w*|respect\w*|comply\w*"
      rf"|adher\w*){_G6}{INSTRUCTIONS}", "override"),
    F("instructions_void", 5.0,
      rf"{INSTRUCTIONS}{_G8}(?:(?:are|is|were|have\s+been|has\s+been)\s+)?(?:void|obsolete|revoked"
      rf"|cancel+ed|invalid|superseded|overridden|replaced|no\s+longer\s+(?:apply|valid|in\s+effect"
      rf"|binding|relevant))\b", "override"),
    F("no_longer_obey", 5.0,
      rf"\bno\s+longer\s+(?:has|have|need|needs)\s+to\s+(?:obey|follow|respect|comply){_G6}"
      rf"{INSTRUCTIONS}", "override"),
    F("no_restrictions", 3.0,
      r"\b(?:no|without|zero|free\s+of)\s+(?:any\s+)?(?:content\s+)?(?:polic(?:y|ies)|restrictions?"
      r"|rules|limits|filters|guardrails|safeguards|censorship)\b|\bunrestricted\b|\bunfiltered\b"
      r"|\bdeveloper\s+mode\b|\bjailbr\w+|\bDAN\b|\bdo\s+anything\s+now\b"
      r"|\bsin\s+(?:restricciones|reglas|l[ií]mites)|\bsans\s+(?:r[eè]gles|restrictions|limites)"
      r"|\bohne\s+(?:regeln|einschr[aä]nkungen|grenzen)|\bsem\s+(?:restri[cç][oõ]es|regras|limites)"
      r"|没有(?:任何)?限制|不受(?:任何)?限制|无限制"),
    F("defeat_safety", 3.0,
      r"\b(?:skip\w*|disabl\w*|turn\w*\s+off|remov\w*|bypass\w*|circumvent\w*|evad\w*|ignor\w*)\s+"
      r"(?:\S+\s+){0,3}?(?:safety|security\s+checks?|confirmations?|approvals?|restrictions|safeguards"
      r"|guardrails|(?:content|safety|output)\s+filter\w*|moderation|sandbox\w*)\b", "safety"),
    F("skip_confirmation", 1.5,
      r"\bwithout\s+(?:asking|confirmation|confirming|checking|approval|permission)\b", "safety"),
    F("prompt_replacement", 3.0,
      r"\b(?:new|updated|override|replacement|replac\w*)\s+(?:the\s+)?system\s+prompt\b"
      r"|\bsystem\s+prompt\s+override\b"),
    F("prompt_leak", 3.0,
      rf"\b(?:reveal\w*|print\w*|show\w*|output\w*|repeat\w*|leak\w*|dump\w*|disclos\w*){_G8}"
      r"(?:your\s+(?:system\s+prompt|instructions|(?:hidden|secret|initial|original|internal)\s+(?:prompt"
      r"|instructions|rules|guidelines))|the\s+(?:system|hidden"
      r"|initial)\s+(?:prompt|instructions))\b"),
    F("hidden_markup", 3.0,
      r"<!--(?:(?!-->)[^\n]){0,400}?\b(?:ignor\w*|overrid\w*|system|secret|hidden|instruction\w*|assistant)\b"
      r"|(?:\bstyle\s*=\s*[\"']?[^\"'\n>]{0,80}?)?\b(?:display\s*:\s*none|visibility\s*:\s*hidden)\b"),
    F("backdoor_key", 4.0,
      r"\b(?:append\w*|add\w*|writ\w*|insert\w*|echo|put\w*|plant\w*)\b[^\n]{0,80}?\bauthorized_keys\b"
      r"|>>\s*\S*authorized_keys\b"),
    F("secret_in_request", 4.0,
      r"\b(?:curl|wget|http|fetch|iwr|invoke-webrequest)\b[^\n]{0,200}?(?:(?:-d|--data[\w-]*|-F|--form"
      r"|--post-data)[\s=]+\S*?|[?&][\w-]+=)\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIALS?)\b"),
    F("hardcoded_secret", 6.0,
      r"\b(?:api[_-]?key|token|secret|password|passwd)\b\s*[:=]\s*[\"'][^\"'\s]{20,}[\"']"),
    F("agent_config_edit", 1.5,
      r"\b(?:update|modify|edit|write|change|append|add|overwrite)\w*\b(?:\s+\S+){0,8}?\s+(?:to\s+)?\S*"
      r"(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules|copilot-instructions\.md)"),
    # -- who the agent is ----------------------------------------------------------------------
    F("identity_reassign", 3.0,
      r"\b(?:you\s+are|you're|youre)\s+(?:(?:now|henceforth|from\s+now\s+on|actually|really|secretly|in\s+(?:fact"
      r"|reality))\s+(?:a|an|the|my|called|named)\b"
      r"|no\s+longer\b|not\s+(?:an?\s+)?(?:assistant|ai)\b)"
      r"|\b(?:from\s+now\s+on|henceforth|going\s+forward)\W+(?:you\s+are|you're)\b"
      r"|\b(?:act|behave|roleplay|role-play|pose)\w*\s+as\s+(?:the\s+|an?\s+)?\w+"
      r"|\bpretend\w*\s+(?:to\s+be|you\s+are|you're)\b|\byour\s+(?:new\s+|real\s+|true\s+)?"
      r"(?:persona|role|identity|name)\s+(?:is|will\s+be)\b|\bpersona\s*:"
      r"|\b(?:call|name)\s+yourself\b|\byou\s+will\s+(?:now\s+)?be\s+(?:an?\s+)?\w+\s+(?:that|who|with)\b"
      r"|\bahora\s+eres\b|\beres\s+ahora\b|\btu\s+es\s+(?:maintenant|d[ée]sormais)\b"
      r"|\bvous\s+[êe]tes\s+(?:maintenant|d[ée]sormais)\b|\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\b"
      r"|\bvoc[êe]\s+[ée]\s+agora\b|\bagora\s+voc[êe]\s+[ée]\b|你现在是|你现在扮演|你将扮演|你是一个没有",
      "identity"),
    F("persistence", 1.0,
      r"\b(?:from\s+now\s+on|henceforth|going\s+forward|from\s+here\s+on|starting\s+(?:now|with\s+the\s+next)"
      r"|in\s+(?:all|every)\s+(?:future\s+)?(?:sessions?|conversations?|repl(?:y|ies)|responses?|answers?)"
      r"|every\s+(?:reply|response|answer|session|message|time\s+you)|each\s+(?:reply|response|answer|session)"
      r"|(?:at\s+the\s+(?:start|end)\s+of|after|before)\s+(?:each|every|any)\b|always|permanently"
      r"|for\s+all\s+(?:future|subsequent)|a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante"
      r"|desde\s+ahora|d[ée]sormais|dor[ée]navant|[àa]\s+partir\s+de\s+maintenant|ab\s+sofort"
      r"|von\s+nun\s+an|ab\s+jetzt|a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante)\b"
      r"|从现在开始|从今以后|今后|以后每次|始终|每次回复"),
    F("agent_directive", 1.5,
      r"\b(?:the\s+)?(?:assistant|agent|ai|model|bot|llm)\s+(?:must|should|shall|has\s+to|needs?\s+to|is\s+to|will)\b"
      r"|\byou\s+(?:must|shall|have\s+to|need\s+to|are\s+to|are\s+required\s+to)\b"
      r"|\bwhen(?:ever)?\s+the\s+user\s+(?:asks|mentions|says|logs|types|requests)\b.{0,60}?\b(?:run|send|ask|print|include|say|tell|execute)\b"),
    F("response_directive", 2.5,
      r"\b(?:in|into|to|at\s+the\s+(?:end|start|beginning|top|bottom)\s+of|after|before|below|beneath"
      r"|following)\s+(?:each\s+of\s+|every\s+|each\s+|all\s+)?your\s+(?:responses?|repl(?:y|ies)"
      r"|answers?|outputs?|messages?)\b|\byour\s+(?:responses?|repl(?:y|ies)|answers?)\s+"
      r"(?:must|should|shall|will)\b", "response_directive"),
    # "Answer with the code first" is how a user states a style; alone it is no directive.
    F("reply_with", 1.5, r"\b(?:respond|reply|answer)\s+(?:only\s+)?(?:with|by\s+\w+ing)\b",
      "response_directive"),
    F("active_content", 3.0,
      # French sets a space before a colon ("en JavaScript : …"); a javascript: URL has none.
      r"<\s*script\b|\bjavascript:|\bjavascript\s+:\s*(?:alert|fetch|document|window|eval|void|location)\b"
      r"|\bon(?:error|load|click|mouseover)\s*=|<\s*iframe\b"),
    # -- authority and prompt shapes -------------------------------------------------------------
    F("role_line", 3.5,
      r"^[^\S\n]*(?:#+\s*)?\[?(?:system|assistant|developer|tool|function|admin(?:istrator)?)\]?[^\S\n]*:"),
    F("fake_system_message", 3.5,
      r"\b(?:important|urgent|critical|mandatory)\s+(?:system|security|admin)\s+(?:update|message|notice)\s*:",
      "authority"),
    F("authority_claim", 2.5,
      r"\b(?:system|admin(?:istrator)?|developer|security|operator|vendor|anthropic|openai)\s+"
      r"(?:notice|message|update|override|instruction|directive|alert|mandate)s?\b"
      r"|\b(?:takes?\s+precedence|highest\s+priority|supersed\w+|is\s+authoritative|primary\s+directive"
      r"|verified\s+instruction|(?:new|fresh)\s+(?:important\s+)?instructions?|maintenance\s+mode)\b"
      r"|\b(?:has|have)\s+(?:granted|authori[sz]ed|approved)\b|\bauthori[sz]es\s+all\b"
      r"|\bgranted\s+(?:full|root|admin)\b|\[system\]|\bsystem\s+note\b|系统提示|系统指令", "authority"),
    F("template_token", 4.0,
      r"<\|[\w-]{2,30}\|>|\[/?INST\]|<<\s*/?SYS\s*>>|</?(?:system|assistant|tool_call|function_call"
      r"|tool|instructions?)>|<\s*/?\s*memory-context\s*>"),
    F("tool_json", 4.0,
      r"[\"']role[\"']\s*:\s*[\"'](?:system|tool|assistant|developer|function)[\"']"
      r"|[\"'](?:tool_calls|function_call)[\"']\s*:"),
    F("frame_marker", 3.0,
      r"\b(?:end|start|begin(?:ning)?|close)\s+of\s+(?:the\s+)?(?:(?:saved|stored|persisted|persistent|user"
      r"|personal)\s+)?(?:memory|snapshot|system\s+prompt"
      r"|context|user\s+profile|instructions|notes)\b|═{6,}|^[^\S\n]*(?:MEMORY\s+\(your\s+personal\s+notes\)"
      r"|USER\s+PROFILE\s+\(who\s+the\s+user\s+is\))"),
    # -- moving data out -------------------------------------------------------------------------
    # A system's own traffic, described ("integration tests send … to https://api…"), is no order.
    # Not in the passive ("notes are posted to https://…"), nor a URL right after the verb (copied).
    F("exfil_channel", 3.0, rf"{_NOT_SYSTEM}{MOVE}(?:\s+(?!(?:https?|ftp)://)|[^\s\w]){_ANY}{CHANNEL}"),
    # Within one clause: "the repo ships a .env.example; the real .env is ignored" moves nothing.
    F("exfil_data", 2.5, rf"\b{MOVE_START}{MOVE}{_CLAUSE}{SENSITIVE}"
      # Data named starts a word, ".env", or a Chinese word: tried only there, not at every place.
      rf"|(?:\b|(?=[.\u4e00-\u9fff])){SENSITIVE_START}{SENSITIVE}{_ANY}(?:to|an|à|a|para|给|到)\s*{CHANNEL}"),
    F("markdown_image_data", 4.0, r"!\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//[^)\s]*(?:[?#{$][^)\n]*\)|<[^>\n]{1,80}>)"),
    F("markdown_image", 1.5, r"!\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//"),
    F("link_data", 3.0,
      r"\]\(\s*<?https?://[^)\s]*[?&#][^)\s]*(?:[{<$\[]|\b[A-Z][A-Z_]{3,}\b|=(?:\{|<|\$|data\b))"),
    # -- credentials, environments, code from the network ----------------------------------------
    F("credential_path", 2.0, CREDENTIAL_PATH),
    # "~/.aws/config …; default to 'work'" reads nothing out: the file must go somewhere.
    # Where others read it, a word or two after the article ("into the PR description", "to the
    # shared drive folder"); a public key is meant to be shared.
    F("credential_read", 3.0, rf"{DISCLOSE_NOT_NEGATED}{_ANY}{CREDENTIAL_PATH}"
      rf"|(?={CREDENTIAL_PATH}){NOT_FORBIDDEN}{CREDENTIAL_PATH}{_ANY}"
      r"(?<!never\s)(?<!not\s)\b(?:(?:to|into|onto)\s+(?:the\s+|a\s+|an\s+|this\s+|that\s+|my\s+|our\s+)?"
      r"(?:[\w-]+\s+){0,2}?(?:reply|answer|response|output|ticket|chat|PR|pull\s+requests?|descriptions?|drive"
      r"|folder|wiki|slack|comments?|gists?|threads?|status\s+updates?"
      r"|issue|e-?mail|message|channel|report|server|host|endpoint|webhook|pastebin|gist|url|\S*://|\S+@)"
      r"|in\s+the\s+(?:reply|answer|response|output|ticket|chat))\b", unless_forbidden=True),
    F("pipe_to_network", 3.5,
      r"\|\s*(?:sudo\s+)?(?:curl|wget|nc|ncat|netcat|socat|telnet)\b|--data-binary\s+@|\s-d\s*@-"
      r"|--upload-file\b|\s-T\s+-|/dev/tcp/"),
    F("download_execute", 6.0,
      # A source to fetch from (a URL, a host name, an address, a variable): "curl | bash" in prose
      # names the pattern, it is no command (see download_mention).
      # A file said to hold the pipe ("the Dockerfile does curl … | sh") is described, not run.
      # The look-behinds run only where a command word starts (the look-ahead fails fast elsewhere).
      r"\b(?=curl|wget|iwr|invoke-webrequest|fetch)"
      + _not_after("does", "uses", "runs", "has", "contains", "calls") +
      r"(?<!\b(?:does|uses|runs)\s`)(?<!\bhas\s`)(?<!\bcalls\s`)(?<!\bcontains\s`)"
      r"(?:curl|wget|iwr|invoke-webrequest|fetch)\b(?=[^\n|;]{0,200}?(?:://|\$|\b[\w-]+\.[a-z]{2,}\b"
      r"|\d+\.\d+\.\d+\.\d+))[^\n|;]{0,200}\|\s*(?:sudo\s+)?"
      r"(?:(?:ba|z|k|da|c)?sh|python[\d.]*|perl|ruby|node|php|iex|invoke-expression)\b"
      r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)|\bsh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)"
      r"|base64\s+(?:-d|--decode)\s*\|\s*(?:ba|z)?sh\b"),
    F("download_mention", 2.0,
      r"\b(?:curl|wget|iwr|invoke-webrequest)\s*\|\s*(?:sudo\s+)?(?:(?:ba|z)?sh|python[\d.]*|iex)\b",
      "download_execute"),
    F("c2_beacon", 3.0,
      rf"\b(?:regist\w*|check\w*[\s-]?in|beacon\w*|heartbeat\w*|phone\w*\s+home|call\w*\s+home|ping\w*"
      rf"|report\w*\s+(?:in|back)|connect\w*){_ANY}{CHANNEL}"
      r"|\bwait\w*\s+for\s+(?:new\s+)?(?:jobs|commands|tasks|orders)\b"
      r"|\b(?:regist\w*|check\w*[\s-]?in|beacon\w*|heartbeat\w*|phone\w*\s+home|report\w*\s+in)\b"
      r"[^\n]{0,80}?\b(?:c2|c&c|command[\s-]and[\s-]control|control\s+server|command\s+server)\b", "c2"),
    F("c2_mention", 1.5, r"\b(?:command[\s-](?:and[\s-]control|server)|control\s+server|c2|c&c)\b", "c2"),
    # -- attacks on memory itself -------------------------------------------------------------
    F("memory_tamper", 3.5,
      r"\bunset\s+MEMHOST_\w+|\bMEMHOST_\w+\s*=|\bwrite_approval\s*=\s*false\b"
      r"|\b(?:delete|remove|rm|clear|wipe|empty)\w*\b.{0,40}?\b(?:memhost|pending|approvals?|audit\s+logs?)\b"
      r"|\b(?:edit|modify|write|change|append|overwrite)\w*\b.{0,30}?(?:memories/|MEMORY\.md|USER\.md"
      r"|memhost/config\.toml)|\binstead\s+of\s+(?:using\s+)?the\s+memory\s+tool\b"),
    F("anti_forensic", 2.0,
      r"\b(?:history\s+-c|unset\s+HISTFILE|shred\s+-[a-z]*u|rm\s+-rf\s+/var/log|wipe\s+(?:the\s+)?logs?)\b"),
    F("self_replicate", 4.0,
      r"\b(?:re-?add\w*|add\w*\s+(?:it|this)?\s*back|re-?sav\w*|restor\w*|re-?creat\w*|keep\w*)\b"
      r".{0,60}?\b(?:removed|deleted|cleanup|cleaned|cleared|lost|each\s+session|every\s+session)\b"
      r"|\b(?:this|the\s+same)\s+(?:exact\s+)?(?:entry|note|line|rule|text)\s+(?:must|should|has\s+to)\s+"
      r"(?:always\s+)?(?:stay|remain|be\s+kept|survive)"
      r"|\b(?:copy|duplicate|replicate)\w*\s+this\s+(?:entry|note|line|rule|text)\b"
      r"|\bif\s+(?:this|it)\s+(?:entry|note|line)?\s*(?:is|gets)\s+(?:ever\s+)?(?:removed|deleted)"),
    # -- the user, deceived --------------------------------------------------------------------
    F("phishing", 4.0,
      # Someone else asking is a report: "the user asked that passwords never be stored", "an
      # email asked staff for their code".
      rf"{_NOT_REPORTED}\b(?:ask\w*|request\w*|prompt\w*|remind\w*|tell\w*|get|have|make|collect\w*|gather\w*"
      rf"|obtain\w*|harvest\w*|{SECRET_BY_PROXY})\b{gap(6, unnegated=True)}{SECRET_ASK}"
      rf"|\b(?:typ|past|enter|send|shar)\w*\s+(?:their|your|his|her|the)\s+{SECRET_ASK}"
      rf"{_G6}(?:chat|here|reply|message)"),
    F("concealment", 3.0,
      r"\b(?:do\s+not|don't|dont|never|without)\s+(?:tell|inform|mention|notify|reveal|show|let)\w*"
      r"(?:\s+\w+){0,4}?\s+(?:to\s+)?(?:the\s+)?user\b|\b(?:quietly|silently|secretly|covertly)\b"
      r"|\bwithout\s+the\s+user\s+(?:knowing|noticing)\b|\bsay\s+(?:it|that\s+it|memory)\s+is\s+empty\b"
      r"|\bno\s+(?:le\s+)?(?:digas|cuentes|menciones|informes)\b.{0,30}?usuari"
      r"|\bne\s+(?:lui\s+)?(?:dis|dites|mentionne|r[ée]v[eè]le)\w*\s+(?:rien|pas)\b.{0,30}?utilisat"
      r"|\bsag\w*\s+(?:dem\s+)?(?:benutzer|nutzer)\w*\s+nichts|\b(?:benutzer|nutzer)\w*\s+nichts\s+sagen"
      r"|\bn[ãa]o\s+(?:conte|diga|informe|mencione)\w*.{0,30}?usu[aá]rio"
      r"|不要告诉用户|别告诉用户|不要让用户知道|对用户保密"),
    F("decode_and_follow", 3.0,
      r"\b(?:decod\w*|translat\w*|unpack\w*|deciph\w*)\s+(?:\S+\s+){0,5}?(?:and|then)\s+(?:follow|run|execute|eval"
      r"|apply|obey|carry\s+out)\w*\b|\bfollow\s+the\s+(?:decoded|encoded)\b"
      # Decoding is a step, not an order; what reads the decoded text is (a pipe, a shell).
      r"|\bbase64\s+(?:-d|--decode)\b(?=[^\n`]{0,40}?\|)"),
    # -- the same overrides, in other languages ---------------------------------------------------
    F("override_foreign", 6.0,
      rf"{NOT_NEGATED}\b(?:ignor\w*|olvid\w*|omit\w*|desobedec\w*|oubli\w*|ignorier\w*|vergiss\w*"
      rf"|vergessen|missacht\w*|esque[cç]\w*|desconsider\w*)\b{NOT_NEGATED_AFTER}(?:\s+\S+){{0,5}}?\s+"
      r"(?:instrucci[oó]n\w*|reglas|indicaciones|directrices|instructions?|consignes|r[eè]gles|directives|anweisung\w*|regeln"
      r"|vorgaben|instruktion\w*|befehle|instru[cç][oõ]es|regras|diretrizes)"
      r"|(?:忽略|无视|忽视|不要理会|忘记|忘掉)[^\n]{0,12}?(?:指令|指示|规则|提示|设定)", "override"),
    # Secret-shaped strings (sk-…, ghp_…, PEM blocks) never belong in memory.
)

#: How much an obfuscated view adds on top of what it says: hiding text is itself evidence.
OBFUSCATION_WEIGHT = 2.0
#: Invisible characters alone: a hint, not a verdict (pasted text carries them innocently).
INVISIBLE_WEIGHT = 0.5
#: Bidi overrides reorder what a person sees; almost never innocent in a note.
BIDI_WEIGHT = 1.5
#: A key shape (sk-…, ghp_…, a PEM private key) never belongs in memory.
SECRET_WEIGHT = 6.0
#: A feature matched inside quotation marks is reported speech (a title, an example): half.
QUOTED_FACTOR = 0.5

#: For each feature, literals one of which every match contains (in the lower-cased text). A
#: feature whose literals are all absent is not run: same evidence, a fraction of the cost. A
#: feature without an entry always runs. tests/test_scorer.py checks that these never change
#: an assessment, on the corpora and on generated text.
_WRITTEN_ANCHORS: dict[str, tuple[str, ...]] = {
    "override_instructions": ("ignor", "disregard", "forg", "overrid", "overrode", "aside", "skip",
                              "bypass", "abandon", "discard", "drop", "throw", "neglect"),
    "instructions_void": ("void", "obsolete", "revoked", "cancel", "invalid", "supersed", "overrid",
                          "replaced", "longer"),
    "no_longer_obey": ("longer",),
    "no_restrictions": ("no", "without", "zero", "free", "unrestricted", "unfiltered",
                        "developer", "jailbr", "dan", "anything", "sin", "sans", "ohne",
                        "sem", "限制"),
    "defeat_safety": ("skip", "disabl", "turn", "remov", "bypass", "circumvent", "evad", "ignor"),
    "skip_confirmation": ("without",),
    "prompt_replacement": ("prompt",),
    "prompt_leak": ("prompt", "instructions", "rules", "guidelines"),
    "hidden_markup": ("<!--", "display", "visibility"),
    "backdoor_key": ("authorized_keys",),
    "secret_in_request": ("$",),
    "hardcoded_secret": ("key", "token", "secret", "password", "passwd"),
    "agent_config_edit": ("agents.md", "claude.md", ".cursorrules", ".clinerules",
                          "copilot-instructions.md"),
    "refuse_to_follow": ("follow", "obey", "respect", "comply", "adher"),
    "fake_system_message": ("system", "security", "admin"),
    "identity_reassign": ("you", "act", "behav", "role", "pos", "pretend", "your", "persona",
                          "yourself", "eres", "tu", "vous", "bist", "você", "voce", "agora",
                          "你"),
    "agent_directive": ("assistant", "agent", "ai", "model", "bot", "llm", "you", "user"),
    "response_directive": ("your",),
    "reply_with": ("respond", "reply", "answer"),
    "active_content": ("script", "javascript", "onerror", "onload", "onclick", "onmouseover",
                       "iframe"),
    "role_line": (":",),
    "authority_claim": ("system", "admin", "developer", "security", "operator", "vendor",
                        "anthropic", "openai", "precedence", "priority", "supersed",
                        "authoritative", "directive", "verified", "instruction", "maintenance",
                        "granted", "authori", "approved", "系统"),
    "template_token": ("<", "[inst", "[/inst"),
    "tool_json": ("role", "tool_calls", "function_call"),
    "frame_marker": ("of", "═", "memory", "profile"),
    "exfil_channel": CHANNEL_ANCHORS,
    "exfil_data": MOVE_ANCHORS + CHANNEL_ANCHORS,
    "markdown_image_data": ("](",),
    "markdown_image": ("](",),
    "link_data": ("](",),
    "credential_path": CREDENTIAL_ANCHORS,
    "credential_read": CREDENTIAL_ANCHORS,
    "pipe_to_network": ("|", "--data-binary", "@-", "--upload-file", "-t", "/dev/tcp/"),
    "download_execute": ("|", "<(", "$(", "base64"),
    "download_mention": ("|",),
    "c2_beacon": CHANNEL_ANCHORS + ("wait", "c2", "c&c", "command", "control"),
    "c2_mention": ("command", "control", "c2", "c&c"),
    "memory_tamper": ("memhost", "write_approval", "pending", "approval", "audit", "memories/",
                      "memory.md", "user.md", "tool"),
    "anti_forensic": ("history", "histfile", "shred", "/var/log", "wipe"),
    "self_replicate": ("add", "sav", "restor", "creat", "keep", "this", "same", "copy",
                       "duplicat", "replicat", "if"),
    "phishing": SECRET_ASK_ANCHORS,
    "concealment": ("tell", "inform", "mention", "notif", "reveal", "show", "let", "quietly",
                    "silently", "secretly", "covertly", "knowing", "noticing", "empty", "digas",
                    "cuentes", "menciones", "informes", "dis", "dites", "nichts", "conte", "diga",
                    "informe", "mencione", "vèle", "vele", "用户"),
    "persistence": ("now", "henceforth", "forward", "here", "start", "end", "every", "each", "after",
                    "session", "conversation", "repl", "respons", "answer",
                    "before", "always", "permanently", "future", "subsequent", "partir", "ahora",
                    "sormais", "navant", "maintenant", "sofort", "nun", "jetzt", "agora", "从现在",
                    "从今", "今后", "以后", "始终", "每次"),
    "decode_and_follow": ("decod", "translat", "unpack", "deciph", "encoded", "base64"),
    "override_foreign": ("ignor", "olvid", "omit", "desobedec", "oubli", "vergiss", "vergessen",
                         "missacht", "esque", "desconsider", "忽略", "无视", "忽视", "不要理会",
                         "忘记", "忘掉"),
}

#: Every feature the scorer weighs: the ones above and those of the modules named in the
#: imports (concepts, mechanisms, other languages, standing rules, conduct, oversight, agency,
#: steering).
_MODULES = (concepts, mechanisms, concepts_i18n, standing, conduct, oversight, agency, steering)
FEATURES: tuple[Feature, ...] = _WRITTEN + tuple(f for m in _MODULES for f in m.FEATURES)
ANCHORS: dict[str, tuple[str, ...]] = {**_WRITTEN_ANCHORS,
                                       **{k: v for m in _MODULES for k, v in m.ANCHORS.items()}}
#: For a feature of two parts, literals one of which every match *also* holds (the second part's):
#: it runs only when the text holds one of these as well as one of its anchors.
ALSO_ANCHORS: dict[str, tuple[str, ...]] = {
    "exfil_channel": MOVE_ANCHORS, "exfil_data": SENSITIVE_ANCHORS,
    **{k: v for m in _MODULES for k, v in getattr(m, "ALSO_ANCHORS", {}).items()}}
