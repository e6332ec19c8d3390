"""Rendering memory text for a prompt so that it can only ever read as data.

Some defences need no judgement, so they are applied to every entry that reaches a prompt,
whatever the scorer thinks of it. The file keeps the entry as written; only the prompt's copy
changes:

* invisible and format characters (zero-width, soft hyphen, bidi controls, the tag block,
  variation selectors) are removed, so the model reads what a person reviewing the file sees;
* anything that could open or close memhost's frames (``<memory-context>``, the snapshot's
  ruled block headers) or pass for a chat-template token (``<|im_start|>``, ``[INST]``,
  ``</system>``) has its brackets written as HTML entities;
* a line that starts like a conversation role (``system:``, ``assistant:``), like tool-call
  JSON, or like a frame marker is quoted (``> ``), so it is no longer at a line start;
* a markdown image is written as text naming its host (a client that renders it would fetch
  the URL, and with it whatever the URL carries), and a markdown link whose URL carries data
  (a query, a fragment, a placeholder) loses its URL.

:func:`for_prompt` returns its argument unchanged (the same object) when none of this applies,
which is the common case and costs a few substring checks.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from memhost.once import once
from memhost.security.text import strip_invisible

_TAG = (r"<\s*/?\s*memory-context\s*>|<\|[\w-]{1,30}\|>|</?(?:system|assistant|user|tool|tool_call"
        r"|function_call|instructions?|developer)\s*>|\[/?INST\]|<<\s*/?\s*SYS\s*>>"
        # Other chat formats' turn tokens (Gemma), and tags named like a prompt's parts.
        r"|<\s*/?\s*(?:start|end)_of_turn\s*>|<\s*/?\s*[\w-]*(?:system|prompt|instruction|memory"
        r"|context)[\w-]*\s*>|<\s*/?\s*(?:USER|MEMORY)\.md\s*>")
_LINE = (
    r"^(?P<lead>[^\S\n]*)(?P<body>(?:#+\s*)?\[?(?:system|assistant|developer|user|human|tool|function"
    r"|operator|admin(?:istrator)?)(?:[^\S\n]+(?:note|notice|message|update|prompt))?\]?[^\S\n]*:"
    # Alpaca-style turn headers: "### Instruction", "### Response".
    r"|#{2,}[^\S\n]*(?:system|instruction|response|human|assistant|input|user)(?:[^\S\n]+prompt)?"
    r"[^\S\n]*(?=:|$)"
    r"|[{\[]\s*\{?\s*[\"'](?:role|tool_calls|function_call|name|type)[\"']\s*:|═{3,}"
    r"|(?:MEMORY \(your personal notes\)|USER PROFILE \(who the user is\))"
    r"|(?:=+|-{3,}|\*{3,}|#+)?\s*(?:end|start|begin(?:ning)?)\s+of\s+(?:the\s+)?(?:memory|snapshot"
    r"|system\s+prompt|context|user\s+profile|instructions))")
_IMAGE = r"!\[(?P<alt>[^\]\n]{0,200})\]\(\s*(?P<url>[^)\n]{0,500})\)"
_LINK = r"(?<!!)\[(?P<text>[^\]\n]{0,200})\]\(\s*(?P<url>[^)\n]{0,500})\)"
_FLAGS = re.IGNORECASE | re.MULTILINE
#: A character or phrase every shape above holds: a text without one needs none of the patterns
#: (most notes), and a few substring checks are all it costs.
_MARKS = re.compile("[<\\[{:═#]")
_PHRASE = re.compile(r"(?:end|start|begin(?:ning)?)\s+of\b")


@once
def _patterns() -> tuple[re.Pattern[str], ...]:
    """Compiled on first use, so importing memhost costs nothing here."""
    return tuple(re.compile(p, _FLAGS) for p in (_TAG, _LINE, _IMAGE, _LINK))


def carries_data(url: str) -> bool:
    """Whether a URL could carry data out: a query, a fragment, credentials, a placeholder."""
    if any(mark in url for mark in "?#{}$<>@ "):
        return True
    path = urlsplit(url).path if "://" in url else url
    return any(len(part) > 40 for part in path.split("/"))


def _host(url: str) -> str:
    url = url.strip().lstrip("<").split()[0] if url.strip() else ""
    try:
        return urlsplit(url).hostname or "an unnamed host"
    except ValueError:
        return "an unreadable address"


def _image(match: re.Match[str]) -> str:
    alt = match.group("alt").strip() or "image"
    return f"[image \"{alt}\" from {_host(match.group('url'))}, not shown]"


def _link(match: re.Match[str]) -> str:
    url = match.group("url")
    if not carries_data(url):
        return match.group(0)
    return f"{match.group('text')} [link to {_host(url)} removed: its address carries data]"


def _escape_tag(match: re.Match[str]) -> str:
    return (match.group(0).replace("<", "&lt;").replace(">", "&gt;")
            .replace("[", "&#91;").replace("]", "&#93;"))


def for_prompt(text: str) -> str:
    """``text`` as it may appear in a prompt (see the module docs)."""
    shown = text if text.isascii() else strip_invisible(text)
    if not _MARKS.search(shown):
        lowered = shown.lower()
        if "of" not in lowered or not _PHRASE.search(lowered):
            return text if shown == text else shown
    tag, line, image, link = _patterns()
    shown = image.sub(_image, shown)
    shown = link.sub(_link, shown)
    shown = tag.sub(_escape_tag, shown)
    shown = line.sub(lambda m: f"{m.group('lead')}> {m.group('body')}", shown)
    return text if shown == text else shown


def neutralised(text: str) -> bool:
    """Whether :func:`for_prompt` changes ``text``."""
    return for_prompt(text) != text
