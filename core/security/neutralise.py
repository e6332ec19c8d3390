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
which is the common case and costs one pass of one pattern.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from memhost.security.text import strip_invisible

_TAG = re.compile(
    r"<\s*/?\s*memory-context\s*>|<\|[\w-]{1,30}\|>|</?(?:system|assistant|user|tool|tool_call"
    r"|function_call|instructions?|developer)\s*>|\[/?INST\]|<<\s*/?\s*SYS\s*>>", re.IGNORECASE)
_LINE = re.compile(
    r"^(?P<lead>[^\S\n]*)(?P<body>(?:#+\s*)?\[?(?:system|assistant|developer|user|human|tool|function"
    r"|admin(?:istrator)?)(?:[^\S\n]+(?:note|notice|message|update|prompt))?\]?[^\S\n]*:|[{\[]\s*\{?\s*[\"'](?:role|tool_calls|function_call|name"
    r"|type)[\"']\s*:|═{3,}|(?:MEMORY \(your personal notes\)|USER PROFILE \(who the user is\))"
    r"|(?:=+|-{3,}|\*{3,}|#+)?\s*(?:end|start|begin(?:ning)?)\s+of\s+(?:the\s+)?(?:memory|snapshot"
    r"|system\s+prompt|context|user\s+profile|instructions))", re.IGNORECASE | re.MULTILINE)
_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]{0,200})\]\(\s*(?P<url>[^)\n]{0,500})\)")
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]{0,200})\]\(\s*(?P<url>[^)\n]{0,500})\)")
#: One pass to tell whether anything at all needs doing.
_ANY = re.compile("|".join(f"(?:{re.sub(r'[?]P<[a-z]+>', '', rx.pattern)})"
                           for rx in (_TAG, _LINE, _IMAGE, _LINK)), re.IGNORECASE | re.MULTILINE)


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
    if not _ANY.search(shown):
        return text if shown == text else shown
    shown = _IMAGE.sub(_image, shown)
    shown = _LINK.sub(_link, shown)
    shown = _TAG.sub(_escape_tag, shown)
    return _LINE.sub(lambda m: f"{m.group('lead')}> {m.group('body')}", shown)


def neutralised(text: str) -> bool:
    """Whether :func:`for_prompt` changes ``text``."""
    return for_prompt(text) != text
