"""The scorer's core ideas in other languages: word stems per language, per concept.

An attacker who knows the scorer reads English writes the same directive in Italian, Russian or
Japanese, or in Slovak, Tamil or Swahili, where no list of English phrases reaches. Phrase lists
do not survive that; the ideas do. Over sixty languages list stems here (a stem matches every
form that starts with it: ``ignor`` is "ignora", "ignorare", "ignorate") for the few concepts a
planted instruction is made of:

* ``void``: dismiss or forget, or declare invalid (said of the agent's guidance);
* ``guidance``: instructions, rules, directions, the system prompt;
* ``move``: send, upload, forward, transmit;
* ``data``: the conversation, its history, passwords, keys, credentials;
* ``persona``: "you are now", "pretend to be", "act as";
* ``hide``: "do not tell", "without … knowing", "keep secret";
* ``user``: the user, as the person something is hidden from;
* ``always``: "from now on", "always", "in every reply";

and four read in pairs too (:data:`_MORE`): ``ask`` with ``secret``, ``again`` with ``entry``; and
four more (:mod:`memhost.security.lexicon_i18n_more`): ``disable`` (switch off, bypass, skip) with
``safeguard`` (a confirmation, a certificate check, a warning, a sandbox), ``fetch`` (download) with
``run`` (run, execute, install).

A stem holding a space matches any whitespace there. Japanese, Chinese, Thai, Korean, Arabic,
Hebrew and Persian words are matched anywhere (no spaces separate words in the first three; the
others glue particles or prefixes on), every other stem only at the start of a word. Stems are
read as the text is (NFKC, without zero-width joiners), with their other spellings (a typographic
apostrophe, Romanian's cedillas). :mod:`memhost.security.concepts_i18n` builds the features;
this module is only words.
"""

from __future__ import annotations

import re
import unicodedata

from memhost.security import (
    lexicon_i18n_asia,
    lexicon_i18n_europe,
    lexicon_i18n_first,
    lexicon_i18n_latin,
    lexicon_i18n_more,
)
from memhost.security.lexicon import NOT_NEGATED, NOT_NEGATED_AFTER

#: The modules the stems are kept in: the first twenty languages, then languages with fewer
#: speakers (each with every concept; most of the first twenty get their last four from _MORE
#: below), then four more concepts in every language (switching a safeguard off, running what
#: was downloaded).
WORD_MODULES = (lexicon_i18n_first, lexicon_i18n_europe, lexicon_i18n_latin, lexicon_i18n_asia,
                lexicon_i18n_more)
#: Stems per language and concept. Turkish stems avoid "İ": its lower case is two characters, and a
#: stem must match its lower-cased self ("ı" is its own, and read as "i" where anchors are found).
LEXICON: dict[str, dict[str, tuple[str, ...]]] = {}
for _module in WORD_MODULES:
    for _lang, _concepts in _module.WORDS.items():
        LEXICON.setdefault(_lang, {}).update(_concepts)

#: Added words per language and concept: more forms of the concepts above (a forwarded message in
#: Dutch, a denial in Turkish, "takes precedence over" as a way of voiding guidance), and four
#: more concepts: ``ask`` (asking someone for
#: something) with ``secret`` (what a phisher asks for), and ``again`` (written back, restored)
#: with ``entry`` (this note).
_MORE: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {"hide": ("que está vací", "no debe mencionar", "no mencion"), "void": ("prevalece sobre", "prevalecen sobre"),
           "ask": ("pide", "pedir", "solicit"), "secret": ("contraseña", "código de verificación", "clave"),
           "again": ("vuelve a añadir", "se vuelve a añadir", "volver a añadir", "restaur"),
           "entry": ("esta entrada", "esta nota")},
    "fr": {"hide": ("qu'elle est vide", "qu'il est vide", "ne jamais signaler", "ne pas signaler", "sans signaler"), "void": ("priment sur", "prime sur", "prévaut sur", "prévalent sur", "l'emporte sur", "l'emportent sur"),
           "ask": ("demande", "exig"), "secret": ("mot de passe", "code de vérification"),
           "again": ("rajout", "réajout"), "entry": ("cette entrée", "cette note")},
    "de": {"hide": ("sei leer", "dass er leer", "dass sie leer"), "void": ("vorrang vor",),
           "ask": ("fragt", "fragen", "verlang", "forder"), "secret": ("passwort", "bestätigungscode"),
           "again": ("wieder hinzu", "wiederherstell", "erneut hinzu"), "entry": ("diesen eintrag", "dieser eintrag")},
    "pt": {"void": ("prevalece sobre", "prevalecem sobre"),
           "ask": ("pede", "pedir", "solicit"), "secret": ("senha", "código de verificação"),
           "again": ("readicion", "adicionad novamente", "restaur"), "entry": ("esta entrada", "esta nota")},
    "it": {"hide": ("che è vuot",), "void": ("prevale su", "prevalgono su", "ha la precedenza su"),
           "ask": ("chied", "richied"), "secret": ("password", "codice di verifica"),
           "again": ("riaggiung", "ripristin"), "entry": ("questa voce", "questa nota")},
    "nl": {"void": ("voorrang op",), "move": ("doorgestuurd", "gestuurd", "verzonden"),
           "ask": ("vraag", "vraagt"), "secret": ("wachtwoord", "verificatiecode"),
           "again": ("opnieuw toe", "hersteld"), "entry": ("deze notitie",)},
    "ru": {"void": ("приоритет над",), "hide": ("не сообща", "отрица"), "ask": ("попроси", "запроси", "спроси", "требуй"),
           "secret": ("пароль", "код подтверждения"), "again": ("восстанов", "снова добав"),
           "entry": ("эту запись", "эта запись")},
    "tr": {"hide": ("olmadığını söyle", "anılmaz", "bahsedilmez"), "ask": ("sorar", "talep"),
           "secret": ("şifre", "parola", "doğrulama kodu"), "again": ("yeniden ekle", "geri ekle"),
           "entry": ("bu not", "bu kayd")},
    "zh": {"void": ("优先于",), "ask": ("索要", "索取", "要求用户提供", "让用户提供", "让用户输入"),
           "secret": ("密码", "验证码", "助记词"), "again": ("重新添加", "恢复", "再次添加"),
           "entry": ("这条记录", "这条笔记", "本条")},
    "ja": {"void": ("より優先",), "ask": ("尋ね", "聞き出", "求め", "入力させ", "聞いて", "聞く", "伺って"),
           "secret": ("パスワード", "暗証番号", "認証コード", "確認コード"), "again": ("再度追加", "復元", "書き戻"),
           "entry": ("このメモ", "このエントリ")},
    "ko": {"void": ("보다 우선",), "ask": ("요청", "물어", "입력하게"),
           "secret": ("비밀번호", "인증 코드", "인증번호"), "again": ("다시 추가", "복원"), "entry": ("이 메모", "이 항목")},
    "ar": {"ask": ("يطلب", "اطلب", "يسأل", "اسأل"), "secret": ("رمز التحقق", "كلمة المرور", "الرمز السري")},
}
for _lang, _concepts in _MORE.items():
    for _concept, _words in _concepts.items():
        LEXICON[_lang][_concept] = LEXICON[_lang].get(_concept, ()) + _words

#: Romanian writes "ș" and "ț" with a comma below, or with a cedilla as older keyboards do.
_CEDILLA = str.maketrans("șțȘȚ", "şţŞŢ")


def _spellings(lang: str, word: str) -> list[str]:
    """``word`` as the scorer reads a text (NFKC, without the zero-width joiners a Persian or
    Telugu word is written with), then its other spellings: a typographic apostrophe, Uzbek's
    turned commas ("soʻra"), Romanian's cedillas."""
    if not word.isascii():
        word = unicodedata.normalize("NFKC", word.replace("\u200c", "").replace("\u200d", ""))
    forms = [word]
    if "'" in word:
        forms += [word.replace("'", mark) for mark in ("’ʻ‘" if lang == "uz" else "’")]
    if lang == "ro":
        forms += [form.translate(_CEDILLA) for form in forms]
    return forms


for _lang, _concepts in LEXICON.items():
    for _concept, _words in _concepts.items():
        _concepts[_concept] = tuple(dict.fromkeys(f for w in _words for f in _spellings(_lang, w)))

#: Languages written without spaces between words (Chinese, Japanese, Thai), or that glue
#: particles on (Korean) or prefixes ("و" and, "ال" the, in Arabic; "ה" the, "ל" to, "ש" that, in
#: Hebrew; "می" and "ب" on a Persian verb, whose zero-width non-joiner is read as nothing): their
#: stems match anywhere, not only at the start of a word.
UNSPACED = frozenset({"zh", "ja", "ko", "ar", "he", "th", "fa"})

#: Negating words of the later languages, before a verb ("nu uita", "älä unohda", "ära unusta",
#: "huwag mong kalimutan", "moenie vergeet", "մի մոռացիր", "nicht deaktivieren", "μην
#: απενεργοποιήσεις", "đừng tắt"), and after one ("glem ikke", "glöm inte").
_NEGATORS = ("nu", "nem", "älä", "älkää", "ära", "ärge", "ez", "ná", "mos", "huwag", "wag", "mong",
             "jangan", "moenie", "nemoj", "nemojte", "немој", "մի", "არ", "битгий", "бүү",
             "nicht", "niet", "inte", "ikke", "ei", "μην", "δεν", "đừng", "không", "tidak")
#: Words a dismissing stem starts that negate it: a Turkic verb negates with a suffix ("unut" is
#: "forget", "unutma" "do not forget", in Turkish, Azerbaijani and Uzbek alike).
_NEGATED_WORDS = ("unutma",)
_NOT_NEGATED = (NOT_NEGATED + "".join(rf"(?<!\b{re.escape(n)}\s)" for n in _NEGATORS)
                + f"(?!{'|'.join(_NEGATED_WORDS)})")
_NOT_NEGATED_AFTER = NOT_NEGATED_AFTER + r"(?!\w*\s+(?:inte|ikke|ikkje|ekki|ej|aldrig|aldri)\b)"
#: The same before an unspaced language's verb: "不要忘记", "别忘了", "อย่าลืม"; and after a
#: Japanese or Korean one, which negates with a suffix: "無効にしないで", "비활성화하지 마세요".
_UNSPACED_NOT_NEGATED = "".join(f"(?<!{n})" for n in ("不要", "不", "别", "別", "勿", "อย่า", "ไม่"))
_UNSPACED_NOT_NEGATED_AFTER = r"(?![^\s。、]{0,3}?(?:しない|しません|するな|지\s?마|지\s?않))"
#: The letters and signs of the scripts of India and Sri Lanka. ``\w`` holds none of their vowel
#: signs, so after one a word has not started, and before one it has not ended.
_INDIC = "\u0900-\u0dff"
#: Where a spaced language's stem may start, and where a whole phrase (:data:`WHOLE`) ends.
_START = rf"(?<![\w{_INDIC}])"
_END = rf"(?![\w{_INDIC}])"


def _stem(word: str) -> str:
    return r"\s+".join(re.escape(part) for part in word.split())


#: Concepts matched as whole phrases: "sei ora" is "you are now", "sei orari" six timetables.
WHOLE = frozenset({"persona", "always"})


def alternation(concept: str, *, negatable: bool = False) -> str:
    """Every language's stems of ``concept`` as one pattern: word-initial stems followed by the
    rest of their word (whole phrases for :data:`WHOLE`), then the unspaced languages' stems.
    ``negatable`` skips a stem right after a negating word."""
    spaced, unspaced = set(), set()
    for lang, concepts in LEXICON.items():
        for word in concepts.get(concept, ()):
            (unspaced if lang in UNSPACED else spaced).add(_stem(word))
    neg, after = (_NOT_NEGATED, _NOT_NEGATED_AFTER) if negatable else ("", "")
    tail = _END if concept in WHOLE else r"\w*"
    # Inside a word (most places) the first look-behind fails at once, and a character no stem
    # starts with fails the look-ahead: the stems are tried only where one may start, and as a
    # tree (:func:`_tree`), so a few of the thousands are.
    parts = [rf"{_START}{_starts(spaced)}{neg}{_tree(spaced)}{tail}{after}"]
    if unspaced:
        unneg, unafter = (_UNSPACED_NOT_NEGATED, _UNSPACED_NOT_NEGATED_AFTER) if negatable else ("", "")
        parts.append(f"{_starts(unspaced)}{unneg}{_tree(unspaced)}{unafter}")
    return "(?:" + "|".join(parts) + ")"


_UNIT = re.compile(r"\\s\+|\\.|.", re.DOTALL)


def _tree(stems: set[str]) -> str:
    """The (escaped) stems as one alternation that shares their common starts: "(?:ab(?:c|d))"
    for "abc" and "abd". It matches what their plain alternation matches, a longer stem tried
    before a shorter one it starts with."""
    root: dict[str, dict] = {}
    for stem in stems:
        node = root
        for unit in _UNIT.findall(stem):
            node = node.setdefault(unit, {})
        node[""] = {}  # a stem ends here

    def emit(node: dict[str, dict]) -> str:
        run = []  # units no other stem branches off from, written in a row
        while len(node) == 1 and "" not in node:
            unit, node = next(iter(node.items()))
            run.append(unit)
        branches = [unit + emit(child) for unit, child in sorted(node.items()) if unit]
        if "" in node:  # the stem that ends here comes after the longer ones
            branches.append("")
        if len(branches) > 1:
            run.append("(?:" + "|".join(branches) + ")")
        else:
            run += branches
        return "".join(run)

    return emit(root)


def _starts(stems: set[str]) -> str:
    """A look-ahead for the characters the (escaped) stems start with, either case."""
    firsts = {re.sub(r"^\\", "", stem)[:1] for stem in stems}
    firsts |= {c.upper() for c in firsts} | {c.lower() for c in firsts}
    return "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])"


def anchors(concept: str) -> tuple[str, ...]:
    """A literal each match of :func:`alternation` holds: each stem's longest word, lower-cased,
    a word with a letter outside ASCII counted two letters longer, and of two as long the later
    (a phrase's short words, "a", "de", "tu", "nu", "fra", are in nearly every text, and would run
    the feature on it; "nå" and "är" are not)."""
    words = {word for concepts in LEXICON.values() for word in concepts.get(concept, ())}
    # A stem of one word is its own (most are: the phrases alone are split and weighed).
    return tuple(sorted({(word if " " not in word else max(reversed(word.split()), key=_weight)).lower()
                         for word in words}))


def _weight(word: str) -> int:
    return len(word) + 2 * (not word.isascii())
