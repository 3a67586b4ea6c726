"""The lookalike index: which protected domain a host imitates, and how.

A :class:`LookalikeIndex` is compiled once per policy from the protected registrable domains
(:func:`build_index`). Every question about one host is then answered with a handful of hash
lookups whose number depends on the host's length, never on the length of the list:

* **homoglyph**: the host's skeleton (or a parent's) equals a protected domain's skeleton
  (``pаypal.com`` with a Cyrillic а, ``paypa1.com``);
* **near miss**: the label before the public suffix is one edit (substitution, insertion,
  deletion or swap of neighbours) away from a protected label once lookalike characters are
  folded (``0``->``o``, ``1``/``i``->``l``, ``rn``->``m``, ``vv``->``w``, ``cl``->``d``). A
  symmetric-delete index finds the candidates: each protected label is stored under itself and
  under each single-character deletion, and a host label is looked up the same way;
* **other suffix**: the same label under another public suffix (``paypal.com.co``, ``google.net``);
* **embedded**: a protected domain spelt inside the host with dots or hyphens
  (``accounts.google.com.evil.example``, ``accounts-google-com.evil.example``,
  ``googlecom-login.net``);
* **combo squatting**: a protected brand plus a sign-in or payment word
  (``paypal-secure.com``, ``github-login.com``).

Most hosts of a log are ordinary ASCII names in which no technique can find anything: a
screen (:mod:`~urlvet.lookalike.screen`) tells them apart with the look-ups the techniques
start from, and only the other hosts are analysed by every technique.

A host that is a protected domain or a subdomain of one is never a lookalike. Chromium drops
some near misses as likely false positives (different suffix only, trailing digits, a changed
first character, an inserted hyphen); urlvet keeps them and marks them so the rule can warn
instead of block.

One module a job, this package's namespace their public names:

- :mod:`~urlvet.lookalike.words`: the shipped word lists and the lengths the techniques need;
- :mod:`~urlvet.lookalike.spelling`: skeleton folds, lookalike spellings, one-edit comparisons;
- :mod:`~urlvet.lookalike.matches`: what a question returns (:class:`LookalikeReport`);
- :mod:`~urlvet.lookalike.targets`: the protected domains compiled into hash tables;
- :mod:`~urlvet.lookalike.index`: the index and the analysis that runs the techniques;
- :mod:`~urlvet.lookalike.screen`: the screen of plain hosts;
- :mod:`~urlvet.lookalike.techniques`: other suffix, near misses, embeddings;
- :mod:`~urlvet.lookalike.brand_words`: combo squatting and brand labels;
- :mod:`~urlvet.lookalike.domains`: loading protected-domain lists (YAML policy fragments or
  text files), importing Tranco/CrUX ranking CSVs, rendering a list as a policy fragment.
"""

from __future__ import annotations

from urlvet.lookalike.domains import (
    RankingImport,
    default_index,
    default_protected_domains,
    import_ranking_csv,
    index_for_policy,
    load_protected_domains,
    read_ranking_csv,
    render_policy_fragment,
)
from urlvet.lookalike.index import LookalikeIndex, build_index
from urlvet.lookalike.matches import LookalikeMatch, LookalikeReport, MatchKind
from urlvet.lookalike.spelling import (
    edit_distance_at_most_one,
    fold,
    fold_spelling,
    folds,
    has_one_character_swap,
    likely_false_positive_reason,
)
from urlvet.lookalike.words import (
    ACCOUNT_NAMESPACE_SUFFIXES,
    COMMON_WORD_BRANDS,
    DEFAULT_KEYWORDS,
    MIN_COMBO_TOKEN_BRAND_LENGTH,
)

__all__ = [
    "ACCOUNT_NAMESPACE_SUFFIXES",
    "COMMON_WORD_BRANDS",
    "DEFAULT_KEYWORDS",
    "MIN_COMBO_TOKEN_BRAND_LENGTH",
    "LookalikeIndex",
    "LookalikeMatch",
    "LookalikeReport",
    "MatchKind",
    "RankingImport",
    "build_index",
    "default_index",
    "default_protected_domains",
    "edit_distance_at_most_one",
    "fold",
    "fold_spelling",
    "folds",
    "has_one_character_swap",
    "import_ranking_csv",
    "index_for_policy",
    "likely_false_positive_reason",
    "load_protected_domains",
    "read_ranking_csv",
    "render_policy_fragment",
]
