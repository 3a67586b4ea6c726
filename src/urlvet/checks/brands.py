"""UV308-UV311: brands where the lookalike rules do not look: on shared hosting, by their
product names, in capitals of another script, and more than one step away.

Each rule is small and pure; the sourced data they read lives in ``urlvet.brands``
(product names and aliases), ``urlvet.hosting`` (shared-hosting platforms) and
``urlvet.steps`` (lookalikes of several steps), all under ``urlvet/data/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from urlvet import confusables
from urlvet.brands import BrandNames, BrandWord, brand_names, find_brand, words_of
from urlvet.checks.base import CheckContext, Facts, Hit, clip, rule
from urlvet.findings import Severity
from urlvet.hosting import may_be_shared_hosting, shared_hosting
from urlvet.lookalike import (
    COMMON_WORD_BRANDS,
    DEFAULT_KEYWORDS,
    MIN_COMBO_TOKEN_BRAND_LENGTH,
    LookalikeIndex,
    default_index,
)
from urlvet.steps import MIN_NAME, StepIndex
from urlvet.url import HostKind, site_of

_LOOKALIKE_CWE = 1007  # Insufficient Visual Distinction of Homoglyphs Presented to User
_PAGE_ENDINGS = (".html", ".htm", ".shtml", ".php", ".asp", ".aspx", ".jsp")
_EMAIL_IN_FRAGMENT = re.compile(
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)


def _index(ctx: CheckContext) -> LookalikeIndex:
    configured = ctx.settings.lookalike
    return configured if isinstance(configured, LookalikeIndex) else default_index()


def _owned(host: str, ctx: CheckContext, names: BrandNames) -> bool:
    """True when ``host`` is a protected domain or a brand's own (or under one)."""
    return _index(ctx).protected_parent(host) is not None or names.owner_of(host) is not None


GENERAL_WORDS = frozenset(
    {"docs", "jobs", "online", "service", "services", "review", "order", "orders", "customer"}
    | {"support", "helpdesk", "crypto", "tax", "https", "id", "gift", "prize", "claim", "safe"}
    | {"register", "purchase", "share", "center", "card", "message", "file", "track"}
)
"""Lure words that do not count beside a brand on site hosting (UV308): real projects' pages
there use them under their own names (`microsoft.github.io/vscode-docs/`)."""


def _is_page(path: str) -> bool:
    last = path.rsplit("/", 1)[-1].lower()
    return not last or "." not in last or last.endswith(_PAGE_ENDINGS)


def _on_shared_hosting(url: Facts, ctx: CheckContext) -> bool:
    return url.host_kind is HostKind.DOMAIN and may_be_shared_hosting(
        url.registrable_domain, url.suffix_is_private
    )


@rule(
    "UV308",
    "brand-on-shared-hosting",
    Severity.HIGH,
    cwe=_LOOKALIKE_CWE,
    reads={
        "host",
        "host_kind",
        "registrable_domain",
        "public_suffix",
        "suffix_is_private",
        "pathname",
        "hash",
    },
    when=_on_shared_hosting,
)
def brand_on_shared_hosting(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A brand or a sign-in lure in a bucket, a path or a site name on shared hosting.

    ## What it does
    On platforms where anyone can publish under the platform's name (S3, Cloud Storage, R2,
    Azure blob and static websites, IPFS gateways, Google Sites, forms builders, and every
    suffix of the Public Suffix List's private section: GitHub Pages, Netlify, Firebase...;
    the list and its sources are `urlvet/data/shared_hosting.txt`), reads the tenant's part
    of the host and the path for a brand's name or product name (`urlvet/data/brand_names.txt`).
    On storage (files served as they are) a brand with a web page, or a lure word, is
    enough (high); on site builders the brand needs a sign-in lure beside it (`login`,
    `verify`, `voicemail`..., not `docs` or `support`), since brands keep real pages there,
    and the finding is medium, as a brand and a keyword on a site of its own are (UV306). A web page on storage whose fragment
    holds an e-mail address (a phishing kit's pre-filled victim) is reported too, lower.

    ## Why is this bad?
    The address names a trusted company (`amazonaws.com`, `googleapis.com`, `windows.net`),
    mail filters and reputation lists trust it, and the page is whatever the tenant
    uploaded: a copy of a sign-in page costs nothing to host there.

    ## Example
    `https://microsoft-365-fileshare.s3.amazonaws.com/index.html`,
    `https://pub-3f9a.r2.dev/login.microsoftonline.com/index.html`,
    `https://sites.google.com/view/onedrive-shared-file/home`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    if not may_be_shared_hosting(url.registrable_domain, url.suffix_is_private):
        return
    hosting = shared_hosting(url)
    if hosting is None:
        return
    names = brand_names()
    words = words_of(hosting.tenant) + words_of(url.pathname)
    site = hosting.kind == "site"
    if site:
        # Projects keep docs, jobs and support pages on site hosting under their own names.
        words = [w for w in words if w not in GENERAL_WORDS]
    found = find_brand(words, names, need_lure=site)
    page = _is_page(url.pathname)
    evidence = {"platform": hosting.platform, "host": url.host, "path": clip(url.pathname, 200)}
    if found is not None and (found.lure is not None or page):
        lure = f" beside {found.lure!r}" if found.lure else ""
        yield Hit(
            f"The page is on {hosting.platform}, shared hosting where anyone can publish, and "
            f"its address names {found.brand} ({found.word!r}{lure}): a brand's sign-in is "
            "never there.",
            {**evidence, "brand": found.brand, "name": found.name, "lure": found.lure},
            severity=Severity.MEDIUM if site else None,
        )
        return
    if hosting.kind == "storage" and page and _EMAIL_IN_FRAGMENT.search(url.hash):
        yield Hit(
            f"A web page on {hosting.platform} (shared storage) with an e-mail address in its "
            "fragment, as phishing kits pre-fill their victim's.",
            evidence,
            severity=Severity.MEDIUM,
        )


@rule(
    "UV309",
    "brand-product-name",
    Severity.MEDIUM,
    cwe=_LOOKALIKE_CWE,
    reads={"host", "host_kind", "public_suffix", "suffix_is_private", "registrable_domain"},
)
def brand_product_name(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A brand's product name or alias in a host that is not the brand's.

    ## What it does
    Reads the words of the host's labels for a brand's other names (`office365`, `m365`,
    `onedrive`, `entra`, `aws`, `fb`, `whatsapp`, `gmail`, `icloud`, `squareup`...; the
    table, with each brand's own domains and the sources, is `urlvet/data/brand_names.txt`).
    A protected domain's own name (`paypal`, `microsoft`) beside one of the shipped phishing
    keywords is left to UV306 and UV305; the finding is medium, as theirs is.
    A name beside a lure word (`m365-license-renewal.net`, `teamsmeeting-invite.com`,
    `onedrive-document-share.com`), or a name as a subdomain of a site whose own label has
    one (`entra.verify-session.com`), is reported; a name beside other words
    (`apple-watch-zubehoer.de`, `google-analytics.com`) is not, as real sites name the brands
    they serve. Names that are also ordinary words (`teams`,
    `office`, `square`, `meta`, `prime`) count only beside a lure word, and a name counts as
    a whole word or glued to a lure word, never inside another word: `squarespace`,
    `officedepot`, `livenation`, `applebees`, `metacritic` stay quiet. The brands' own
    domains and the protected domains are exempt; hosts on shared hosting are UV308's.

    ## Why is this bad?
    People know Microsoft by Outlook and Teams and Amazon by AWS as much as by their names,
    and phishing writes the product name, which no list of brand domains holds.

    ## Example
    `https://m365-admin-billing.com/`, `https://aws-console-billing.com/`,
    `https://gmail-storage-full.com/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN or url.suffix_is_private:
        return
    suffix = url.public_suffix
    host = url.host.rstrip(".").lower()
    if not suffix or not url.registrable_domain or not host.isascii():
        return
    names = brand_names()
    labels = host[: -len(suffix) - 1].split(".")
    site_words = words_of(labels[-1])
    found = find_brand(site_words, names, need_lure=True)
    if found is None:
        found = _name_in_subdomain(labels[:-1], site_words, names)
    if found is None or _combo_reports(found, ctx):
        return
    if _owned(host, ctx, names):
        return
    yield Hit(
        f"The address names {found.brand} by its product name {found.name!r} beside "
        f"{found.lure!r}, but the "
        f"site is {url.registrable_domain}, which is not {found.brand}'s.",
        {"brand": found.brand, "name": found.name, "lure": found.lure, "host": url.host},
    )


@lru_cache(maxsize=4)
def _protected_labels(domains: frozenset[str]) -> frozenset[str]:
    """The site labels of the protected domains (``amazon`` for ``aws.amazon.com``)."""
    labels = set()
    for domain in domains:
        site, suffix, _private = site_of(domain)
        if site and suffix:
            labels.add(site[: -len(suffix) - 1])
    return frozenset(labels)


def _combo_reports(found: BrandWord, ctx: CheckContext) -> bool:
    """True when UV306 (or UV305) reports this name already: a protected domain's own name,
    long enough and no common word, beside one of the shipped phishing keywords."""
    return (
        found.lure in DEFAULT_KEYWORDS
        and len(found.name) >= MIN_COMBO_TOKEN_BRAND_LENGTH
        and found.name not in COMMON_WORD_BRANDS
        and found.name in _protected_labels(_index(ctx).domains)
    )


def _name_in_subdomain(
    subdomains: list[str], site_words: list[str], names: BrandNames
) -> BrandWord | None:
    """A brand name as a word of a subdomain label of a site whose own label has a lure."""
    lure = next((w for w in site_words if w in names.lures), None)
    if lure is None:
        return None
    for label in subdomains:
        hit = find_brand([*words_of(label), lure], names, need_lure=True)
        if hit is not None:
            return hit
    return None


@lru_cache(maxsize=4)
def _capital_skeletons(domains: frozenset[str]) -> dict[str, str]:
    """The skeleton of each protected label and brand name in capitals -> that name."""
    table: dict[str, str] = {}
    names = brand_names()
    for name in [d.split(".")[0] for d in sorted(domains)] + sorted(names.names | names.short):
        if name.isascii() and len(name) >= 2:
            table.setdefault(confusables.skeleton(name.upper()).lower(), name)
    return table


@rule(
    "UV310",
    "whole-script-capitals",
    Severity.HIGH,
    cwe=_LOOKALIKE_CWE,
    reads={"host_kind", "host_as_written"},
)
def whole_script_capitals(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A name written in capitals of another script that read as a brand's Latin capitals.

    ## What it does
    Reads the host as the link writes it, before the URL parser lowers its case, and takes
    the confusable skeleton (Unicode TR39) of each label with capitals outside ASCII:
    `ΝΙΚΕ` (Greek) is `NIKE`, `СОЅТСО` (Cyrillic) is `COSTCO`. A skeleton that is a protected
    domain's name or a brand's name is high; any other label that reads as plain Latin
    letters is medium, as browsers show such a name in punycode.

    ## Why is this bad?
    Lower-case Greek `νικε` looks nothing like `nike`, so a check on the lowered name lets it
    through; in capitals, as the link shows it, Ν, Ι, Κ and Ε are the Latin letters' twins.

    ## Example
    `https://ΝΙΚΕ.COM/`, `https://ΑΜΕΧ.COM/login`, `https://СОЅТСО.COM/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    written = url.host_as_written
    if written is None or written.isascii():
        return
    table = _capital_skeletons(_index(ctx).domains)
    for label in written.split(".")[:-1]:
        if label.isascii() or not any(ch.isupper() and not ch.isascii() for ch in label):
            continue
        read = confusables.skeleton(label)
        if not read.isascii() or not read.isalnum():
            continue
        name = table.get(read.lower())
        yield Hit(
            f"{label!r} is written in capitals of another script that read as "
            f"{read.upper()!r}" + (f", the name of {name}." if name else "."),
            {"label": label, "reads_as": read.lower(), "imitates": name},
            severity=None if name else Severity.MEDIUM,
        )
        return


@lru_cache(maxsize=4)
def _step_index(domains: frozenset[str]) -> StepIndex:
    names = brand_names()
    return StepIndex([d.split(".")[0] for d in domains] + sorted(names.names))


@rule(
    "UV311",
    "lookalike-in-several-steps",
    Severity.HIGH,
    cwe=_LOOKALIKE_CWE,
    reads={"host", "host_kind", "public_suffix", "registrable_domain"},
)
def lookalike_in_several_steps(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A name that reaches a protected brand's name in more than one step.

    ## What it does
    Folds each word of the host the way the eye does (`0` as `o`, `1` and `i` as `l`, `rn`
    and `nn` as `m`, `vv` as `w`, `cl` as `d`) and compares it with the protected domains'
    names and the brands' names folded alike, allowing one more insertion, deletion,
    substitution or swap: `nnicrosoft`, `nn1crosoft`, `rnicrosofft`, `gitlhub`, `vvelIsfargo`.
    Names shorter than five letters are left to UV303. The protected domains themselves and
    the brands' own domains are exempt.

    ## Why is this bad?
    The near-miss rule allows one edit; a phisher who writes `m` as `nn` and then changes a
    letter is two edits away from the name and one glance away from it.

    ## Example
    `https://nnicrosoft.com/`, `https://nn1crosoft.com/`, `https://gitlhub.com/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    suffix = url.public_suffix
    if not suffix:
        return
    host = url.host.rstrip(".").lower()
    if not host.isascii() or host == suffix:
        return
    index = _index(ctx)
    steps = _step_index(index.domains)
    labels = host[: -len(suffix) - 1].split(".")
    for at, label in enumerate(labels):
        words = label.split("-")
        for word in words:
            if len(word) < MIN_NAME:
                continue  # StepIndex.match's own first test, without the call
            match = steps.match(word, len(words) == 1, subdomain=at < len(labels) - 1)
            if match is None:
                continue
            if _owned(host, ctx, brand_names()):
                return
            yield Hit(
                f"{word!r} reads as {match.name!r} ({match.folded!r} as the eye folds it), "
                f"but the site is {url.registrable_domain or host}.",
                {"word": word, "imitates": match.name, "folded": match.folded, "host": url.host},
            )
            return
