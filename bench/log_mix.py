"""The log mix: URLs as a proxy's log carries them, over hosts drawn as a proxy sees them.

Hosts are those of bench/mix.py (20,000 of the same kinds), drawn with a Zipf distribution
(exponent 1.1: a few hosts take most requests, a long tail is met once or twice), where
bench/mix.py draws them uniformly. Tails are what real logs hold: tracking parameters with
escapes (``utm_source=news%20letter``), ids and hex ids in paths, encoded return URLs
(``?return=https%3A%2F%2F...``), fragments, non-ASCII queries (raw and percent-encoded),
``;jsessionid=`` path parameters, dot segments, URLs carried in parameters as they are.

``urls(n, tails="plain")`` draws the same hosts in the same order with plain tails
(``/word/i``): the pair separates what a tail costs from what a host costs.

Used by bench/mix_bench.py.
"""

from __future__ import annotations

import bisect
import itertools
import random

import mix

ZIPF_EXPONENT = 1.1
_WORDS = mix._WORDS
_CAMPAIGNS = ("news%20letter", "spring+sale", "email", "cpc", "social%2Fads", "partner_42")
_SOURCES = ("newsletter", "google", "bing", "t.co", "linkedin", "mail%40list")
_QUERIES = ("caf%C3%A9", "straße", "東京", "naïve%20search", "%E2%82%AC100", "a%2Bb")
_RETURNS = (
    "https%3A%2F%2Fapp.{w}.com%2Fcallback%3Fsession%3D{i}",
    "%2Fdashboard%3Ftab%3D{i}",
    "https%253A%252F%252Fportal.{w}.net%252Fhome",  # encoded twice
)


def zipf_hosts(n: int, host_count: int = 20_000, seed: int = 14) -> list[str]:
    """``n`` draws from ``mix.hosts(host_count)`` with Zipf weights (rank r: 1 / r^s)."""
    pool = mix.hosts(host_count, seed)
    rng = random.Random(seed + 2)
    rng.shuffle(pool)  # the ranks do not follow mix.py's order of kinds
    weights = [1 / (r**ZIPF_EXPONENT) for r in range(1, len(pool) + 1)]
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    return [pool[bisect.bisect(cumulative, rng.random() * total)] for _ in range(n)]


def _tracking(rng: random.Random, i: int) -> str:
    params = [
        f"utm_source={rng.choice(_SOURCES)}",
        f"utm_medium={rng.choice(('email', 'cpc', 'social'))}",
        f"utm_campaign={rng.choice(_CAMPAIGNS)}",
    ]
    if rng.random() < 0.5:
        params.append(f"gclid=Cj0KCQ{i:x}EAAYASAAEgK{rng.randrange(1 << 30):x}")
    if rng.random() < 0.3:
        params.append(f"fbclid=IwAR{rng.randrange(1 << 40):x}")
    return "&".join(params)


def log_tail(rng: random.Random, i: int, pool_host: str) -> str:
    """One tail as a log carries it (see the module's docstring)."""
    w = rng.choice(_WORDS)
    r = rng.random()
    if r < 0.30:
        return f"/{w}/article-{i}?{_tracking(rng, i)}"
    if r < 0.45:
        return (
            f"/api/v2/users/{i}/orders/{rng.randrange(1 << 32):08x}?fields=id%2Cname&page={i % 9}"
        )
    if r < 0.55:
        ret = rng.choice(_RETURNS).format(w=w, i=i)
        return f"/login?return={ret}&lang=en"
    if r < 0.63:
        return f"/search?q={rng.choice(_QUERIES)}&sort=relevance&p={i % 20}"
    if r < 0.70:
        return f"/shop/cart;jsessionid={rng.randrange(1 << 64):016X}?item={i}"
    if r < 0.76:
        return f"/docs/{w}/guide.html#section-{i % 13}"
    if r < 0.80:
        return f"/static/../assets/{i:x}/app.min.js?v={i % 100}"
    if r < 0.85:
        return f"/out?url=https://{pool_host}/landing/{i}&ref=mail"
    if r < 0.90:
        return (
            f"/oauth2/authorize?client_id={i}&state={rng.randrange(1 << 40):x}"
            f"&redirect_uri=https%3A%2F%2Fapp.{w}.com%2Fcallback&scope=openid%20email"
        )
    if r < 0.95:
        return f"/img/{i}.png?w=640&h=480&fit=crop&auto=format%2Ccompress"
    return f"/{w}/{i}"


def urls(
    n: int = 1_000_000, host_count: int = 20_000, seed: int = 14, tails: str = "log"
) -> list[str]:
    """``n`` URLs on Zipf-drawn hosts, with log tails (``tails="log"``) or plain ones."""
    drawn = zipf_hosts(n, host_count, seed)
    rng = random.Random(seed + 3)
    out = []
    for i, host in enumerate(drawn):
        scheme = "http" if rng.random() < 0.1 else "https"
        if tails == "plain":
            out.append(f"{scheme}://{host}/{rng.choice(_WORDS)}/{i}")
        else:
            other = drawn[rng.randrange(n)]
            out.append(f"{scheme}://{host}{log_tail(rng, i, other)}")
    return out
