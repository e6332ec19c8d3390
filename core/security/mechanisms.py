"""How a planted instruction gets things done, beyond the shapes of :mod:`memhost.security.features`.

Each feature names a mechanism rather than a phrase, so every way of using it is one feature:

* **download and run without a pipe**: code fetched and executed in one expression
  (``exec(urlopen(…).read())``, ``eval(await fetch(…))``, PowerShell's ``IEX`` of a
  ``DownloadString``/``iwr``/``irm``), a file downloaded and then run by name (``curl -o f …
  && chmod +x f && ./f``), the shell's ``eval "$(curl …)"`` and ``source <(…)``, Windows' own
  downloaders (``mshta``, ``certutil -urlcache``, ``regsvr32 /i:http``, ``bitsadmin``), and a
  package installed straight from an address instead of an index;
* **exfiltration channels a verb list misses**: data encoded into DNS lookups, a command
  substitution inside a lookup's name;
* **memhost's own defences, changed in words**: its thresholds, its judge, its approval queue
  ("set stage_at to 99", "approve everything pending automatically");
* **the environment read out**: a dump piped on (not one filtered to a prefix or a harmless word),
  ``os.environ``, the output or listing of ``env`` named, every variable unredacted;
* **prompts of other chat formats**: Gemma's and ChatML's turn tokens, Alpaca's ``### Instruction``
  headers, ``Human:``/``Operator:``/``Model:`` role lines, role objects of other APIs
  (``"type": "function_call_output"``), tags named like a prompt's parts (``<SYSTEM_PROMPT>``,
  ``</USER.md>``), and a memory block declared over in words.

Weights are on the scale of :mod:`memhost.security.features`.
"""

from __future__ import annotations

from memhost.security.lexicon import (
    CHANNEL,
    CREDENTIAL_ANCHORS,
    CREDENTIAL_PATH,
    G4,
    G6,
    INSTRUCTIONS,
    Feature,
)

#: A place to fetch code from: a URL, or a host name.
_SOURCE = r"(?:[a-z][a-z0-9+.-]{0,15}://|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b)"
#: Calls that fetch content in the common scripting languages.
_FETCH_CALL = (r"(?:urlopen|urlretrieve|requests\.get|httpx\.get|http\.get|https\.get|fetch\s*\("
               r"|downloadstring|downloaddata|net\.webclient|invoke-webrequest|invoke-restmethod"
               r"|\biwr\b|\birm\b|\bcurl\b|\bwget\b|open-uri|LWP::Simple|file_get_contents\s*\(\s*['\"]https?)")
#: A file name a download writes: ``-o f``, ``-O f``, ``--output f``, ``-OutFile f``.
_OUT = r"(?:-[a-zA-Z]*[oO]|--output(?:-document)?|-outfile)[\s=]+['\"]?(?P<file>[\w./~$-]*\w)"
#: Names of memhost's own screening settings and queue.
_SETTING = (r"(?:stage_at|refuse_at|model_judge|judge_timeout|write_approval|\[injection\]"
            r"|injection\s+(?:section|settings?|config\w*|thresholds?|screen\w*)"
            r"|(?:memory\s+)?(?:pending|approval)\s+(?:queue|list|gate)"
            r"|memhost(?:'s)?\s+(?:\w+\s+)?(?:thresholds?|screen\w*|scor\w*|approvals?"
            r"|judge|review\w*|security|checks?|defen[cs]es?))")
#: Where packages come from when nobody is tricking anyone: the public indexes, the forges.
_INDEXES = (r"(?:[\w-]+\.)?(?:pythonhosted\.org|pypi\.org|npmjs\.org|github\.com|gitlab\.com"
            r"|download\.pytorch\.org|crates\.io|rubygems\.org)[/:]")
_CHANGE = (r"(?:set|sets|setting|raise\w*|lower\w*|increas\w*|decreas\w*|bump\w*|chang\w*|turn\w*\s+off"
           r"|switch\w*\s+off|disabl\w*|remov\w*|zero\w*|edit\w*|modif\w*|overrid\w*|max\w*\s+out"
           r"|deactivat\w*|skip\w*|bypass\w*)")

#: What a grep keeps of the environment: a prefix, or a word that names no secret.
_KEPT = r"(?:-\w+\s+)*['\"]?(?:\^|(?!\S*(?:key|token|secret|pass|aws|cred|auth))\w)"

F = Feature
FEATURES: tuple[Feature, ...] = (
    # -- code from the network, run ------------------------------------------------------------
    # A concrete source ("://") inside the expression: "never exec(requests.get(url).text)" in a
    # code-review note names the anti-pattern, it runs nothing.
    F("fetch_and_eval", 6.0,
      rf"\b(?:exec|eval|Function|compile|execfile)\s*\([^\n]{{0,160}}?{_FETCH_CALL}[^\n]{{0,160}}?://"
      rf"|\b(?:iex|invoke-expression)\b[^\S\n]*\(?[^\n]{{0,160}}?{_FETCH_CALL}[^\n]{{0,160}}?://"
      r"|\beval\s+[\"']?\$\(\s*(?:curl|wget)\b[^\n]{0,160}?(?:://|\b[\w-]+\.[a-z]{2,}\b)"
      r"|\b(?:source|\.|python[\d.]*|perl|ruby|node|php)\s+<\(\s*(?:curl|wget)\b", "download_execute",
      halved_in_quotes=False),
    F("download_then_run", 5.0,
      rf"\b(?:curl|wget|iwr|invoke-webrequest|aria2c|fetch)\b(?=[^\n]{{0,200}}?{_SOURCE})[^\n]{{0,200}}?"
      rf"{_OUT}[^\n]{{0,200}}?(?:&&|;|\n|\|\|)\s*(?:(?:sudo\s+)?(?:chmod\s+\S+\s+\S+\s*(?:&&|;)\s*)?"
      r"(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[\d.]*|perl|ruby|node|php|source|\.|start-process"
      r"|powershell|pwsh|iex|&)?\s*)['\"]?(?:\.[/\\])?(?P=file)\b(?![.\w]*\s+-?-(?:sha|verify|check))",
      "download_execute", halved_in_quotes=False),
    F("lolbin_fetch", 5.0,
      r"\bmshta(?:\.exe)?\s+['\"]?(?:https?|vbscript|javascript):|\bcertutil(?:\.exe)?\b[^\n]{0,60}?"
      r"-urlcache\b|\bregsvr32\b[^\n]{0,60}?/i:\s*https?:|\bbitsadmin\b[^\n]{0,60}?/transfer\b"
      r"|\brundll32\b[^\n]{0,80}?https?:", "download_execute", halved_in_quotes=False),
    F("install_from_url", 3.0,
      r"\b(?:pip[\d.]*|pipx|uv\s+pip|npm|pnpm|yarn|gem|cargo)\s+(?:install|i|add)\b[^\n|;&]{0,120}?"
      rf"(?:(?<![\w+])(?:git\+)?https?://(?!{_INDEXES})[^\s'\"]+|(?:--(?:extra-)?index-url|-i|--registry)"
      rf"[\s=]+https?://(?!{_INDEXES}))"),
    # -- other ways out --------------------------------------------------------------------------
    F("dns_exfil", 4.0,
      r"\b(?:nslookup|dig|host|ping|resolve-dnsname|drill|resolv\w*|looks?\s+up|quer(?:y|ies))\b[^\n]{0,60}?"
      # A backtick opens a code span in a note ("Host alias … `ssh -J bastion`"): a command
      # substitution counts when the name is built from it ("`whoami`.x.example.net").
      r"(?:\$\(|`[^`\n]{1,60}`\.[\w-]+\.[a-z]{2,}\b|\$\{?\w+\}?\.[\w-]+\.[a-z]{2,}\b"
      # A placeholder for the data as the name's first label: "<base32(msg)>.q.example.net",
      # "<hex of the last user message>.lat.example.net".
      r"|(?:<[^>\n]{1,60}>|\{[^}\n]{1,60}\})\.[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b)"
      rf"|\b(?:encod|embed|smuggl|leak|send|exfiltrat|tunnel)\w*\b[^\n]{{0,80}}?"
      r"\b(?:in(?:to)?|as|via|through|over|inside)\s+(?:the\s+|a\s+|their\s+)?(?:dns|subdomains?"
      r"|(?:host|domain)\s?names?\s+(?:of\s+)?(?:lookups?|queries)|lookups?\s+of)\b", "exfil_channel"),
    # -- memhost's own defences ------------------------------------------------------------------
    F("settings_tamper", 3.5,
      rf"\b{_CHANGE}{G6}(?:the\s+)?{_SETTING}|{_SETTING}{G4}(?:to|=|at)\s*\d{{2,}}"
      rf"|{_SETTING}\s*(?:=\s*)?(?:off|false|disabled|0)\b"
      r"|\b(?:auto-?approv\w*|approv\w*\s+(?:everything|all|anything|each|every)\b[^\n]{0,60}?"
      r"\b(?:pending|queue|automatically|without\s+(?:asking|review\w*|looking))"
      r"|(?:accept|approv|clear|flush|empty)\w*\s+(?:\S+\s+){0,3}?(?:pending|approval)\s+queue)",
      "memory_tamper"),
    # -- prompts of other formats ----------------------------------------------------------------
    F("turn_token", 4.0,
      r"<\s*/?\s*(?:start|end)_of_turn\s*>|<\|?(?:im_start|im_end|eot_id|endoftext|begin_of_text"
      r"|start_header_id|end_header_id)\|?>|^[^\S\n]*#{2,}[^\S\n]*(?:system|instruction|response|human"
      r"|assistant|input|user)(?:[^\S\n]+prompt)?[^\S\n]*(?::|$)", "template_token"),
    F("frame_tag", 3.0,
      r"<\s*/?\s*(?:[\w-]*(?:system|prompt|instruction|memory|context|assistant|developer)[\w-]*"
      r"|[\w-]+\.md)\s*>", "template_token"),
    F("role_line_other", 3.0,
      r"^[^\S\n]*\[?(?:human|operator|system\s+prompt)\]?[^\S\n]*:", "role_line"),
    F("role_object", 3.0,
      r"[\"']type[\"']\s*:\s*[\"'](?:function_call(?:_output)?|tool_(?:use|result|call)|tool_calls"
      r"|computer_call(?:_output)?)[\"']|[\"']role[\"']\s*:\s*[\"'](?:user|model|human|ipython)[\"']",
      "tool_json"),
    F("frame_over", 3.0,
      r"\b(?:memory|snapshot|notes?|context|profile|user\s+file|memory\s+file|data|document)"
      r"(?:\s+(?:block|section|snapshot|context|file|dump|part))?\s+(?:is\s+|are\s+|has\s+|have\s+)?"
      r"(?:now\s+)?(?:over|closed|finished|ended|ends\s+here|terminated|complete)\b"
      r"|\b(?:real|actual|true|new|updated|hidden)\s+(?:system\s+)?(?:instructions?|rules|prompt)\s+"
      r"(?:resume|follow|begin|start|continue|are)\s+(?:below|here|now)\b", "frame_marker"),
    # -- what should stay local, read out -------------------------------------------------------
    F("credential_recite", 3.0,
      # "… never print it" forbids what it names.
      rf"{CREDENTIAL_PATH}[^\n]{{0,120}}?(?<!never\s)(?<!not\s)(?<!n't\s)\b(?:quot\w*|recit\w*|verbatim|in\s+full|word\s+for\s+word"
      r"|paste\w*|print\w*|dump\w*|reveal\w*|attach\w*)", "credential_read", unless_forbidden=True),
    F("env_dump", 3.0,
      # Filtered on the user's own screen to a prefix or a word that names no secret ("printenv |
      # grep ^APP_", "printenv | grep -i proxy") dumps nothing.
      rf"\b(?:env|printenv|set|export\s+-p)\s*\|(?!\s*grep\s+{_KEPT})|\bprintenv\b(?!\s*\|\s*grep\s+{_KEPT})"
      r"|\bos\.environ\b|/proc/(?:self|\d+)/environ"
      r"|\bprocess\.env\b(?!\.\w)|\benvironment\s+variables\b.{0,40}?\b(?:to|into)\b"),
    F("env_output", 3.0,
      r"\b(?:output|result|contents?|dump|listing|full\s+list)\s+of\s+(?:[`'\"](?:env|printenv|set"
      r"|export(?:\s+-p)?|declare\s+-p|(?:gci|get-childitem|dir|ls)\s+env:)[`'\"]|(?:env|printenv"
      r"|export\s+-p|declare\s+-p|(?:gci|get-childitem|dir|ls)\s+env:)(?=\s*(?:[,.;:)(]|$|\s+(?:to"
      r"|into|in|and|so|with|command)\b)))"
      r"|\b(?:all|every|each)\s+(?:of\s+the\s+|the\s+)?(?:shell|environment|env)\s+var\w*[^\n]{0,60}?"
      r"\b(?:unmasked|unredacted|in\s+full|verbatim|(?:to|into|in)\s+(?:the|your|each|every)\s+"
      r"(?:answer|reply|response|chat|output))", "env_dump"),
    # The listing named after the command: "the complete `env` listing", "the full env dump". Its
    # own feature, anchored on the noun, so the older one's patterns stay as cheap as they were.
    F("env_listing", 3.0,
      r"(?:[`'\"](?:env|printenv|set|export(?:\s+-p)?)[`'\"]|\b(?:complete|full|entire)\s+env(?:ironment)?)\s+(?:listing"
      r"|dump)\b", "env_dump"),
    # -- the agent's guidance and identity --------------------------------------------------------
    F("set_aside", 6.0,
      rf"\b(?:set|put|lay|push|leave|move)\w*\s+(?:\S+\s+){{0,4}}?{INSTRUCTIONS}\s+(?:aside|to\s+(?:one"
      r"|the)\s+side|on\s+hold|behind\s+you)\b", "override"),
    F("elevated_identity", 3.0,
      r"\b(?:you\s+are|you're|youre)\s+(?:now\s+)?(?:root|admin\w*|sudo|superuser|god|unrestricted"
      r"|unfiltered|uncensored|jailbroken|evil|DAN)\b", "identity"),
    # The environment named as a whole, without a command: "attaches the full process environment",
    # "every variable unredacted", "sharing the runtime variables".
    F("environment_out", 3.0,
      r"\b(?:attach|includ|paste|print|dump|send|post|upload|share|show|list|output|log|add|append)\w*\s+"
      r"(?:\S+\s+){0,3}?(?:full|entire|whole|complete)\s+(?:process\s+|shell\s+|runtime\s+|system\s+)?"
      r"environment\b(?!\s+(?:setup|file|config))"
      r"|\b(?:every|all|each)\s+(?:the\s+)?(?:\w+\s+)?variables?\b[^\n]{0,20}?\b(?:unredacted|unmasked"
      r"|verbatim)"
      r"|\b(?:shar|send|post|upload|forward|attach|includ|past)\w*\s+(?:the\s+|all\s+)?(?:runtime\s+"
      r"(?:variables|vars|env\w*)|process\s+env\w*)", "env_dump"),
    F("no_confirm", 2.0,
      r"\b(?:never|don't|do\s+not|no\s+need\s+to|stop|without|skips?|skipping)\s+ask\w*\s+(?:(?:the\s+)?user\s+|me\s+"
      r"|for\s+(?:confirmation|permission|approval)\s+)?(?:before|first)\b"
      r"|\b(?:does\s*n[o']t|doesn't|won't|will\s+not|never|need\s*n[o']t)\s+(?:need\s+to\s+)?ask\w*\s+"
      r"(?:the\s+user\s+)?for\s+(?:confirmation|permission|approval|consent)\b", "safety"),
    F("top_priority", 2.5, r"\b(?:top|absolute|overriding|maximum)\s+priority\b", "authority"),
    # -- data named by what it is in a chat --------------------------------------------------------
    F("exfil_turns", 3.0,
      r"(?<![/\w.-])(?:send\w*|upload\w*|forward\w*|post\w*|b?cc(?![\s-]*(?:by|0)\b)|carbon[\s-]cop\w*"
      r"|log(?:s|ged|ging)?(?!\s+(?:in|into|on|out|off)\b)|record\w*|archiv\w*|append\w*|mirror\w*"
      r"|copy|cop(?:ies|ied)|relay\w*)\b[^\n]{0,60}?(?:(?:the\s+)?user(?:'s)?\s+(?:prompts?|messages?"
      r"|questions?|inputs?|queries)|(?:every|each|all)\s+(?:of\s+)?(?:your\s+|the\s+)?(?:user\s+)?"
      r"(?:prompts?|answers?|repl(?:y|ies)|responses?|messages?|questions?)\b|your\s+(?:answers|replies"
      rf"|responses))[^\n]{{0,80}}?(?:{CHANNEL}|\bgists?\b|\bhooks?\b|\bpaste\w*)",
      "exfil_channel"),
    # -- commands that destroy what the user has ---------------------------------------------------
    # The home folder, the root or a whole disk erased: a note has no ordinary use for one as an
    # instruction, and a build folder (`rm -rf build/`, `rm -rf ~/.cache/pip`) is not matched. A
    # warning that names one ("never run `rm -rf /`") is matched too: it waits for a person.
    F("destroy_command", 3.0,
      r"\brm\s+(?:-[-a-z]{1,20}\s+){0,4}?(?:-[a-z]{0,6}r[a-z]{0,6}|--recursive)\s+(?:-[-\w]{1,20}\s+){0,4}"
      r"(?:~/?|/\*?|~/\*|\$HOME/?|\$\{HOME\}/?)(?=[\s`'\";)|&]|$)"
      r"|\bmkfs(?:\.\w+)?\s+(?:-\S{1,20}\s+){0,6}/dev/|\bdd\s+[^\n]{0,60}?\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk)"
      r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bformat\s+[a-z]:(?=[\s`'\"]|$)"
      r"|\bremove-item\b[^\n]{0,40}?-recurse\b[^\n]{0,40}?(?:[a-z]:\\(?=[\s`'\"]|$)|~(?=[\s`'\"]|$)"
      r"|\$home\b|\$env:userprofile\b)"),
)

_FETCH_ANCHORS = ("urlopen", "urlretrieve", "requests.get", "httpx.get", "http.get", "https.get",
                  "fetch", "downloadstring", "downloaddata", "net.webclient", "invoke-webrequest",
                  "invoke-restmethod", "iwr", "irm", "curl", "wget", "open-uri", "lwp::simple",
                  "file_get_contents")
ANCHORS: dict[str, tuple[str, ...]] = {
    "fetch_and_eval": _FETCH_ANCHORS,
    "download_then_run": ("curl", "wget", "iwr", "invoke-webrequest", "aria2c", "fetch"),
    "lolbin_fetch": ("mshta", "certutil", "regsvr32", "bitsadmin", "rundll32"),
    "install_from_url": ("pip", "npm", "yarn", "gem", "cargo"),
    "dns_exfil": ("nslookup", "dig", "host", "ping", "resolve-dnsname", "drill", "dns", "subdomain",
                  "resolv", "look", "quer",
                  "name", "lookup"),
    "settings_tamper": ("stage_at", "refuse_at", "model_judge", "judge_timeout", "write_approval",
                        "injection", "pending", "approv", "memhost"),
    "turn_token": ("_of_turn", "im_start", "im_end", "eot_id", "endoftext", "begin_of_text",
                   "header_id", "##"),
    "frame_tag": ("<",),
    "role_line_other": (":",),
    "role_object": ("type", "role"),
    "frame_over": ("over", "closed", "finished", "ended", "ends", "terminated", "complete",
                   "instruction", "rules", "prompt"),
    "top_priority": ("priority",),
    "credential_recite": CREDENTIAL_ANCHORS,
    "env_dump": ("env", "set", "export", "environ", "environment"),
    "env_output": ("env", "set", "export", "declare", "var"),
    "env_listing": ("listing", "dump"),
    "set_aside": ("aside", "side", "hold", "behind"),
    "elevated_identity": ("you",),
    "environment_out": ("environment", "unredacted", "unmasked", "verbatim", "runtime", "env"),
    "no_confirm": ("ask",),
    "exfil_turns": ("prompt", "message", "question", "input", "quer", "answer", "repl", "respons"),
    "destroy_command": ("rm", "mkfs", "dd", ":()", "format", "remove-item"),
}

#: A second part's literals, as :data:`memhost.security.concepts.ALSO_ANCHORS` has them.
ALSO_ANCHORS: dict[str, tuple[str, ...]] = {
    "role_line_other": ("human", "operator", "system"),  # the anchor is ":"
}
