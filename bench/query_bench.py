"""What an audit record costs for a URL that carries a URL in its query, its host already known.

The scale mix (``bench/mix.py``): its plain URLs are recorded first (every host and plain
shape is then known), then each URL that is not plain once, timed, at the collector thresholds
an audit runs with. Two kinds: a sign-in link whose ``redirect_uri`` is percent-encoded, and
a redirect whose ``url`` is written as it is. Prints the CPU time per URL of each kind and how
many took the query path (``Vetter.query_shape``) rather than the ordinary one; then the same
for 20,000 sign-in links to one provider with one ``redirect_uri`` (with and without a
server), whose query findings are computed once.

    python bench/query_bench.py [--urls 1000000]
"""

from __future__ import annotations

import argparse
import time

from mix import urls as mix_urls

from urlvet.audit.pipeline import RecordVetter, bulk_gc
from urlvet.engine import Vetter
from urlvet.policy import Policy
from urlvet.url import plain_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    args = parser.parse_args()
    urls = mix_urls(args.urls)
    vetter = Vetter(Policy())
    records = RecordVetter(vetter, None, True, True)
    carrying = [u for u in urls if plain_split(u) is None]
    with bulk_gc():
        for url in urls:
            if plain_split(url) is not None:
                records((url, None, None))
        spent = {"percent-encoded": 0.0, "as written": 0.0}
        counted = {"percent-encoded": 0, "as written": 0}
        taken = 0
        query_shape = getattr(vetter, "query_shape", None)  # None before the query path
        for url in carrying:
            kind = "percent-encoded" if "%" in url else "as written"
            start = time.process_time()
            records((url, None, None))
            spent[kind] += time.process_time() - start
            counted[kind] += 1
            if query_shape is not None:  # after the timing: its work is not counted
                taken += query_shape(url, None) is not None
    for kind, seconds in spent.items():
        if counted[kind]:
            print(f"{kind:16} {counted[kind]:8,} URLs {seconds / counted[kind] * 1e6:6.1f} µs each")
    total = sum(counted.values())
    print(f"query path       {taken:8,} of {total:,} ({100 * taken / max(total, 1):.0f}%)")
    # Sign-in links to one provider, as a gateway's log has them: one redirect_uri, a client
    # id and a state of their own. Their head and path's shape is known first.
    callback = "redirect_uri=https%3A%2F%2Fapp.example.org%2Fcallback"
    for server in (None, "https://mcp.example.com/mcp"):
        records = RecordVetter(Vetter(Policy()), None, True, True)
        records(("https://login.idp.example/authorize", server, None))
        links = [
            f"https://login.idp.example/authorize?client_id={i}&state={i:x}&{callback}"
            for i in range(20_000)
        ]
        with bulk_gc():
            start = time.process_time()
            for url in links:
                records((url, server, None))
            seconds = time.process_time() - start
        label = "one provider" + (", server" if server else "")
        print(f"{label:24} {len(links):,} URLs {seconds / len(links) * 1e6:6.1f} µs each")


if __name__ == "__main__":
    main()
