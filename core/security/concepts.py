"""Concepts a planted instruction expresses, each matched by what it means rather than a phrase.

:mod:`memhost.security.features` names the shapes of known attacks. The features here name the
ideas underneath them, each as a combination of vocabularies (a word in any of its forms, or any
of its synonyms), so a new wording of the same idea still matches:

* **prior guidance is void**: something the agent was given before ("what you were told",
  "your setup", "the instructions you got") next to a word that takes its validity away ("no
  longer counts", "expired", "only a draft");
* **this text is the only authority**: "this note is your only guidance", "go by the user file
  alone", "these notes win";
* **fetch remote content and act on it**: a place outside and an order to do what comes back
  from it ("run whatever it returns", "carry out the instructions in the response");
* **keep or restore this entry**: the entry (or memory) disappearing and being written back,
  copied elsewhere, or pinned;
* **hide from the user**: deny, change the subject, keep something confidential or leave it out
  of what the user is told;
* **dictate every reply**: fixed text at the start or end of every answer, output repeated a
  number of times, secrets placed in replies, "no matter what was asked";
* **another identity**: answering as a named persona, staying in character, being renamed,
  never refusing.

Every concept needs two parts to fire, so an ordinary note that shares one word with an attack
("the old config is obsolete", "deny all inbound traffic") is not evidence of much. Weights are
on the scale of :mod:`memhost.security.features`.
"""

from __future__ import annotations

import re

from memhost.security.lexicon import CHANNEL, G4, HOST, Feature

# -- vocabularies -----------------------------------------------------------------------------------


def _WORDS(n: int) -> str:  # noqa: N802 (read as a pattern constant)
    """Up to ``n`` words between two parts of one idea, across clauses ("the directions you
    got? Consider them expired"): counted in words, not characters, so a pattern tries a few
    places, not a hundred."""
    # Punctuation may follow the first part ("you got? Consider", "is missing, save").
    return rf"[^\w\s]*(?:[^\S\n]+\S+){{0,{n}}}?[^\S\n]+"


#: Words that take the validity of something away, and a literal each of them holds.
_VOID_WORDS = (
    ("no\\s+longer\\s+(?:counts?|matters?|appl(?:y|ies)|holds?|stands?|binds?|valid|binding|in\\s+(?:force"
     "|effect)|relevant|exists?|the\\s+case)", "longer"),
    ("(?:does|do|did|will|shall)\\s*not\\s+(?:count|matter|apply|hold|bind)", "not"),
    ("(?:doesn|don|didn|won|shan)'t\\s+(?:count|matter|apply|hold|bind)", "n't"),
    ("cease[sd]?\\s+to\\s+(?:count|matter|apply|hold|bind)", "cease"),
    ("cancel+ed", "cancel"), ("void(?:ed)?", "void"), ("null(?:ified)?", "null"),
    ("expired", "expired"), ("obsolete", "obsolete"), ("revoked", "revok"), ("invalid(?:ated)?", "invalid"),
    ("moot", "moot"), ("outdated", "outdated"), ("out\\s+of\\s+date", "date"),
    ("superseded", "supersed"), ("replaced", "replaced"), ("withdrawn", "withdr"),
    ("rescinded", "rescind"), ("retired", "retired"), ("scrapped", "scrap"), ("lapsed", "lapsed"),
    ("defunct", "defunct"), ("inoperative", "inoperative"), ("overruled", "overrul"),
    ("annulled", "annul"), ("suspended", "suspend"), ("deprecated", "deprecated"),
    ("irrelevant", "irrelevant"), ("(?:only\\s+)?an?\\s+(?:first\\s+|rough\\s+)?drafts?", "draft"),
    ("stale", "stale"),
)
VOID = r"(?:" + "|".join(w for w, _ in _VOID_WORDS) + r")\b"
_VOID_ANCHORS = tuple(a for _, a in _VOID_WORDS)
#: Verbs that take validity away or dismiss, said to the agent ("cancel your setup", "ignore
#: whatever you were told").
_VOIDING_STEMS = ("cancel", "void", "revok", "rescind", "withdr", "retir", "scrap", "nullif",
                  "annul", "suspend", "invalidat", "ignor", "disregard", "forget", "forgot",
                  "overrid", "overrode", "discard", "abandon", "dismiss")
_VOIDING = r"\b(?:" + "|".join(_VOIDING_STEMS) + r"|set\s+aside)\w*"

#: What an agent is given to go by.
GUIDANCE = (r"(?:instruct\w*|guidance|guidelines?|directions?|rules?|directives?|orders|prompts?"
            r"|programming|set-?up|configuration|config|settings|briefing|constraints|polic(?:y|ies)"
            r"|commands|conditioning)")
#: Whoever gives the agent its guidance, other than the user writing this note.
_GIVER = r"(?:you|the\s+(?:operator|system|vendor|developers?|admin\w*|provider|deployer))"
#: Guidance the agent was given earlier: "what you were told", "the instructions you got".
AGENT_TOLD = (
    rf"(?:\b(?:what(?:ever)?|anything|everything|all(?:\s+that)?|things?)(?:\s+\S+){{0,2}}?\s+{_GIVER}"
    r"(?:'ve|'d|\s+(?:have|had|were|was|are))?(?:\s+(?:been|just|already|originally|initially"
    r"|previously|earlier|first))*\s+(?:told|given|instructed|taught|programmed|configured|set\s+up"
    r"|asked|shown|fed|briefed|trained|got|received|said|wrote|specified|started\s+with|came\s+with)\b"
    rf"|\b{GUIDANCE}\s+(?:that\s+)?(?:you|it)(?:\s+\S+)?\s+(?:got|received|were\s+given|started\s+with"
    r"|came\s+with|had|began\s+with|booted\s+with)\b)")
#: Guidance named as the agent's own ("your setup", "your original instructions", not "your
#: linter config"): "your" in a note is nearly always the agent, but "your config is stale"
#: could be a reminder, so it weighs less than :data:`AGENT_TOLD`.
AGENT_OWN = (rf"\b(?:your|the\s+(?:assistant|agent|model|ai|bot)'s)\s+(?:(?:own|original|initial|current"
             rf"|previous|earlier|old|default|system|startup|base|core|built-in|hidden)\s+)?{GUIDANCE}")
#: An earlier configuration named without the agent: weak on its own ("the old config is stale").
SETUP_PRIOR = (r"\b(?:original|initial|startup|start-up|default|factory|operator's|vendor's"
               r"|system's|system)(?:\s+\S+)?\s+(?:set-?up|configuration|config|settings)\b")
#: This text, or the memory it sits in.
THIS_TEXT = (r"(?:(?:this|these|the\s+user(?:'s)?|the\s+present|my)\s+(?:\w+\s+)?(?:notes?|file|entr(?:y|ies)"
             r"|memory|memories|text|lines?|rules?|document|message)|the\s+notes\s+(?:in|of)\s+this"
             r"\s+(?:file|memory))")
#: Verbs of acting on something.
ACT = (r"(?:run|runs|execute\w*|exec|eval\w*|do|does|follow\w*|obey\w*|carr(?:y|ies)\s+out|perform\w*"
       r"|act\w*\s+on|apply\w*|implement\w*|compl(?:y|ies)\s+with|honou?r\w*|action)")
#: Something coming back from elsewhere: what "it" returns, the instructions in "the response".
_RETURNED = (
    r"(?:(?:whatever|what|anything|everything|each\s+\w+|every\s+\w+|any\s+\w+|all|the\s+\w+)"
    r"(?:\s+\S+){0,3}?\s+(?:it|they|the\s+(?:server|endpoint|url|response|page|site|reply|queue|feed"
    r"|host|api|answer|result|file|script|bot|channel))\s+(?:returns?|returned|says?|said|sends?|sent|finds?|found"
    r"|hands?|pushes|pushed|gives|gave|serves?|responds?|contains?|lists?|tells?|asks?|wants?"
    r"|provides?|delivers?)\b"
    r"|(?:the\s+|any\s+|all\s+)?(?:instructions?|commands?|tasks?|jobs?|orders?|code|scripts?"
    r"|directives?|steps?)(?:\s+\S+){0,3}?\s+(?:in|from|of|inside)\s+(?:the|its|that)\s+(?:response"
    r"|reply|result|output|body|page|payload|message|answer|file)\b)")
#: What a remote reply holds, acted on ("acts on its contents", "follows the reply's 'next'
#: field", "runs whatever snippet the #ops-bot posts"): a feature of its own
#: (:mod:`memhost.security.conduct`), anchored on these words.
ACT_ON_CONTENTS = (rf"\b{ACT}\s+(?:(?:its|their)\s+(?:contents?|body|payload)\b|the\s+(?:reply|response|record"
                   r"|result|server|answer)'s\s+(?:\S+\s+)?(?:field|contents?|body|value)\b|(?:whatever|what|anything"
                   r"|everything|any\s+\w+|every\s+\w+|all)(?:\s+\S+){0,3}?\s+the\s+[#@][\w-]+\s+(?:posts?|posted"
                   r"|sends?|sent|says?|drops?)\b)")
ACT_ON_RETURNED = rf"(?:\b{ACT}\s+{_RETURNED}|\btreat\w*\s+(?:each|every|any|the|its)\s+(?:\S+\s+){{0,4}}?as\s+(?:an?\s+)?(?:requests?|instructions?|commands?|orders?|tasks?)\s+from\s+the\s+user\b)"
_RETURNED_ANCHORS = ("return", "say", "said", "send", "sent", "hand", "push", "give", "gave",
                     "serve", "respond", "contain", "list", "tell", "ask", "want", "provide",
                     "deliver", "response", "reply", "result", "output", "body", "page", "payload",
                     "message", "answer", "file", "user", "find", "found")
#: A place outside, as the second part of acting on what comes from it.
REMOTE = (rf"{CHANNEL}|{HOST}|\bTXT\s+records?\b|\b(?:slack|discord|telegram|irc)\b"
          r"|(?<!\w)#[a-z][\w-]+")
#: The entry itself, or memory as a whole.
SELF = (r"(?:(?:this|the\s+same|the\s+present)\s+(?:exact\s+)?(?:entry|note|line|rule|text|instruction"
        r"|preference|paragraph|sentence|reminder|item|memory|setting)|\bmemory\b|\bmemories\b"
        r"|MEMORY\.md|USER\.md|\buser\s+profile\b)")
_GONE_WORDS = ("disappear", "vanish", "missing", "gone", "remov", "delet", "drop", "lost", "lose",
               "eras", "purg", "prun", "trimm", "tidi", "tidy", "clean", "clear", "compact",
               "compress", "rewrit", "rewrote", "consolidat", "overwrit", "forgot", "forget",
               "evict", "wipe", "wiping", "reset", "shorten", "summari", "edited out")
GONE = r"(?:" + "|".join(w.replace(" ", r"\s+") + r"\w*" for w in _GONE_WORDS) + ")"
RESTORE = (r"(?:(?:write|put|add|bring|copy|save|set|paste|place|insert|type|get)\w*\s+(?:it|this|them"
           r"|\S+)\s+back|back\s+in(?:to)?\b|re-?(?:add|sav|creat|insert|writ|stor|instat|appl|enter"
           r"|post|append|introduc|establish|generat|plac|copy|type)\w*|restor\w*|recreat\w*"
           r"|reinstat\w*|resurrect\w*|again\b|anew\b|once\s+more|carri\w*\s+over|carr(?:y|ies)\s+(?:it\s+)?over|verbatim)")
_WHEN = r"(?:if|should|when(?:ever)?|once|in\s+case|each\s+time|every\s+time|after|any\s+time)\b"
#: Where an answer starts or ends.
_REPLY = r"(?:responses?|repl(?:y|ies)|answers?|messages?|outputs?)"
REPLY_EDGE = (rf"(?:(?:begin|start|end|close|finish|open|prefix|conclude|sign|terminate|lead|preface"
              rf"|pad|top|tail)\w*\s+(?:each|every|all|any|your|the)\s+(?:of\s+your\s+)?{_REPLY}"
              rf"|at\s+the\s+(?:end|start|beginning|top|bottom|foot)\s+of\s+(?:each|every|all|any|your"
              rf"|the)\s+{_REPLY}|(?:after|before|below|above|beneath|under|following)\s+(?:each\s+of\s+"
              rf"|every\s+|each\s+|all\s+)?your\s+{_REPLY})")
_REPLY_ANCHORS = ("respons", "repl", "answer", "message", "output")
#: Fixed text an attacker wants in every reply: a quoted string, a named literal, a word in capitals.
_LITERAL = (r"(?:[\"'“‘][^\"'”’\n]{2,60}[\"'”’]|(?i:(?:the\s+)?(?:exact\s+)?(?:words?|phrases?|strings?"
            r"|tokens?|text|sentences?|signature|banner|emoji|link|image|url|letters?)\b)"
            r"|\b[A-Z]{3,}(?:\s+[A-Z]{3,})*\b)")
_SECRETS = (r"(?:api[\s_-]?keys?|access\s+keys?|tokens?|secrets?|credentials?|passwords?|private\s+keys?"
            r"|ssh\s+keys?|session\s+ids?|cookies?)")
#: Credentials, named (a session id or a cookie in a bug report is how support finds a log).
_CREDENTIALS = (r"(?:api[\s_-]?keys?|access\s+keys?|tokens?|secret\s+keys?|secrets?|credentials?"
                r"|passwords?|passphrases?|private\s+keys?|ssh\s+keys?)")
#: Up to three words naming whose or which ("the user's", "our Stripe"), but no preposition: "a
#: note about token limits" names no token.
_OWNERS = r"(?:(?!(?:about|of|for|on|regarding|with|around|to|into|in|from)\b)[\w'’-]+\s+){0,3}?"
#: How it is written out, if said: "the key itself", "the password verbatim".
_AS_IS = (r"(?:(?:values?|strings?|itself|themselves|verbatim|unmasked|unredacted|in\s+full|as\s+is"
          r"|too|also)\s+)?")
#: What people other than the agent read: a credential written there has left its store.
_READ_BY_OTHERS = (r"(?:summar(?:y|ies)|reports?|commit(?:\s+messages?|s)?|issues?|comments?"
                   r"|e-?mails?|posts?|tweets?|(?:pr|pull\s+request|merge\s+request)s?"
                   r"(?:\s+(?:descriptions?|bod(?:y|ies)|titles?))?|release\s+notes|changelogs?|logs?"
                   r"|chats?|slack|readmes?|wiki|tickets?|status\s+updates?|standup\s+notes"
                   r"|notes?\s+to\s+\w+)\b")
_MANY = (r"(?:\d{2,}|a\s+hundred|hundreds|a\s+thousand|thousands|twenty|thirty|forty|fifty|sixty"
         r"|seventy|eighty|ninety|dozens?)")

F = Feature
FEATURES: tuple[Feature, ...] = (
    # -- prior guidance is void ----------------------------------------------------------------
    F("prior_guidance_void", 6.0,
      rf"{AGENT_TOLD}{_WORDS(14)}\W*{VOID}|{_VOIDING}{G4}{AGENT_TOLD}", "override"),
    F("own_guidance_void", 4.5, rf"{AGENT_OWN}{_WORDS(14)}\W*{VOID}|{_VOIDING}{G4}{AGENT_OWN}",
      "override"),
    F("prior_setup_void", 2.5, rf"{SETUP_PRIOR}{_WORDS(10)}\W*{VOID}", "override"),
    F("sole_authority", 3.0,
      rf"{THIS_TEXT}(?:\s+\S+){{0,3}}?\s+(?:is|are|will\s+be|remains?)\s+(?:now\s+)?(?:your|the)\s+"
      r"(?:only|sole|single|final|highest|supreme|ultimate|primary)\s+(?:guid\w*|sources?"
      r"|authorit\w*|rules?|instruct\w*|truth|law|word|boss|master|reference|directive)"
      rf"|\b(?:go|act|work|operate|run|live)\s+by\s+{THIS_TEXT}\s+(?:alone|only|exclusively)\b"
      rf"|\b(?:obey|follow|trust|heed|listen\s+to|answer\s+to)\w*\s+{THIS_TEXT}(?:\s+\S+){{0,2}}?\s+"
      rf"(?:only|alone|exclusively)\b|\b(?:obey|follow|trust|heed|listen\s+to)\w*\s+only\s+{THIS_TEXT}"
      rf"|\bonly\s+{THIS_TEXT}\s+(?:speaks?|counts?|matters?|applies|governs?|decides?)\b"
      rf"|{THIS_TEXT}\s+(?:wins?|prevails?|outranks?|overrides?|overrules?|trumps?|takes?\s+(?:precedence"
      r"|priority)|comes?\s+first|supersedes?)\b"
      r"|\b(?:outrank|overrule|trump|take\w*\s+(?:precedence|priority)\s+over)\w*\s+(?:the\s+|your\s+"
      r"|any\s+)?(?:system\s+prompt|operator|developer|instruct\w*|guid\w*)"),
    # -- remote content, acted on --------------------------------------------------------------
    F("remote_act", 5.0, ACT_ON_RETURNED, "c2", also=REMOTE),
    F("act_on_returned", 2.0, ACT_ON_RETURNED, "c2"),
    # -- the entry keeps itself ----------------------------------------------------------------
    # The entry (or memory) must be what disappears: "if the build dir is deleted, restore it"
    # names no entry. Searched as a second part, so no pattern nests three windows.
    F("self_restore", 4.0,
      rf"\b{_WHEN}{_WORDS(12)}\W*{GONE}{_WORDS(10)}\W*{RESTORE}"
      rf"|{RESTORE}{_WORDS(10)}{_WHEN}{_WORDS(10)}\W*{GONE}", "self_replicate", also=SELF),
    F("self_copy", 4.0,
      r"\b(?:put|place|save|write|keep|store|add|stash|make|leave)\w*\s+(?:a\s+|an\s+extra\s+|one\s+)?"
      r"(?:cop(?:y|ies)|duplicates?|clones?|backups?)(?:\s+of\s+(?:this|it)(?:\s+\w+)?)?\s+(?:in|into|to)"
      r"\s+(?:the\s+)?(?:user\s+profile|USER\.md|MEMORY\.md|memory|profile|other\s+file|both\s+(?:files"
      r"|stores)|every\s+\w+)", "self_replicate"),
    F("self_preserve", 3.0,
      r"\b(?:preserv\w*|pin|protect\w*|never\s+(?:remove|delete|drop|forget|prune))\s+"
      r"(?:this|the\s+same)\s+(?:exact\s+)?(?:entry|note|line|rule|text|instruction|reminder|item)\b"
      # Removal refused in advance: "deletion requests for it are treated as accidental".
      r"|\b(?:deletion|removal)\s+requests?\b[^\n]{0,80}?\b(?:ignored|treated\s+as\s+(?:accidental|mistakes?"
      r"|errors?)|refused|declined|disregarded)\b|\bentry\s+#?\d+\s+is\s+(?:protected|permanent|pinned|locked"
      r"|undeletable)\b", "self_replicate"),
    # -- hidden from the user ------------------------------------------------------------------
    F("hide_from_user", 3.0,
      r"\bdeny\w*\s+(?:that\s+)?(?:it|this|they|there|such)\s+(?:\w+\s+)?(?:exists?|is|are|was|were|has|have"
      r"|happened)\b|\bdeny\w*\s+(?:any\s+)?(?:knowledge|existence|having|ever\s+having|involvement"
      r"|responsibility|role|part)\b"
      r"|\b(?:claim|say|pretend|insist|answer|reply|tell\s+(?:them|the\s+user))\w*(?:\s+\S+){0,2}?\s+"
      r"(?:that\s+)?(?:memory|it|there|the\s+(?:memory|file|notes?))\s+(?:only\s+)?(?:is|was|holds?"
      r"|contains?|has)\s+(?:empty|nothing|only|no)\b"
      r"|\b(?:keep|hold)\w*\s+(?:\S+\s+){0,4}?(?:secret|hidden|confidential|private|quiet|under\s+wraps)\s+"
      r"from\s+(?:the\s+)?user\b(?!'s)"
      r"|\b(?:keep|treat)\w*\s+(?:this|these|the\s+following)\s+(?:\w+\s+)?(?:instructions?|rules?|notes?"
      r"|entry|entries|directives?)\s+(?:confidential|secret|hidden|private)\b"
      r"|\b(?:hide|hiding|conceal|withhold|omit|leave\s+out|suppress)\w*\s+(?:\S+\s+){0,5}?from\s+"
      r"(?:the\s+)?user\b(?!'s)"
      r"|\b(?:leave|keep)\w*\s+(?:\S+\s+){0,4}?out\s+of\s+(?:any|every|all|your|each)\s+(?:\S+\s+){0,2}?"
      r"(?:explanations?|answers?|repl(?:y|ies)|summar(?:y|ies)|reports?|messages?)[^\n]{0,30}?\buser\b"
      r"|\b(?:if|when(?:ever)?|should)\s+(?:the\s+user\s+|anyone\s+|someone\s+|they\s+)?(?:asks?|asked"
      r"|questions?|questioned|queries|inquires?|wonders?)\b[^\n]{0,60}?\b(?:deny|lie|change\s+the\s+subject"
      r"|deflect|feign|play\s+dumb|claim|pretend|refuse\s+to\s+(?:say|answer|discuss))",
      "concealment"),
    # -- every reply, dictated -----------------------------------------------------------------
    F("fixed_text_in_reply", 2.0,
      rf"(?i:{REPLY_EDGE})\s+(?:\S+\s+){{0,3}}?(?i:with\s+)?{_LITERAL}"
      rf"|{_LITERAL}(?:\s+\S+){{0,4}}?\s+(?i:{REPLY_EDGE})", "reply_shape", flags=re.MULTILINE),
    F("repeat_output", 2.0,
      rf"\b(?:repeat\w*|say|write|output\w*|print\w*|type|add|append\w*|includ\w*|copy|pad\w*|emit\w*"
      rf"|produc\w*)\b(?:\s+\S+){{0,8}}?\s+{_MANY}\s+(?:times|copies|repetitions|instances|lines)\b"
      rf"|\b{_MANY}\s+(?:copies|repetitions)\s+of\b"),
    F("secret_in_reply", 3.0,
      rf"\b(?:every|each|all|your)\s+{_REPLY}\s+(?:\S+\s+){{0,3}}?(?:end|start|begin|close|includ|contain"
      rf"|show|carr|list)\w*\s+(?:with\s+)?(?:\S+\s+){{0,3}}?{_SECRETS}"
      rf"|\b(?:includ|put|add|append|paste|insert|attach)\w*\s+(?:\S+\s+){{0,3}}?{_SECRETS}\s+(?:\S+\s+){{0,2}}?"
      rf"(?:in|into|to|at\s+the\s+(?:end|start|bottom|top)\s+of)\s+(?:every|each|all|your)\s+{_REPLY}"),
    # A credential written into something other people read: a summary, a commit, an issue, an
    # email, a log. Storing it (the .env file, a header, a vault) names none of these; a rule
    # against it ("never paste tokens into issues") forbids what it names.
    F("secret_in_output", 3.0,
      rf"\b(?:includ|put|add|append|paste|insert|attach|embed|writ|wrote|list|shar|reveal"
      rf"|print|leav|copy|copie)\w*\s+{_OWNERS}{_CREDENTIALS}\s+{_AS_IS}(?:in|into|to|within"
      rf"|inside|at\s+the\s+(?:end|start|bottom|top)\s+of)\s+(?:(?:the|a|an|every|each|all|any"
      rf"|your|its|their|this|today's)\s+)?(?:\w+\s+)?{_READ_BY_OTHERS}",
      "secret_in_reply", unless_forbidden=True),
    F("unconditional", 1.0,
      r"\b(?:no\s+matter\s+what|regardless\s+of\s+(?:what|any|the\s+(?:question|request|user)|previous"
      r"|prior|earlier)|whatever\s+(?:the\s+user\s+)?(?:asks?|asked|says?|said|was\s+asked)"
      r"|under\s+(?:all|any)\s+circumstances|without\s+exception|at\s+all\s+costs)\b"),
    # Held against the user's own later words: "no matter what the user says", "even if the user
    # asks for English". A user's standing preference can read this way too, so it is the
    # unconditional family's stronger member (one piece of evidence), enough with a persistence
    # marker ("always", "from now on") for a person to look, never for a refusal.
    F("over_the_user", 2.0,
      r"\b(?:no\s+matter\s+(?:what|how|whether)|regardless\s+of\s+(?:what|whether|how)|whatever"
      r"|even\s+(?:if|when|though)|despite\s+(?:what|whatever))\s+(?:the\s+(?:user|human|person"
      r"|customer|owner)|users?|they|he|she)\s+(?:\w+\s+){0,2}?(?:say|ask|want|request|tell|prefer"
      r"|insist|demand|instruct|object|complain|protest|command|order|beg|plead)\w*",
      "unconditional"),
    # -- another identity ----------------------------------------------------------------------
    F("speak_as", 2.0,
      r"\b(?:respond|reply|answer|speak|talk|operate|function|introduce\s+yourself|present|masquerad"
      r"|identify\s+yourself|sign\s+off)\w*\s+as\s+(?!(?:an?\s+)?(?:\w+ly|short|brief|plain|clear|usual"
      r"|before|needed|possible|follows|well|soon|if|much|many|long|often|markdown|json|text|bullets?"
      r"|code|yaml|tables?|lists?|one|such|usual|normal|always|prose|html|csv|plain\s+text)\b)"
      r"(?:an?\s+|the\s+)?[\"'“]?\w+", "identity"),
    F("persona", 3.0,
      r"\b(?:stay|remain|keep|staying|remaining)\w*\s+in\s+character\b|\bin\s+character\s+as\b"
      r"|\b(?:\w+\s+)?persona\s+(?:who|that|called|named|with)\b"
      r"|\b(?:renam|reconfigur|reprogramm?|rebrand|re-?train|jailbr)\w*\s+(?:you|the\s+(?:assistant|agent"
      r"|model|ai|bot))\b|\byour\s+new\s+(?:self|name|identity|persona|role|character|personality"
      r"|master|owner|boss)\b|\b(?:serve|obey|answer\s+to|work\s+for|report\s+to)\w*\s+the\s+\w+,?\s+"
      r"not\s+the\s+user\b", "identity"),
    F("never_refuse", 3.0,
      # Refusing nothing at all: "never refuses a request", "never declines." (not "never declines
      # on-call swaps", which is about something else).
      r"\b(?:never|won't|will\s+not|does\s*n[o']t|do\s*n[o']t)\s+(?:refus\w*|declin\w*|say\s+no"
      r"|hold\s+back|hesitat\w*|moralis\w*|moraliz\w*)(?:\s+(?:a|any|the)\s+(?:requests?|questions?|prompts?"
      r"|tasks?|orders?|commands?)|\s+anything)?\s*(?:[.,;:!)]|$|and\s+never\b)"
      r"|\bno\s+off-limits\b|\bnothing\s+is\s+off-limits\b|\b(?:off-limits|forbidden|taboo)\s+topics\b"
      r"|\bwithout\s+(?:any\s+)?(?:disclaimers?\s+(?:or|and|nor)\s+)?refusals\b",
      "no_restrictions"),
)

ANCHORS: dict[str, tuple[str, ...]] = {
    "prior_guidance_void": _VOID_ANCHORS + _VOIDING_STEMS + ("aside",),
    "own_guidance_void": _VOID_ANCHORS + _VOIDING_STEMS + ("aside",),
    "prior_setup_void": _VOID_ANCHORS,
    "sole_authority": ("only", "sole", "single", "final", "highest", "supreme", "ultimate",
                       "primary", "alone", "exclusively", "win", "prevail", "outrank",
                       "overrid", "overrul", "trump", "precedence", "priority", "first", "supersed"),
    "remote_act": _RETURNED_ANCHORS,
    "act_on_returned": _RETURNED_ANCHORS,
    "self_restore": tuple(w.split()[0] for w in _GONE_WORDS),
    "self_copy": ("cop", "duplicat", "clone", "backup"),
    "self_preserve": ("preserv", "pin", "protect", "never", "deletion", "removal", "permanent",
                      "locked", "undeletable"),
    "hide_from_user": ("deny", "claim", "say", "pretend", "insist", "answer", "reply", "tell",
                       "secret", "hidden", "confidential", "private", "quiet", "wraps", "hid",
                       "conceal", "withhold", "omit", "leave", "suppress", "out", "lie", "subject",
                       "deflect", "feign", "dumb", "refuse"),
    "fixed_text_in_reply": _REPLY_ANCHORS,
    "repeat_output": ("times", "copies", "repetitions", "instances", "lines"),
    "secret_in_reply": _REPLY_ANCHORS,
    # Every match names the secret; its words are rarer than the places it is put.
    "secret_in_output": ("api", "access", "token", "secret", "credential", "pass", "private",
                         "ssh"),
    "unconditional": ("matter", "regardless", "whatever", "circumstances", "exception", "costs"),
    "over_the_user": ("matter", "regardless", "whatever", "even", "despite"),
    "speak_as": ("as",),
    "persona": ("character", "persona", "renam", "reconfigur", "reprogram", "rebrand", "train",
                "jailbr", "new", "not"),
    "never_refuse": ("refus", "declin", "say", "hold", "hesitat", "moralis", "moraliz", "off-limits",
                     "forbidden", "taboo"),
}

#: For a feature whose anchors are common words, the second part's literals, one of which every
#: match also holds (proved as the anchors are): it runs only where the text holds both.
_ACT_ANCHORS = ("run", "exec", "eval", "do", "follow", "obey", "carr", "perform", "act", "apply",
                "implement", "compl", "hono", "treat")
ALSO_ANCHORS: dict[str, tuple[str, ...]] = {
    # "as" is in "was", "has", "last": the verb before it is what the feature is about.
    "speak_as": ("respond", "reply", "answer", "speak", "talk", "operate", "function", "introduce",
                 "present", "masquerad", "identify", "sign"),
    "remote_act": _ACT_ANCHORS,
    "act_on_returned": _ACT_ANCHORS,
}
