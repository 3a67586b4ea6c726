"""What a new host and a new plain shape cost an audit: the scale mix's first URL of each shape.

The scale mix (``bench/mix.py``) has about 58,000 plain shapes (a head: scheme, host and
port, and whether the path is the root) on its 20,000 hosts. Each shape's first URL is
recorded as an audit records it (``RecordVetter``, offline, secrets redacted, JSON records):
first the first shape of every host, which pays the per-host analysis (lookalikes, IDN
display, addresses) too, then the other shapes of hosts already seen, which pay the shape's
own vet (the parse, the rules that read more than the host) and its record template. Prints
the CPU time per URL of each kind; their sum over the mix is the part of a one-process audit
that is paid once per host and per shape rather than per line.

    python bench/shape_bench.py [--urls 1000000]
"""

from __future__ import annotations

import argparse
import time

from mix import urls as mix_urls

from urlvet.audit.pipeline import RecordVetter, bulk_gc
from urlvet.engine import Vetter
from urlvet.policy import Policy
from urlvet.url import parse, plain_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    args = parser.parse_args()
    first_of_shape: dict[tuple[str, str], str] = {}
    for url in mix_urls(args.urls):
        split = plain_split(url)
        if split is not None:
            first_of_shape.setdefault((split[0], split[2]), url)
    seen: set[str] = set()
    new_host: list[str] = []
    known_host: list[str] = []
    for url in first_of_shape.values():
        host = parse(url).host
        (known_host if host in seen else new_host).append(url)
        seen.add(host)
    records = RecordVetter(Vetter(Policy()), None, True, True)
    with bulk_gc():
        spent = []
        for urls in (new_host, known_host):
            start = time.process_time()
            for url in urls:
                records((url, None, None))
            spent.append(time.process_time() - start)
    print(f"{len(first_of_shape):,} plain shapes on {len(seen):,} hosts")
    print(
        f"first shape of a host   {len(new_host):8,} {spent[0] / len(new_host) * 1e6:7.1f} µs each"
    )
    print(
        f"another shape of a host {len(known_host):8,} {spent[1] / len(known_host) * 1e6:7.1f} µs each"
    )
    print(f"in all                  {sum(spent):7.2f} s of CPU")


if __name__ == "__main__":
    main()
