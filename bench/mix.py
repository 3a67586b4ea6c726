"""The scale mix: N distinct URLs over a fixed set of hosts, as a proxy or gateway log has them.

Hosts (20,000 by default) are drawn once, of the kinds a security team's logs hold: ordinary
sites and their subdomains (65%), sites on shared platforms (github.io, okta.com: 8%), internal
names (5%), IPv4 literals, private and public (5%), IPv6 literals (1%), Unicode (IDN) names (8%),
lookalikes of well-known brands (5%), and wildcard-DNS names that carry an address (3%). Every
URL is distinct (its index is in the path), on a host drawn uniformly at random, so that
nothing but the host repeats: plain https mostly, some http, ports, sign-in URLs with a
redirect_uri, a URL in a parameter, fragments.

Used by bench/engine_bench.py (in-process) and bench/audit_bench.py (the CLI).
"""

from __future__ import annotations

import random

_WORDS = [
    "shop",
    "acme",
    "north",
    "blue",
    "data",
    "cloud",
    "metro",
    "alpha",
    "river",
    "stone",
    "nova",
    "pixel",
    "orbit",
    "delta",
    "cedar",
    "lumen",
    "vector",
    "harbor",
    "quartz",
    "summit",
]
_TLDS = ("com", "net", "org", "io", "co.uk", "de", "fr", "app", "dev", "com.au")
_SUBS = ("", "www.", "api.", "cdn.", "static.", "auth.", "mail.")
_IDN = ("münchen", "bücher", "café", "straße-", "köln", "zürich", "españa", "søk", "日本", "пример")
_BRANDS = ("paypal", "google", "microsoft", "apple", "amazon", "github", "netflix", "facebook")
_TRICKS = ("{b}-login{h}.com", "{b}-secure-{h}.net", "www-{b}{h}.com", "{b}.com-verify{h}.co")


def hosts(count: int = 20_000, seed: int = 14) -> list[str]:
    """``count`` distinct hosts of the kinds listed in the module's docstring."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    h = 0
    while len(out) < count:
        h += 1
        r = rng.random()
        word = rng.choice(_WORDS)
        if r < 0.65:
            host = f"{rng.choice(_SUBS)}{word}{h}.{rng.choice(_TLDS)}"
        elif r < 0.73:
            host = f"docs-{word}{h}.github.io" if r < 0.69 else f"{word}{h}.okta.com"
        elif r < 0.78:
            host = f"{word}{h}.{rng.choice(('corp', 'internal', 'lan', 'local'))}"
        elif r < 0.83:
            if r < 0.80:
                host = f"10.{h % 256}.{(h >> 8) % 256}.{rng.randrange(1, 255)}"
            else:
                host = f"93.{h % 256}.{(h >> 8) % 256}.{rng.randrange(1, 255)}"
        elif r < 0.84:
            host = f"[2001:db8:{h:x}::{rng.randrange(1, 65535):x}]"
        elif r < 0.92:
            host = f"{rng.choice(_IDN)}{h}.{rng.choice(('de', 'com', 'ch', 'jp', 'ru'))}"
        elif r < 0.97:
            host = rng.choice(_TRICKS).format(b=rng.choice(_BRANDS), h=h)
        else:
            host = (
                f"app-10-0-{h % 256}-{rng.randrange(1, 255)}.{rng.choice(('nip.io', 'sslip.io'))}"
            )
        out[host] = None
    return list(out)


def urls(n: int = 1_000_000, host_count: int = 20_000, seed: int = 14) -> list[str]:
    """``n`` distinct URLs over ``hosts(host_count)``, each on a host drawn uniformly."""
    rng = random.Random(seed + 1)
    pool = hosts(host_count, seed)
    out = []
    for i in range(n):
        host = pool[rng.randrange(len(pool))]
        r = rng.random()
        if r < 0.70:
            url = f"https://{host}/{rng.choice(_WORDS)}/{i}?id={i}&page={i % 50}"
        elif r < 0.80:
            url = f"http://{host}/static/{i:x}/app.js"
        elif r < 0.85:
            url = f"https://{host}:8443/v1/items/{i}"
        elif r < 0.92:
            url = (
                f"https://{host}/oauth2/authorize?client_id={i}&state={i:x}"
                f"&redirect_uri=https%3A%2F%2Fapp.{rng.choice(_WORDS)}.com%2Fcallback"
            )
        elif r < 0.95:
            url = f"https://{host}/redirect?url=https://{rng.choice(pool)}/landing/{i}"
        else:
            url = f"https://{host}/docs/{i}#section-{i % 7}"
        out.append(url)
    return out
