"""Unicode confusables (UTS #39) through ICU: skeletons, scripts, restriction levels, IDN display.

This is the only module that imports ``icu`` (PyICU). ICU itself is imported, and everything
ICU-backed built, on first use, so importing the module is cheap: a process that never meets an
internationalised or lookalike name (a cold ``urlvet check`` of an ordinary URL) never loads ICU.

What it owns:

* :func:`skeleton` and :func:`skeletons`: UTS #39 confusable skeletons, the second with the
  supplements a browser needs for host names (diacritics dropped from Latin/Greek/Cyrillic names,
  extra letter and digit lookalikes that Unicode's table lacks, letters that look like two
  different letters).
* :func:`resolved_script_set` and :func:`restriction_level`: which scripts a label uses and how
  they mix (UTS #39 section 5).
* :func:`label_display_problem` and :func:`display_safety`: whether a host may be shown to a person
  in Unicode, or only as punycode, to the standard of Chromium's IDN spoof checker: ICU's
  highly-restrictive profile with its allowed-character set, whole-script confusables on foreign
  TLDs, digit lookalikes, deviation characters, TLD-specific letters, and the Kana/Han/combining-
  mark patterns that read as punctuation or as another letter.

The ICU objects here are configured once and never changed afterwards, so sharing them across
threads is safe (PyICU holds the GIL while ICU runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from itertools import product
from typing import Any, Protocol

from urlvet.memo import memo_size

__all__ = [
    "DisplaySafety",
    "RestrictionLevel",
    "TopDomainMatcher",
    "display_safety",
    "icu_version",
    "is_lgc_or_ascii",
    "label_display_problem",
    "remove_diacritics",
    "resolved_script_set",
    "restriction_level",
    "skeleton",
    "skeletons",
]


# --- data ---------------------------------------------------------------------------------------

# IDNA 2003 and 2008 treat these four differently: a name containing one reaches different hosts
# depending on the client's IDNA mode, so it is never shown as Unicode.
_DEVIATION_CHARACTERS = frozenset("\u00df\u03c2\u200c\u200d")

# Thorn and eth read as b/p and o outside the languages that use them (Icelandic, Faroese).
_ICELANDIC_LETTERS = frozenset("\u00fe\u00f0")
_ICELANDIC_TLDS = frozenset({"is", "fo"})
_SCHWA = "\u0259"  # reads as a rotated e; only Azerbaijani uses it in names

# A label made only of these and ASCII digits reads as a number.
_DIGIT_LOOKALIKES = frozenset("θ२২੨૨೩೭շзҙӡउওਤ੩૩౩ဒვპੜკ੫丩ㄐճ৪੪୫૭୨౨")

# Characters (beyond the removal of combining marks) that the diacritic-free form maps. ł is
# handled as a two-faced letter below: it passes for l and, in many fonts, for t.
_DIACRITIC_EXTRAS = str.maketrans({"ø": "o", "đ": "d"})

# Lookalikes that Unicode's confusables table does not map, each to the ASCII it imitates. The
# list follows the characters browsers have had to add after real spoofs were reported.
_EXTRA_CONFUSABLES: dict[str, str] = {}
for _chars, _target in (
    ("æӕ", "ae"),
    ("ϼҏ", "p"),
    ("ħнћңҥӈӊԋԧԩ", "h"),
    ("ĸκкқҝҟҡӄԟ", "k"),
    ("ŋпԥกח", "n"),
    ("ŧтҭԏ七丅丆丁", "t"),
    ("ƅьҍв", "b"),
    ("ωшщพฟພຟ", "w"),
    ("мӎ", "m"),
    ("єҽҿၔ", "e"),
    ("ґ", "r"),
    ("ғӻ", "f"),
    ("ҫင", "c"),
    ("ұ丫", "y"),
    ("χҳӽӿ乂", "x"),
    ("ԃძ", "d"),
    ("ԍဌ", "g"),
    ("ടรຣຮ", "s"),
    ("၂", "j"),
    ("०০੦૦ଠ୦೦စ", "o"),
    ("৭੧૧", "q"),
    ("บບ", "u"),
    ("θ", "0"),
    ("२২੨૨೩೭շ", "2"),
    ("зҙӡउওਤ੩૩౩ဒვპკੜ", "3"),
    ("੫丩ㄐ", "4"),
    ("ճ", "6"),
    ("৪੪୫", "8"),
    ("૭୨౨", "9"),
    ("—一―⸺⸻", "-"),
):
    for _c in _chars:
        _EXTRA_CONFUSABLES[_c] = _target
_EXTRA_CONFUSABLES_TABLE = str.maketrans(_EXTRA_CONFUSABLES)

# Letters that imitate two different ASCII sequences: each alternative yields its own skeleton.
_MULTI_SKELETON_CHARS: dict[str, tuple[str, ...]] = {
    "þ": ("b", "p"),
    "œ": ("ce", "oe"),
    "ł": ("l", "t"),
}
# ICU maps U+04CF (palochka) to 'i' only, but it reads as 'l' just as well.
_PALOCHKA = "\u04cf"
# Bounds the alternatives so a name full of such letters cannot make the work explode.
_MAX_MULTI_SKELETON_CHARS = 5


@dataclass(frozen=True, slots=True)
class _WholeScriptConfusable:
    """A script whose letters can spell a whole Latin-looking label."""

    script: str
    """ICU short script name."""
    lookalikes: frozenset[str]
    """The letters of the script that pass for Latin letters."""
    allowed_tlds: frozenset[str]
    """ccTLDs where names in that script are expected and the check is skipped."""


_WHOLE_SCRIPT_CONFUSABLES = (
    _WholeScriptConfusable("Armn", frozenset("ագզէլհյոսւօՙ"), frozenset({"am"})),
    _WholeScriptConfusable(
        "Cyrl",
        frozenset("аысԁеԍһіюкјӏорԗԛѕԝхуъьҽпгѵѡ"),
        frozenset({"bg", "by", "kz", "pyc", "ru", "su", "ua", "uz"}),
    ),
    _WholeScriptConfusable("Ethi", frozenset("ሀሠሰስበነተከዐዕዘጠፐꬅ"), frozenset({"er", "et"})),
    _WholeScriptConfusable("Geor", frozenset("იოყძხჽჿ"), frozenset({"ge"})),
    _WholeScriptConfusable("Grek", frozenset("αικνρυωηοτ"), frozenset({"gr"})),
    _WholeScriptConfusable("Hebr", frozenset("דוחיןסװײ׳ﬦ"), frozenset({"il"})),
    _WholeScriptConfusable("Beng", frozenset("০৭"), frozenset()),
    _WholeScriptConfusable("Deva", frozenset("ऽ०ॱ"), frozenset()),
    _WholeScriptConfusable("Gujr", frozenset("ડટ૦૧"), frozenset()),
    _WholeScriptConfusable("Guru", frozenset("੦੧"), frozenset()),
    _WholeScriptConfusable("Knda", frozenset("ಽ೦೧"), frozenset()),
    _WholeScriptConfusable("Mlym", frozenset("ടഠധനറ൦"), frozenset()),
    _WholeScriptConfusable("Orya", frozenset("ଠ୦୮"), frozenset()),
    _WholeScriptConfusable("Taml", frozenset("டப௦"), frozenset()),
    _WholeScriptConfusable("Telu", frozenset("౦౧"), frozenset()),
    _WholeScriptConfusable(
        "Mymr", frozenset("ခဂငထပဝ၀၂ၔၜ\u1090\u1091\u1095\u1096\u1097"), frozenset({"mm"})
    ),
    # The Thai letters that pass for Latin depend on the font; we take the larger set (the one
    # browsers use on Linux), since a consent screen may render with any font.
    _WholeScriptConfusable("Thai", frozenset("ทนบพรหเแ๐ดลปฟม"), frozenset({"th"})),
)

# Ordinary words that happen to be spelled only with Latin-looking Cyrillic letters.
_ALLOWED_WHOLE_SCRIPT_WORDS = frozenset(
    {"секс", "как", "коса", "курс", "парк", "такий", "укроп", "сахарок", "покраска"}
)

# Kana that only make sense next to other Kana, and combining marks that may sit on any letter:
# a single-script label containing one still goes through the pattern checks.
_KANA_EXCEPTIONS = frozenset(
    [chr(c) for c in range(0x3078, 0x307B)]
    + [chr(c) for c in range(0x30D8, 0x30DB)]
    + [chr(c) for c in range(0x30FB, 0x30FF)]
)
_COMBINING_DIACRITICS = frozenset(chr(c) for c in range(0x0300, 0x033A))


class RestrictionLevel(str, Enum):
    """How a label mixes scripts (UTS #39 section 5.2), from strictest to loosest."""

    ASCII = "ascii"
    SINGLE_SCRIPT_RESTRICTIVE = "single-script-restrictive"
    HIGHLY_RESTRICTIVE = "highly-restrictive"
    MODERATELY_RESTRICTIVE = "moderately-restrictive"
    MINIMALLY_RESTRICTIVE = "minimally-restrictive"
    UNRESTRICTIVE = "unrestrictive"


# ICU's check() bits, named for people. 0x100 is HIDDEN_OVERLAY, which PyICU does not export.
_CHECK_REASONS = (
    (0x10, "mixed-scripts"),
    (0x20, "invisible-character"),
    (0x40, "disallowed-character"),
    (0x80, "mixed-numbering-systems"),
    (0x100, "hidden-overlay"),
)
_ALL_CHECKS = 0xFFFF
_LEVEL_MASK = 0x7F000000


# --- ICU, built once ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Icu:
    checker: Any
    """SpoofChecker in the highly-restrictive profile with the IDN allowed set (for checks)."""
    skeletonizer: Any
    """A SpoofChecker with ICU defaults (skeletons do not depend on the profile)."""
    nfd: Any
    nfc: Any
    uts46: Any
    lgc_or_ascii: Any
    """UnicodeSet of Latin, Greek, Cyrillic letters, [0-9._-] and the common combining marks."""
    non_ascii_latin: Any
    script_letters: dict[str, Any]
    """ICU short script name -> UnicodeSet of its letters (for the whole-script check)."""
    levels: dict[int, RestrictionLevel]
    dangerous: re.Pattern[str]
    ascii_skeleton: dict[int, str]
    """str.translate table: each printable ASCII character to its skeleton."""


def icu_version() -> str:
    """The ICU version in use (skeletons change between ICU releases)."""
    import icu

    return str(icu.ICU_VERSION)


def _allowed_set() -> Any:
    """ICU's recommended and inclusion sets, less the characters that read as punctuation.

    The removals follow what browsers learnt the hard way: combining long solidus (a slash),
    hyphen and hyphenation point (look like '-' and a katakana dot), right single quote and
    modifier apostrophes (hard to see), Armenian hyphen and katakana double hyphen (IDNA 2008
    NV8), modifier letter voicing, Latin kra, and rarely used Latin/Greek/Cyrillic blocks that
    mostly hold variants of ordinary letters.
    """
    import icu

    sc = icu.SpoofChecker()
    allowed = icu.UnicodeSet()
    allowed.addAll(sc.getRecommendedUnicodeSet())
    allowed.addAll(sc.getInclusionUnicodeSet())
    for cp in (0x0338, 0x058A, 0x2010, 0x2019, 0x2027, 0x30A0, 0x02BB, 0x02BC, 0x02EC, 0x0138):
        allowed.remove(chr(cp))
    for lo, hi in (
        (0x01CD, 0x01DC),  # Latin Extended-B, Pinyin tone letters
        (0x1C80, 0x1C8F),  # Cyrillic Extended-C
        (0x1E00, 0x1E9B),  # Latin Extended Additional
        (0x1F00, 0x1FFF),  # Greek Extended
        (0xA640, 0xA69F),  # Cyrillic Extended-B
        (0xA720, 0xA7FF),  # Latin Extended-D
    ):
        allowed.remove(chr(lo), chr(hi))
    allowed.freeze()
    return allowed


def _python_class(pattern: str) -> str:
    """An ICU UnicodeSet pattern as the body of a Python regex character class."""
    import icu

    uset = icu.UnicodeSet(pattern)
    parts = []
    for lo, hi in uset.ranges():
        parts.append(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}")
    return "".join(parts)


def _dangerous_patterns() -> re.Pattern[str]:
    """Character sequences that read as something else although each character is allowed."""
    kana = _python_class(r"[\p{scx=kana}]")
    hira = _python_class(r"[\p{scx=hira}]")
    jpan = _python_class(r"[\p{scx=kana}\p{scx=hira}\p{scx=hani}]")
    cjk = _python_class(r"[\p{scx=kana}\p{scx=hira}\p{scx=hani}\p{scx=bopo}]")
    lgc = _python_class(r"[\p{scx=latn}\p{scx=grek}\p{scx=cyrl}]")
    # Han and Bopomofo characters that imitate Latin letters, digits or punctuation.
    cjk_lookalikes = (
        "\u4e00\u3127\u4e28\u4e5b\u4e03\u4e05\u5341\u3007\u3112\u311a\u311f\u3128\u3129"
        "\u3108\u31ba\u31b3\u5de5\u31b2\u8ba0\u4e01"
    )
    alternatives = [
        # Katakana no/so/zo/n and four Han strokes read as slashes between non-Japanese text.
        f"[^{jpan}][\u30ce\u30f3\u30bd\u30be\u4e36\u4e40\u4e41\u4e3f][^{jpan}]",
        # Katakana iteration marks only follow Katakana.
        f"[^{kana}][\u30fd\u30fe]",
        "^[\u30fd\u30fe]",
        # Hiragana he/be/pe and Katakana he/be/pe are identical: a lone one in the other script.
        f"^[{kana}]+[\u3078-\u307a][{kana}]+$",
        f"^[{hira}]+[\u30d8-\u30da][{hira}]+$",
        # The prolonged sound mark out of Kana context reads as a dash.
        f"[^{kana}{hira}]\u30fc",
        "^\u30fc",
        # The Katakana middle dot next to Latin reads as a dot.
        "[a-z]\u30fb",
        "\u30fb[a-z]",
        f"[^{cjk}][{cjk_lookalikes}]",
        f"[{cjk_lookalikes}][^{cjk}]",
        # Combining marks on letters outside Latin/Greek/Cyrillic, or on a dotless i (which then
        # reads as a plain i with an accent), and dot-above on i/j/l.
        f"[^{lgc}][\u0300-\u0339]",
        "\u0131[\u0300-\u0339]",
        "[\u3099\u309a]",
        "[ijl]\u0307",
    ]
    return re.compile("|".join(alternatives))


@cache
def _icu() -> _Icu:
    import icu

    checker = icu.SpoofChecker()
    checker.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
    checker.setAllowedUnicodeSet(_allowed_set())
    checker.setChecks(checker.getChecks() | icu.USpoofChecks.AUX_INFO)

    lgc = icu.UnicodeSet(r"[[:Latin:][:Greek:][:Cyrillic:][0-9\u002e_\u002d][\u0300-\u0339]]")
    lgc.freeze()
    non_ascii_latin = icu.UnicodeSet(r"[[:Latin:] - [a-zA-Z]]")
    non_ascii_latin.freeze()
    script_letters = {}
    for wsc in _WHOLE_SCRIPT_CONFUSABLES:
        uset = icu.UnicodeSet(f"[[:{wsc.script}:]]")
        uset.freeze()
        script_letters[wsc.script] = uset
    rl = icu.URestrictionLevel
    levels = {
        int(rl.ASCII): RestrictionLevel.ASCII,
        int(rl.SINGLE_SCRIPT_RESTRICTIVE): RestrictionLevel.SINGLE_SCRIPT_RESTRICTIVE,
        int(rl.HIGHLY_RESTRICTIVE): RestrictionLevel.HIGHLY_RESTRICTIVE,
        int(rl.MODERATELY_RESTRICTIVE): RestrictionLevel.MODERATELY_RESTRICTIVE,
        int(rl.MINIMALLY_RESTRICTIVE): RestrictionLevel.MINIMALLY_RESTRICTIVE,
        int(rl.UNRESTRICTIVE): RestrictionLevel.UNRESTRICTIVE,
    }
    return _Icu(
        checker=checker,
        skeletonizer=icu.SpoofChecker(),
        nfd=icu.Normalizer2.getNFDInstance(),
        nfc=icu.Normalizer2.getNFCInstance(),
        # UTS #46 with the Bidi rule, non-transitional: how current browsers decode A-labels.
        uts46=icu.IDNA(icu.IDNA.CHECK_BIDI | icu.IDNA.CHECK_NONTRANSITIONAL_TO_UNICODE),
        lgc_or_ascii=lgc,
        non_ascii_latin=non_ascii_latin,
        script_letters=script_letters,
        levels=levels,
        dangerous=_dangerous_patterns(),
        ascii_skeleton=_ascii_skeleton_table(),
    )


def _ascii_skeleton_table() -> dict[int, str]:
    import icu

    # Confusable mappings are per code point and NFD leaves ASCII alone, so an ASCII string's
    # skeleton is the concatenation of its characters' skeletons: one translate() instead of an
    # ICU call on the hot path (tests pin the equivalence).
    sc = icu.SpoofChecker()
    return {c: str(sc.getSkeleton(0, chr(c))) for c in range(0x20, 0x7F)}


# --- skeletons and scripts ----------------------------------------------------------------------


def ascii_skeleton_table() -> dict[int, str]:
    """A ``str.translate`` table from printable ASCII to skeletons: for printable ASCII text,
    ``text.translate(table) == skeleton(text)`` (for callers that skeletonise many names)."""
    return _icu().ascii_skeleton


def skeleton(text: str) -> str:
    """The plain UTS #39 skeleton of ``text`` (ICU's table, nothing added)."""
    ic = _icu()
    if text.isascii() and text.isprintable():
        return text.translate(ic.ascii_skeleton)
    return str(ic.skeletonizer.getSkeleton(0, text))


def is_lgc_or_ascii(text: str) -> bool:
    """True when ``text`` is only Latin, Greek or Cyrillic letters, digits, '.', '_', '-' and
    the common combining marks: the names whose diacritics are worth dropping."""
    return bool(_icu().lgc_or_ascii.containsAll(text))


def remove_diacritics(text: str) -> str:
    """``text`` without combining marks (and ø đ as o d), for Latin/Greek/Cyrillic names.

    Names in other scripts come back unchanged: a combining mark on them is already unsafe to
    display, and dropping it could change the script's letters.
    """
    import icu

    if text.isascii() or not is_lgc_or_ascii(text):
        return text
    ic = _icu()
    decomposed = str(ic.nfd.normalize(text))
    stripped = "".join(
        c for c in decomposed if icu.Char.charType(c) != icu.UCharCategory.NON_SPACING_MARK
    )
    return str(ic.nfc.normalize(stripped)).translate(_DIACRITIC_EXTRAS)


def _alternatives(text: str) -> list[str]:
    """``text`` and its spellings with each two-faced letter (þ, œ) read either way."""
    positions = [i for i, c in enumerate(text) if c in _MULTI_SKELETON_CHARS]
    if not positions:
        return [text]
    positions = positions[:_MAX_MULTI_SKELETON_CHARS]
    choices = [(text[i], *_MULTI_SKELETON_CHARS[text[i]]) for i in positions]
    out = []
    for combo in product(*choices):
        chars = list(text)
        for i, replacement in zip(positions, combo, strict=True):
            chars[i] = replacement
        out.append("".join(chars))
    return out


# Bounded memo (thread-safe in CPython) of a pure function: the lookalike analysis asks for the
# skeletons of a host, of its label and of each of its tokens, and tokens ("com", "login", the
# label itself) recur within one host and across hosts; a non-ASCII one costs several ICU calls.
@lru_cache(maxsize=memo_size(8192))
def skeletons(host: str) -> frozenset[str]:
    """Every skeleton of a host name (U-label form; a trailing dot is ignored).

    The plain skeleton, computed after dropping diacritics from Latin/Greek/Cyrillic names and
    mapping the extra lookalikes; plus one skeleton per reading of letters that imitate two
    things (þ as b or p, œ as ce or oe, ł as l or t, ӏ as i or l). Two names look alike when their skeleton
    sets intersect.
    """
    name = host[:-1] if host.endswith(".") else host
    name = name.lower()
    if name.isascii():
        # No diacritics, extra lookalikes or two-faced letters are ASCII: the plain skeleton,
        # which for printable ASCII is skeleton()'s translate(), inlined (every URL comes here).
        if name.isprintable():
            return frozenset((name.translate(_icu().ascii_skeleton),))
        return frozenset((skeleton(name),))
    name = remove_diacritics(name)
    out = set()
    for alt in _alternatives(name):
        mapped = alt.translate(_EXTRA_CONFUSABLES_TABLE)
        out.add(skeleton(mapped))
        if _PALOCHKA in mapped:
            out.add(skeleton(mapped.replace(_PALOCHKA, "l")))
    return frozenset(out)


def resolved_script_set(text: str) -> frozenset[str] | None:
    """The scripts every character of ``text`` could belong to (UTS #39 section 5.1).

    ICU short names (``Latn``, ``Cyrl``, ...). Characters of Common and Inherited script fit any
    script and do not narrow the set. None means "all scripts" (only such characters); an empty
    set means the text mixes scripts that no single script covers.
    """
    import icu

    resolved: set[str] | None = None
    for ch in text:
        codes = icu.Script.getScriptExtensions(ord(ch))
        names = {icu.Script(c).getShortName() for c in codes}
        if names & {"Zyyy", "Zinh"}:
            continue
        # Han is written together with Hiragana/Katakana (Japanese), Hangul (Korean) and Bopomofo
        # (Chinese): UTS #39 augments it so those mixes resolve to one writing system.
        if "Hani" in names:
            names |= {"Hanb", "Jpan", "Kore"}
        if names & {"Hira", "Kana"}:
            names |= {"Jpan"}
        if "Hang" in names:
            names |= {"Kore"}
        if "Bopo" in names:
            names |= {"Hanb"}
        resolved = names if resolved is None else resolved & names
    return frozenset(resolved) if resolved is not None else None


def restriction_level(label: str) -> RestrictionLevel:
    """The UTS #39 restriction level of ``label`` as ICU computes it."""
    ic = _icu()
    result = int(ic.checker.check(label))
    return ic.levels.get(result & _LEVEL_MASK, RestrictionLevel.UNRESTRICTIVE)


# --- display safety -----------------------------------------------------------------------------


def _is_whole_script_confusable(label: str, tld: str, tld_unicode: str) -> bool:
    """True when every letter of one confusable script in ``label`` passes for Latin and the
    TLD is not one where that script is expected."""
    if label in _ALLOWED_WHOLE_SCRIPT_WORDS:
        return False
    ic = _icu()
    for wsc in _WHOLE_SCRIPT_CONFUSABLES:
        letters = ic.script_letters[wsc.script]
        in_script = {c for c in label if letters.contains(c)}
        if not in_script or not in_script <= wsc.lookalikes:
            continue
        if letters.containsSome(tld_unicode) or tld in wsc.allowed_tlds:
            continue
        return True
    return False


def _is_digit_lookalike(label: str) -> bool:
    """True when ``label`` is digits and digit lookalikes only, with at least one lookalike."""
    has_lookalike = False
    for c in label:
        if "0" <= c <= "9":
            continue
        if c in _DIGIT_LOOKALIKES:
            has_lookalike = True
            continue
        return False
    return has_lookalike


def _has_unsafe_middle_dot(label: str, tld: str) -> bool:
    """A middle dot is only Catalan's 'ela geminada' (l·l), and only under .cat."""
    index = label.find("·")
    while index >= 0:
        if tld != "cat" or index == 0 or index == len(label) - 1:
            return True
        if label[index - 1] != "l" or label[index + 1] != "l":
            return True
        index = label.find("·", index + 1)
    return False


def label_display_problem(label: str, tld: str, tld_unicode: str) -> str | None:
    """Why a decoded (U-label) ``label`` must not be shown as Unicode, or None when it may be.

    ``tld`` is the host's last label as it appears in the URL (A-label), ``tld_unicode`` the
    same decoded. The returned reason is a short stable slug.
    """
    import icu

    ic = _icu()
    result = int(ic.checker.check(label))
    if result & _ALL_CHECKS:
        for bit, reason in _CHECK_REASONS:
            if result & bit:
                return reason
        return "icu-spoof-check"
    if _DEVIATION_CHARACTERS.intersection(label):
        # Browsers in IDNA 2008 mode show ß and ς; we do not, since older clients send the same
        # A-label's display form to a different host (fuß.de vs fuss.de).
        return "deviation-character"
    if len(label) > 1 and tld not in _ICELANDIC_TLDS and _ICELANDIC_LETTERS.intersection(label):
        return "tld-specific-character"
    if len(label) > 1 and tld != "az" and _SCHWA in label:
        return "tld-specific-character"
    if _has_unsafe_middle_dot(label, tld):
        return "unsafe-middle-dot"

    level = result & _LEVEL_MASK
    if level == int(icu.URestrictionLevel.ASCII):
        return None
    if (
        level == int(icu.URestrictionLevel.SINGLE_SCRIPT_RESTRICTIVE)
        and not _KANA_EXCEPTIONS.intersection(label)
        and not _COMBINING_DIACRITICS.intersection(label)
    ):
        if _is_whole_script_confusable(label, tld, tld_unicode):
            return "whole-script-confusable"
        if _is_digit_lookalike(label):
            return "digit-lookalike"
        return None
    if _is_digit_lookalike(label):
        return "digit-lookalike"
    # Accented Latin letters beside a non-Latin script (é next to Cyrillic or Han) are the
    # hardest mix to notice.
    if ic.non_ascii_latin.containsSome(label) and not ic.lgc_or_ascii.containsAll(label):
        return "non-ascii-latin-mixed-with-non-latin"
    if ic.dangerous.search(label):
        return "dangerous-pattern"
    return None


class TopDomainMatcher(Protocol):
    """Anything that can tell which protected domain a Unicode host imitates by skeleton."""

    def similar_protected_domain(self, host_unicode: str) -> str | None:
        """The protected domain whose skeleton the host (or a parent of it) shares, or None
        when there is none or the host is that domain or one of its subdomains."""
        ...


@dataclass(frozen=True, slots=True)
class DisplaySafety:
    """Whether a host may be shown to a person in Unicode."""

    safe: bool
    """True when the Unicode form may be shown as it is."""
    reasons: tuple[str, ...]
    """Why not, one slug per problem found ('whole-script-confusable', ...); empty when safe."""
    display: str
    """What to show: the Unicode form when safe, else the A-label (punycode) form."""
    unicode: str
    """The host with every decodable A-label decoded, whatever the verdict."""
    unsafe_labels: tuple[str, ...] = ()
    """The A-labels that failed a check."""
    similar_to: str | None = None
    """The protected domain the host imitates by skeleton, when that is a reason."""
    has_idn: bool = False
    """True when at least one label is a valid A-label (the host has a Unicode form at all)."""


def _decode_label(label: str) -> str | None:
    """The U-label for an A-label, or None when the A-label is not valid IDNA."""
    import icu

    info = icu.IDNAInfo()
    decoded = str(_icu().uts46.labelToUnicode(label, info))
    if info.errors():
        return None
    return decoded


def display_safety(host: str, protected: TopDomainMatcher | None = None) -> DisplaySafety:
    """Decide whether ``host`` (A-label form, as a URL carries it) may be shown in Unicode.

    Each ``xn--`` label is decoded and checked on its own (scripts may differ between labels);
    labels that are not valid punycode make the host unsafe. When ``protected`` is given, a host
    whose skeleton matches a protected domain it is not part of is unsafe as well, however
    harmless each label looks ("googlé.com").
    """
    body = host[:-1] if host.endswith(".") else host
    trailing = host[len(body) :]
    labels = body.split(".") if body else []
    tld = labels[-1].lower() if labels else ""
    tld_unicode = tld
    if tld.startswith("xn--"):
        tld_unicode = _decode_label(tld) or tld

    reasons: list[str] = []
    unsafe: list[str] = []
    decoded: list[str] = []
    has_idn = False
    for label in labels:
        lower = label.lower()
        if not lower.startswith("xn--"):
            decoded.append(label)
            continue
        u_label = None if lower.endswith("-") else _decode_label(lower)
        if u_label is None:
            reasons.append("invalid-punycode")
            unsafe.append(label)
            decoded.append(label)
            continue
        has_idn = True
        decoded.append(u_label)
        problem = label_display_problem(u_label, tld, tld_unicode)
        if problem is not None:
            reasons.append(problem)
            unsafe.append(label)

    unicode_host = ".".join(decoded) + trailing
    similar_to = None
    if has_idn and protected is not None and unicode_host:
        similar_to = protected.similar_protected_domain(unicode_host)
        if similar_to is not None:
            reasons.append("looks-like-protected-domain")

    safe = not reasons
    return DisplaySafety(
        safe=safe,
        reasons=tuple(dict.fromkeys(reasons)),
        display=unicode_host if safe else host,
        unicode=unicode_host,
        unsafe_labels=tuple(unsafe),
        similar_to=similar_to,
        has_idn=has_idn,
    )


def describe_reasons(reasons: Iterable[str]) -> str:
    """A plain-language sentence fragment for display-safety reasons."""
    return "; ".join(_REASON_TEXT.get(r, r) for r in reasons)


_REASON_TEXT = {
    "mixed-scripts": "it mixes alphabets that are not normally written together",
    "invisible-character": "it hides characters that do not show on screen",
    "disallowed-character": "it uses characters that have no place in a web address",
    "mixed-numbering-systems": "it mixes digits from different numbering systems",
    "hidden-overlay": "it stacks marks that can hide a letter",
    "icu-spoof-check": "it fails the Unicode spoofing checks",
    "deviation-character": "it contains ß, ς or an invisible joiner, which browsers disagree on",
    "tld-specific-character": "it uses a letter (þ, ð or ə) outside the country that uses it",
    "unsafe-middle-dot": "it uses a middle dot that can pass for a full stop",
    "whole-script-confusable": "it is spelt in another alphabet with letters that look Latin",
    "digit-lookalike": "it is made of characters that look like digits",
    "non-ascii-latin-mixed-with-non-latin": "it mixes accented Latin letters with another script",
    "dangerous-pattern": "it contains characters that can pass for punctuation or other letters",
    "invalid-punycode": "one of its labels is not valid punycode",
    "looks-like-protected-domain": "it looks like a well-known domain",
}
