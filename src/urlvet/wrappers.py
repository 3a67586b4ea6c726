"""Link wrappers: the URLs mail and security gateways and ad networks write in place of a link.

A gateway rewrites every link of a message so that a click passes through it first; an ad
network does the same for its clicks. The link a person is asked to open then names the
gateway, and the page that opens is the one written inside. Each decoder here reads one
format, from its vendor's documentation or its public reverse engineering (named beside each),
and returns the URL it carries; :func:`unwrap` picks the decoder by host. Pure functions of
the URL's parts: nothing is fetched, and a wrapper that cannot be read yields None (the link is
then judged as it stands).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from urlvet.url import HostKind, ParsedURL, form_decode, percent_decode

__all__ = ["WRAPPER_SITES", "Unwrapped", "is_wrapper_host", "may_be_wrapper_site", "unwrap"]

Decoder = Callable[[str, str, str, str], "str | None"]
"""(host, path, query without '?', fragment with its '#') -> the carried URL, or None."""


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """The URL a wrapper carries."""

    wrapper: str
    """The wrapper's format, for people (``Proofpoint URL Defense v3``)."""
    destination: str
    """The carried URL as the wrapper would open it."""


def _params(query: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in query.split("&"):
        name, _, value = part.partition("=")
        out.setdefault(form_decode(name), value)
    return out


def proofpoint_v2(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Proofpoint URL Defense v2: ``/v2/url?u=https-3A__host_path&d=...``: in ``u``, ``_`` is
    ``/`` and ``-XX`` is the byte XX (Proofpoint's published decoder,
    https://help.proofpoint.com/ URL Defense decoding, and its open-source urldecoder.py)."""
    if not path.startswith("/v2/url"):
        return None
    u = _params(query).get("u")
    if not u:
        return None
    return percent_decode(u.replace("-", "%").replace("_", "/"))


_V3 = re.compile(r"^/v3/__(?P<url>.+?)__;(?P<bytes>[A-Za-z0-9_=-]*)!")


def proofpoint_v3(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Proofpoint URL Defense v3: ``/v3/__URL__;BYTES!!id$``, each ``*`` in URL standing for the
    next character of BYTES (base64url; ``**`` and a run letter repeat it) (Proofpoint's
    open-source urldecoder.py, v3 format)."""
    whole = path + ("?" + query if query else "") + fragment
    m = _V3.match(whole)
    if m is None:
        return None
    text, packed = m.group("url"), m.group("bytes")
    try:
        chars = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4)).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    out: list[str] = []
    k = i = 0
    while i < len(text):
        ch = text[i]
        if ch != "*":
            out.append(ch)
            i += 1
            continue
        if text.startswith("**", i) and i + 2 < len(text):
            # "**" and a letter: the next characters repeated (A=2 ... per the decoder).
            run = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".find(
                text[i + 2]
            )
            count = run + 2 if run >= 0 else 1
            out.append(chars[k : k + count])
            k += count
            i += 3
            continue
        out.append(chars[k : k + 1])
        k += 1
        i += 1
    return "".join(out)


def mimecast(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Mimecast URL Protect: ``/s/TOKEN?domain=HOST``; the full URL stays on Mimecast's side,
    the host it leads to is in ``domain`` (Mimecast's URL Protect documentation)."""
    if not path.startswith("/s/"):
        return None
    domain = form_decode(_params(query).get("domain", "")).strip()
    if not domain or "/" in domain or "@" in domain:
        return None
    return f"https://{domain}/"


def barracuda(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Barracuda Link Protection: ``linkprotect.cudasvc.com/url?a=URL&c=...`` (Barracuda Email
    Protection's link protection documentation)."""
    a = _params(query).get("a")
    return form_decode(a) if path == "/url" and a else None


def sophos(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Sophos Time-of-Click: ``REGION.protection.sophos.com?d=HOST&u=BASE64(URL)&...``
    (Sophos Central Email time-of-click documentation; ``u`` is standard base64)."""
    params = _params(query)
    u = form_decode(params.get("u", ""))
    if u:
        try:
            return base64.b64decode(u + "=" * (-len(u) % 4), validate=False).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            pass
    d = form_decode(params.get("d", "")).strip()
    return f"https://{d}/" if d and "/" not in d else None


def trend_micro(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Trend Micro click-time protection: ``/wis/clicktime/v1/query?url=URL&umid=...``
    (Trend Micro Email Security's time-of-click protection documentation)."""
    url = _params(query).get("url")
    return form_decode(url) if path.startswith("/wis/clicktime/") and url else None


def cisco(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Cisco Secure Email's redirector: ``secure-web.cisco.com/TOKEN/PERCENT-ENCODED-URL``
    (Cisco Secure Email URL rewriting, as publicly decoded)."""
    parts = path.split("/", 2)
    if len(parts) < 3 or not parts[2]:
        return None
    text = percent_decode(parts[2] + ("?" + query if query else ""))
    return text if "://" in text[:12] else None


def google_amp(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Google's AMP viewer: ``/amp/s/HOST/PATH`` opens ``https://HOST/PATH``, ``/amp/HOST/PATH``
    ``http://`` (Google's AMP cache URL format, https://developers.google.com/amp/cache)."""
    if path.startswith("/amp/s/"):
        rest, scheme = path[len("/amp/s/") :], "https"
    elif path.startswith("/amp/"):
        rest, scheme = path[len("/amp/") :], "http"
    else:
        return None
    if not rest:
        return None
    return f"{scheme}://{rest}" + ("?" + query if query else "")


def yahoo(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """Yahoo search's redirect: ``r.search.yahoo.com/..../RU=PERCENT-ENCODED-URL/RK=...``, the
    target in a path segment (as publicly decoded)."""
    for segment in path.split("/"):
        if segment.startswith("RU="):
            return percent_decode(segment[3:]) or None
    return None


def doubleclick(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """DoubleClick clicks: ``ad.doubleclick.net/ddm/clk/...;...?URL`` (the landing page is the
    whole query) and ``adclick.g.doubleclick.net/pcs/click?...&adurl=URL`` (Campaign
    Manager's click-tracker documentation)."""
    if query.lower().startswith(("http:", "https:")):
        return query + fragment
    adurl = _params(query).get("adurl")
    return form_decode(adurl) if adurl else None


def href_li(host: str, path: str, query: str, fragment: str = "") -> str | None:
    """href.li, a referrer-hiding redirect: ``https://href.li/?URL`` (its home page)."""
    return query + fragment if query.lower().startswith(("http:", "https:")) else None


_BY_HOST: tuple[tuple[str, str, Decoder], ...] = (
    ("urldefense.proofpoint.com", "Proofpoint URL Defense v2", proofpoint_v2),
    ("urldefense.com", "Proofpoint URL Defense v3", proofpoint_v3),
    ("*.mimecast.com", "Mimecast URL Protect", mimecast),
    ("*.mimecastprotect.com", "Mimecast URL Protect", mimecast),
    ("linkprotect.cudasvc.com", "Barracuda Link Protection", barracuda),
    ("*.protection.sophos.com", "Sophos Time-of-Click", sophos),
    ("*.trendmicro.com", "Trend Micro click-time protection", trend_micro),
    ("*.trendmicro.eu", "Trend Micro click-time protection", trend_micro),
    ("secure-web.cisco.com", "Cisco Secure Email redirector", cisco),
    ("r.search.yahoo.com", "Yahoo search redirect", yahoo),
    ("ad.doubleclick.net", "DoubleClick click-tracker", doubleclick),
    ("adclick.g.doubleclick.net", "DoubleClick click-tracker", doubleclick),
    ("href.li", "href.li redirect", href_li),
)
_EXACT = {h: (name, fn) for h, name, fn in _BY_HOST if not h.startswith("*.")}
_PARENT = {h[2:]: (name, fn) for h, name, fn in _BY_HOST if h.startswith("*.")}
_GOOGLE = re.compile(r"^(?:www\.)?google\.(?:com|co\.[a-z]{2}|com\.[a-z]{2}|[a-z]{2})$")


WRAPPER_SITES = frozenset(
    {
        "proofpoint.com",
        "urldefense.com",
        "mimecast.com",
        "mimecastprotect.com",
        "cudasvc.com",
        "sophos.com",
        "trendmicro.com",
        "trendmicro.eu",
        "cisco.com",
        "yahoo.com",
        "doubleclick.net",
        "href.li",
    }
)
"""The registrable domains of every wrapper host above (Google's AMP viewer apart)."""


def may_be_wrapper_site(registrable_domain: str | None) -> bool:
    """False when no wrapper can be on a site of this registrable domain: one set look-up
    that rules out nearly every link before any host is walked."""
    if not registrable_domain:
        return False
    return registrable_domain in WRAPPER_SITES or registrable_domain.startswith("google.")


def _decoder_for(host: str) -> tuple[str, Decoder] | None:
    host = host.rstrip(".").lower()
    found = _EXACT.get(host)
    if found is not None:
        return found
    if _GOOGLE.match(host):
        return "Google AMP viewer", google_amp
    dot = host.find(".")
    while dot >= 0:
        found = _PARENT.get(host[dot + 1 :])
        if found is not None:
            return found
        dot = host.find(".", dot + 1)
    return None


def is_wrapper_host(url: ParsedURL) -> bool:
    """True when ``url``'s host is a wrapper's that :func:`unwrap` reads."""
    return url.host_kind is HostKind.DOMAIN and _decoder_for(url.host) is not None


def unwrap(url: ParsedURL) -> Unwrapped | None:
    """The URL the wrapper link ``url`` carries, or None when it is no wrapper link."""
    if url.host_kind is not HostKind.DOMAIN or url.scheme not in ("http", "https"):
        return None
    found = _decoder_for(url.host)
    if found is None:
        return None
    name, decode = found
    destination = decode(url.host, url.pathname, url.search[1:], url.hash)
    if not destination or len(destination) > MAX_DESTINATION_LENGTH:
        return None
    return Unwrapped(name, destination.strip())


MAX_DESTINATION_LENGTH = 8192
"""The longest carried URL read: longer ones are judged as the wrapper link alone."""
