"""UV5xx: the server's message shown beside the URL. Does the text tell the truth about it?"""

from __future__ import annotations

import re
from collections.abc import Iterator

from urlvet.checks.base import CheckContext, Hit, compared_site, rule
from urlvet.findings import Severity
from urlvet.text import hidden_characters
from urlvet.url import ParsedURL, site_of

# Domain-like words in prose: labels of letters, digits and hyphens joined by dots, ending
# in an alphabetic label. Deliberately ASCII: a Unicode name in a message is judged by the
# lookalike rules once it is the URL itself.
_DOMAIN_WORD = re.compile(
    r"(?<![\w@.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})(?![\w-])",
    re.IGNORECASE,
)
_MAX_MESSAGE_SCAN = 10_000
# Top-level domains that are also common file extensions: `README.md` or `setup.py` in a
# message names a file, not a site. A name with a `www.` or three or more labels still counts.
_FILE_EXTENSION_TLDS = frozenset({"md", "py", "zip", "mov", "sh", "pl", "rs", "so", "ps", "cc"})


@rule("UV501", "hidden-characters-in-message", Severity.MEDIUM, kind="message", cwe=451)
def hidden_characters_in_message(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """Control, bidirectional-override or invisible characters in the server's message.

    ## What it does
    Flags bidi controls (U+202E and friends), zero-width and other invisible characters, and
    control characters other than newlines and tabs in the message the server wants shown
    next to the URL.

    ## Why is this bad?
    They make the text a person reads differ from the text that is there: reversed
    fragments, hidden words, or an address that looks different from the real one. A consent
    screen shows them visibly; their presence is itself a warning sign.

    ## Example
    `Sign in at \u202emoc.elgoog\u202c to continue`.
    """
    text = (ctx.message or "")[:_MAX_MESSAGE_SCAN]
    found = [(i, c, k) for i, c, k in hidden_characters(text) if c not in ("U+000A", "U+0009")]
    if found:
        shown = ", ".join(c for _, c, _ in found[:8])
        yield Hit(
            f"The server's message contains hidden or direction-changing characters ({shown}).",
            {
                "characters": [{"index": i, "codepoint": c, "kind": k} for i, c, k in found[:32]],
                "count": len(found),
            },
        )


@rule("UV502", "message-names-another-site", Severity.LOW, kind="message", cwe=451)
def message_names_another_site(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """The server's message names a site, but the URL goes to a different one.

    ## What it does
    Finds domain names written in the message (`Sign in to paypal.com to continue`) and
    flags the message when none of them is the URL's site.

    ## Why is this bad?
    People read the message, not the URL. A message that promises one site while the link
    opens another is the core move of phishing.

    ## Example
    Message `Verify your account on paypal.com`, URL `https://paypal-verify.example.net/`.
    """
    if url is None or not url.host or url.ip is not None or not ctx.message:
        return
    # Sites under a top-level domain the suffix list does not know have no registrable
    # domain: compare their whole host instead.
    url_site = compared_site(url)
    named: dict[str, str] = {}
    for m in _DOMAIN_WORD.finditer(ctx.message[:_MAX_MESSAGE_SCAN]):
        word = m.group(1).lower()
        labels = word.split(".")
        if labels[-1] in _FILE_EXTENSION_TLDS and len(labels) == 2 and labels[0] != "www":
            continue
        site, _, _ = site_of(word)
        if site is not None:
            named.setdefault(site, word)
        elif word == url_site or url_site.endswith("." + word):
            named.setdefault(url_site, word)
    if not named or url_site in named:
        return
    first = next(iter(named.values()))
    yield Hit(
        f"The message mentions {first}, but the link goes to {url_site}.",
        {"named_sites": sorted(named), "url_site": url_site},
    )
