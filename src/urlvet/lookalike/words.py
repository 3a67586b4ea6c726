"""The word lists the lookalike techniques read (phishing keywords, brands that are ordinary
words, shipped with urlvet in ``urlvet.data``) and the lengths below which a technique stays
quiet."""

from __future__ import annotations

from importlib import resources

_DATA_PACKAGE = "urlvet.data"
_DATA_FILE = "protected_domains.txt"
_KEYWORD_FILE = "phishing_keywords.txt"
_COMMON_WORD_FILE = "common_word_brands.txt"


def _data_words(name: str) -> tuple[str, ...]:
    """The words of a shipped data file: the first word of each line, '#' starts a comment."""
    text = resources.files(_DATA_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    words = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return tuple(dict.fromkeys(w for w in words if w))


DEFAULT_KEYWORDS: tuple[str, ...] = _data_words(_KEYWORD_FILE)
"""Words that phishing domains put beside a brand (``paypal-secure``, ``amazon-refunds``).
Read from ``data/phishing_keywords.txt``, which names the published lists each word comes
from (phishing_catcher, dnstwist's phishing dictionary, Garera et al. 2007...). Words brands
pair with their own names in legitimate domains ("drive", "pay", "live") are left out."""

COMMON_WORD_BRANDS: frozenset[str] = frozenset(_data_words(_COMMON_WORD_FILE))
"""Protected labels that are ordinary English words (``apple``, ``chase``, ``target``): they
are never looked for inside another word, and as a label of another site they need a second
signal and warn instead of blocking. From ``data/common_word_brands.txt``."""

SHORT_KEYWORD_LENGTH = 4
"""Keywords this short (``tax``, ``docs``, ``id``) count only as a whole word or glued to the
brand, never inside another word (``syntax``, ``paddock``)."""

ACCOUNT_NAMESPACE_SUFFIXES = frozenset({"github.io", "gitlab.io"})
"""Hosting suffixes whose labels are account names (``microsoft.github.io`` is the Microsoft
organisation's site): GitHub and GitLab give a brand's name to its owner, and brands publish
their pages there, so a protected name alone under them is not another owner's domain."""


# Below these lengths (of the folded label) a one-letter change turns one real word into another
# far more often than it imitates a brand.
MIN_EDIT_DISTANCE_LENGTH = 5
MIN_FOLD_MATCH_LENGTH = 4
MIN_OTHER_SUFFIX_LENGTH = 3
MIN_EMBEDDED_LENGTH = 3
"""A protected label spelt with its suffix (``ibm.com``, ``ibm-com``) inside a host."""
MIN_NO_SEPARATOR_EMBEDDED_LENGTH = 5
"""A protected label glued to its suffix (``googlecom``): short ones occur in ordinary words."""
MIN_COMBO_BRAND_LENGTH = 5
"""A brand found anywhere inside a label; ``ebay-login`` style whole tokens need only 4."""
MIN_COMBO_TOKEN_BRAND_LENGTH = 4
MIN_COMBO_KEYWORD_TOKEN_LENGTH = 3
"""A three-letter brand counts as a whole word beside a keyword when its skeleton has four
characters (``msn``, whose m reads as rn: ``msn-support``), as Chromium measures; ``len-online``
does not."""

MAX_BRAND_AND_WORD_OTHER = 2
"""A protected brand as a whole word beside other words this short (``my-paypal``,
``apple-id``) is a combo without a keyword; brands own many longer ones
(``google-analytics``, ``paypal-community``). The server's own brand beside any word counts."""
