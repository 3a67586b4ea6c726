"""The scheme and authority of the corpus's URLs, for the tests of shared verdicts."""

from __future__ import annotations

from urlvet.evaluate import default_corpus_files, load_cases
from urlvet.url import HostKind, InvalidURL, parse


def corpus_heads() -> list[str]:
    """The scheme and authority of every corpus URL that has a host, as written, and each
    host again behind http, a port and user info."""
    heads: dict[str, None] = {}
    for case in load_cases(default_corpus_files()):
        try:
            parsed = parse(case.url)
        except InvalidURL:
            continue
        if not parsed.host or parsed.scheme not in ("http", "https"):
            continue
        host = f"[{parsed.host}]" if parsed.host_kind is HostKind.IPV6 else parsed.host
        for head in (f"https://{host}", f"http://{host}:8080", f"https://user@{host}"):
            heads[head] = None
    return list(heads)
