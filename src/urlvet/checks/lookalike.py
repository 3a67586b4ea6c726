"""UV3xx: lookalike and homoglyph domains. Is this host pretending to be one the user trusts?

The rules read a :class:`urlvet.lookalike.LookalikeIndex` compiled from the policy's protected
domains (``ctx.settings.lookalike``; the shipped default list when the policy has none) and
treat the asking server's own registrable domain as protected too, for that call only.

ICU is imported and the index compiled on first use, so importing this module (which
registering the rules does) stays cheap.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from urlvet import confusables
from urlvet.checks.base import CheckContext, Facts, Hit, family, member, rule
from urlvet.findings import Severity
from urlvet.lookalike import (
    LookalikeIndex,
    LookalikeMatch,
    LookalikeReport,
    MatchKind,
    default_index,
)
from urlvet.url import HostKind, ParsedURL, to_unicode

_LOOKALIKE_CWE = 1007  # Insufficient Visual Distinction of Homoglyphs Presented to User


def _index(ctx: CheckContext) -> LookalikeIndex:
    configured = ctx.settings.lookalike
    if isinstance(configured, LookalikeIndex):
        return configured
    return default_index()


def _server_domain(ctx: CheckContext) -> str | None:
    return ctx.server.registrable_domain if ctx.server is not None else None


_LOOKALIKE_READS = (
    "host",
    "host_unicode",
    "host_kind",
    "registrable_domain",
    "public_suffix",
    "suffix_is_private",
)


def _imitates_nothing(report: LookalikeReport | None) -> bool:
    # Every member reports one kind of the report's matches, and nothing without one.
    return report is None or not report.matches


@family("lookalike", reads=_LOOKALIKE_READS, quiet=_imitates_nothing)
def lookalike_analysis(url: Facts, ctx: CheckContext) -> LookalikeReport | None:
    """The index's analysis of the URL's host, which the six lookalike rules (UV302-UV307)
    each report a part of: the engine computes it once per URL for all six."""
    if url.host_kind is not HostKind.DOMAIN or not url.host:
        return None
    return _index(ctx).analyze(url, _server_domain(ctx))


def _shown(url: ParsedURL) -> str:
    """The host as the message should name it: Unicode, with the punycode beside it when the
    two differ (a person must see both to notice the trick)."""
    host = url.host.rstrip(".")
    uni = url.host_unicode.rstrip(".")
    return host if uni == host else f"{uni} ({host})"


def _evidence(url: ParsedURL, match: LookalikeMatch) -> dict[str, object]:
    evidence: dict[str, object] = {
        "host": url.host,
        "host_unicode": url.host_unicode,
        "registrable_domain": url.registrable_domain,
        "protected_domain": match.target,
        "technique": match.how,
    }
    if match.likely_false_positive:
        evidence["likely_false_positive"] = match.likely_false_positive
    evidence.update(match.detail)
    return evidence


_ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
MAX_LETTERS_DESCRIBED = 3
"""Foreign letters named one by one in a UV302 message; more are counted."""


def _ordinal(i: int) -> str:
    if i < len(_ORDINALS):
        return _ORDINALS[i]
    n = i + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _char_words(ch: str) -> str:
    """A character as a person can check it: 'Cyrillic а', 'the digit 1', 'é'."""
    name = unicodedata.name(ch, "")
    if name.startswith("DIGIT"):
        return f"the digit {ch}"
    script = name.split(" ", 1)[0].title() if name else ""
    if not script or script == "Latin":
        return ch
    return f"{script} {ch}"


def _meant_words(ch: str, written: str) -> str:
    name = unicodedata.name(written, "")
    if name.startswith("DIGIT") or not ch.isascii():
        return f"the letter {ch}"
    return ch if not name or name.startswith("LATIN") else f"Latin {ch}"


def foreign_letters(shown: str, target: str) -> tuple[str, list[dict[str, object]]]:
    """Where ``shown`` (a host in Unicode) differs from the protected domain ``target`` it
    imitates: the part of ``shown`` compared (its last labels, as many as ``target`` has) and
    one entry per difference with its position in that part, what is written and what the eye
    takes it for. Names of the same length are compared letter for letter; otherwise the one
    stretch between their common start and end is the difference (``rn`` for ``m``)."""
    labels = shown.rstrip(".").split(".")
    part = ".".join(labels[-(target.count(".") + 1) :])
    if len(part) == len(target):
        return part, [
            {"at": i, "end": i + 1, "written": a, "meant": b}
            for i, (a, b) in enumerate(zip(part, target, strict=True))
            if a != b
        ]
    head = 0
    while head < min(len(part), len(target)) and part[head] == target[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(part), len(target)) - head
        and part[len(part) - 1 - tail] == target[len(target) - 1 - tail]
    ):
        tail += 1
    written, meant = part[head : len(part) - tail], target[head : len(target) - tail]
    return part, [{"at": head, "end": head + len(written), "written": written, "meant": meant}]


def _describe_letters(part: str, letters: list[dict[str, object]]) -> str:
    said = []
    for d in letters[:MAX_LETTERS_DESCRIBED]:
        at, written, meant = int(str(d["at"])), str(d["written"]), str(d["meant"])
        if len(written) == 1 and len(meant) == 1:
            kind = "letter" if written.isalpha() else "character"
            said.append(
                f"the {_ordinal(at)} {kind} is {_char_words(written)}, "
                f"not {_meant_words(meant, written)}"
            )
        elif not written:
            said.append(f"{meant} is missing after the {_ordinal(at - 1)} letter")
        elif len(written) == 2:
            said.append(
                f"the {_ordinal(at)} and {_ordinal(at + 1)} letters, {written}, read as {meant}"
            )
        else:
            said.append(f"{written} (from the {_ordinal(at)} letter) reads as {meant}")
    more = len(letters) - MAX_LETTERS_DESCRIBED
    if more > 0:
        said.append(f"and {more} more")
    text = "; ".join(said)
    return text


@rule(
    "UV301", "unsafe-idn-display", Severity.MEDIUM, cwe=_LOOKALIKE_CWE, reads={"host", "host_kind"}
)
def unsafe_idn_display(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """An internationalised host name that is not safe to show in Unicode.

    ## What it does
    Decodes each `xn--` label of the host and applies the checks browsers use before they
    show a name in Unicode: ICU's highly-restrictive script profile (no Latin mixed with
    Cyrillic, Greek or Armenian), allowed characters only, no invisible or deviation characters
    (ß, ς, zero-width joiners), whole-script confusables (a name spelt entirely in Cyrillic
    letters that look Latin, under a non-Cyrillic TLD), labels made of digit lookalikes,
    Icelandic and Azerbaijani letters outside their countries, and Kana, Han and combining-mark
    patterns that pass for punctuation or other letters. A name whose skeleton matches a
    protected domain fails too. The finding carries the punycode form to show instead.

    ## Why is this bad?
    A person reads the Unicode form. If it can pass for another name, showing it hands the
    attacker the reader's trust; the punycode form cannot be mistaken for a brand.

    ## Example
    `https://аррӏе.com/` (all Cyrillic) is shown as `xn--80ak6aa92e.com`;
    `https://münchen.de/` is fine.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN or "xn--" not in url.host.lower():
        return
    verdict = _index(ctx).display_safety(url.host, _server_domain(ctx))
    if verdict.safe:
        return
    why = confusables.describe_reasons(verdict.reasons)
    yield Hit(
        f"The web address {verdict.unicode.rstrip('.')} is not safe to show as written: {why}. "
        f"Show it as {url.host.rstrip('.')} instead.",
        {
            "punycode": url.host,
            "unicode": verdict.unicode,
            "display": verdict.display,
            "reasons": list(verdict.reasons),
            "unsafe_labels": list(verdict.unsafe_labels),
            "similar_to": verdict.similar_to,
        },
    )


@member(
    lookalike_analysis,
    "UV302",
    "homoglyph-of-protected-domain",
    Severity.CRITICAL,
    cwe=_LOOKALIKE_CWE,
)
def homoglyph_of_protected_domain(
    url: Facts, ctx: CheckContext, report: LookalikeReport | None
) -> Iterator[Hit]:
    """A host that looks exactly like a protected domain but is not it.

    ## What it does
    Computes the Unicode confusable skeleton (UTS #39, with the supplements browsers use) of
    the host and of its parent domains and compares it with the skeletons of the protected
    domains and of the asking server's own domain. Diacritics are dropped from Latin, Greek and
    Cyrillic names first, so an accent cannot hide the match.

    ## Why is this bad?
    On screen the two names are the same: `paypa1.com`, `pаypal.com` (Cyrillic а) and
    `googlé.com` all read as the real thing. There is no legitimate reason to send a user to
    such a name, so urlvet blocks it.

    ## Example
    `https://pаypal.com/signin` (Cyrillic а), `https://rnicrosoft.com/`,
    `https://accounts.goog1e.com/`.
    """
    if report is None or url is None or not report.matches:
        return
    for match in report.of_kind(MatchKind.HOMOGLYPH):
        target = to_unicode(match.target)
        part, letters = foreign_letters(url.host_unicode.lower(), target)
        evidence = _evidence(url, match)
        if letters:
            evidence["compared"] = part
            evidence["foreign_letters"] = letters
            where = "" if part == url.host_unicode.rstrip(".").lower() else f"in {part}, "
            why = f"{where}{_describe_letters(part, letters)}"
        else:
            why = "its letters only look the same on screen"
        yield Hit(
            f"{_shown(url)} is made to look exactly like {match.target}, but it is a different "
            f"site: {why}.",
            evidence,
        )


_EDIT_TEXT = {
    "character-fold": "swaps letters for ones that look alike (0 for o, rn for m, vv for w)",
    "one-substitution": "changes one letter",
    "one-insertion": "adds one letter",
    "one-deletion": "drops one letter",
    "adjacent-swap": "swaps two neighbouring letters",
    "www-glued": "runs www into the name, where a dot should be",
    "split-by-dots": "cuts the name into pieces with dots, which the eye reads past",
}


@member(
    lookalike_analysis, "UV303", "near-miss-of-protected-domain", Severity.HIGH, cwe=_LOOKALIKE_CWE
)
def near_miss_of_protected_domain(
    url: Facts, ctx: CheckContext, report: LookalikeReport | None
) -> Iterator[Hit]:
    """A host one typo away from a protected domain.

    ## What it does
    Compares the label before the public suffix (`paypal` in `paypal.com`) with the protected
    labels after folding characters that squatters swap (0/o, 1/l/i, rn/m, vv/w, cl/d, q/g):
    equal once folded, or one substitution, insertion, deletion or swap of neighbouring letters
    apart; or the name cut by inserted dots (`pay.pal.com`, `goo.gle.com`). Matches that
    browsers discard as likely false positives (only trailing digits differ,
    only the first letter, an added hyphen, or the suffix differs as well) are reported at medium
    severity instead of being dropped.

    ## Why is this bad?
    Typosquatting domains catch people who misread or mistype a name they trust; a server that
    sends a user to one is either compromised or phishing.

    ## Example
    `https://paypall.com/`, `https://gooogle.com/`, `https://githbu.com/`,
    `https://g00gle.com/`.
    """
    if report is None or url is None or not report.matches:
        return
    for match in report.of_kind(MatchKind.NEAR_MISS):
        text = _EDIT_TEXT.get(match.how, "differs by one character")
        severity = Severity.MEDIUM if match.likely_false_positive else None
        hedge = " It may be an unrelated site with a similar name." if severity else ""
        yield Hit(
            f"{_shown(url)} looks like {match.target}: it {text}.{hedge}",
            _evidence(url, match),
            severity,
        )


@member(
    lookalike_analysis,
    "UV304",
    "protected-domain-under-other-suffix",
    Severity.MEDIUM,
    cwe=_LOOKALIKE_CWE,
)
def protected_domain_under_other_suffix(
    url: Facts, ctx: CheckContext, report: LookalikeReport | None
) -> Iterator[Hit]:
    """A protected name registered under another public suffix.

    ## What it does
    Flags a host whose registrable domain has the same name as a protected domain under a
    different suffix: `paypal.net`, `paypal.com.co`, `google.com.mx` when only `google.com` is
    protected.

    ## Why is this bad?
    Anyone can register a brand's name under a suffix the brand does not use, and people read
    the name, not the suffix. Many brands do own such domains, so this warns rather than
    blocks: add the brand's real country domains to the protected list to silence it.

    ## Example
    `https://paypal.com.co/`, `https://github.co/`.
    """
    if report is None or url is None or not report.matches:
        return
    for match in report.of_kind(MatchKind.OTHER_SUFFIX):
        yield Hit(
            f"{_shown(url)} uses the name of {match.target} under a different ending "
            f"(.{match.detail.get('suffix', '')}); it may not belong to the same owner.",
            _evidence(url, match),
        )


@member(lookalike_analysis, "UV305", "embedded-protected-domain", Severity.HIGH, cwe=_LOOKALIKE_CWE)
def embedded_protected_domain(
    url: Facts, ctx: CheckContext, report: LookalikeReport | None
) -> Iterator[Hit]:
    """A host that spells out a protected domain inside a different site's name.

    ## What it does
    Splits the host at dots and hyphens and looks for a protected domain written out whole
    (`google.com`, `google-com`, or glued as `googlecom`), compared by skeleton so accents
    and homoglyphs do not hide it. A protected name followed by more labels is high severity; a
    name that merely ends with a protected domain (`example-google.com`) is medium.

    ## Why is this bad?
    `accounts.google.com.evil.example` starts like Google's sign-in page, and many screens
    cut long host names short. The site is `evil.example`.

    ## Example
    `https://accounts.google.com.evil.example/`, `https://accounts-google-com.evil.example/`,
    `https://googlecom-login.net/`.
    """
    if report is None or url is None or not report.matches:
        return
    site = url.registrable_domain or url.host
    for match in report.of_kind(MatchKind.EMBEDDED):
        embedded = match.detail.get("embedded", match.target)
        severity = Severity.MEDIUM if match.likely_false_positive else None
        yield Hit(
            f"{_shown(url)} contains '{embedded}' to look like {match.target}, "
            f"but the site is {site}.",
            _evidence(url, match),
            severity,
        )


@member(lookalike_analysis, "UV306", "combo-squatting", Severity.MEDIUM, cwe=_LOOKALIKE_CWE)
def combo_squatting(url: Facts, ctx: CheckContext, report: LookalikeReport | None) -> Iterator[Hit]:
    """A protected brand name combined with a sign-in or payment word.

    ## What it does
    Flags a registrable domain that contains a protected brand (the name before the suffix of
    a protected domain, five letters or more, or four as a hyphen-separated word) together with
    a keyword such as login, secure, account, verify, support, refund, invoice or wallet (the
    list, `data/phishing_keywords.txt`, is drawn from published phishing-detection tools and
    names its sources). Lookalike spellings are folded first (0 for o, 1 for l or i, 3 for e,
    4 for a, 5 for s, 7 for t, @ for a, rn for m, vv for w), and the finding shows the
    spelling found. A brand standing as a whole hyphen-separated word beside a word of one or
    two letters (`my-paypal`, `apple-id`) counts without a keyword, and so does the server's
    own brand beside any word (`acmecorp-files.net` for a server on acmecorp.com). Brands own
    many hyphenated names with longer words (`google-analytics.com`): those need a keyword.
    Brands that are ordinary words (apple, chase, target) are only looked for as whole words.

    It blocks (high) when a second signal makes the trick certain: the brand spelt with
    lookalike characters (`dr0pbox-transfer.net`, beside any word), or a keyword under a
    hosting platform's suffix, where anyone can take the name (`paypal-resolution.netlify.app`;
    a brand beside any other word there warns).

    ## Why is this bad?
    `paypal-secure.com` and `github-login.com` sound official but belong to whoever registered
    them; brands rarely use such names, phishing kits use them constantly. No brand spells its
    own name with a zero.

    ## Example
    `https://paypal-secure.com/`, `https://github-login.com/`, `https://secureamazonlogin.net/`,
    `https://my-paypal.co.uk/`, `https://amaz0n-refunds.co/` (high).
    """
    if report is None or url is None or not report.matches:
        return
    for match in report.of_kind(MatchKind.COMBO):
        keyword = match.detail.get("keyword", "")
        spelt = match.detail.get("spelt")
        hosting = match.detail.get("hosting_suffix")
        name = f"'{spelt}', spelt to pass for {match.target}," if spelt else match.target
        where = f" on {hosting}, where anyone can take a name" if hosting else ""
        yield Hit(
            f"{_shown(url)} combines the name of {name} with the word '{keyword}'{where}; "
            f"it is not {match.target}.",
            _evidence(url, match),
            Severity.HIGH if match.stronger else None,
        )


@member(lookalike_analysis, "UV307", "protected-brand-as-label", Severity.HIGH, cwe=_LOOKALIKE_CWE)
def protected_brand_as_label(
    url: Facts, ctx: CheckContext, report: LookalikeReport | None
) -> Iterator[Hit]:
    """A protected brand standing as a label of another site's host, with a phishing word.

    ## What it does
    Looks at the labels left of the registrable domain for a protected brand standing alone
    (`dropbox.file-share-center.com`), as a hyphen-separated word (`secure-chase.`) or glued
    to a keyword (`appleid.`), compared with lookalike spellings folded (`amaz0n.`). It reports
    the brand only with a second signal: a keyword from the phishing list anywhere in the
    host's name (`login.amazon.order-status-check.net`), or the brand spelt with lookalike
    characters. A brand that is an ordinary word (apple, chase, target, square) warns instead
    of blocking.

    ## Why is this bad?
    People read a host from the left and stop at the name they know; the site is the
    registrable domain at the right, which the attacker owns. Real brands do not put their name
    under a stranger's domain beside words like login or refund.

    ## Example
    `https://dropbox.file-share-center.com/`, `https://office365.secure-docs-portal.com/`,
    `https://secure-chase.account-alerts.info/` (medium). Not flagged: `https://github.acme.com/`
    (a company's own GitHub Enterprise: no second signal).
    """
    if report is None or url is None or not report.matches:
        return
    site = url.registrable_domain or url.host
    for match in report.of_kind(MatchKind.BRAND_LABEL):
        spelt = match.detail.get("spelt")
        brand = (
            f"'{spelt}', spelt to pass for {match.target}"
            if spelt
            else f"'{match.detail['brand']}'"
        )
        keyword = match.detail.get("keyword")
        beside = f" beside the word '{keyword}'" if keyword else ""
        yield Hit(
            f"{_shown(url)} puts the name {brand}{beside} in front of another site: the site "
            f"is {site}, not {match.target}.",
            _evidence(url, match),
            None if match.stronger else Severity.MEDIUM,
        )
