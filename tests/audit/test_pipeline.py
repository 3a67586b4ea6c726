"""The audit pipeline's one loop and its strategies: a strategy of one's own plugs in, the
process pool gives the in-process results in order (evictions included), and a worker that
dies stops the run with an error instead of hanging it."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from urlvet.audit import (
    WINDOW,
    AuditOptions,
    Auditor,
    Batch,
    Diagnostic,
    InProcess,
    Key,
    Occurrence,
    ProcessPool,
    Record,
    RecordVetter,
    Reporter,
    Source,
    Summary,
)
from urlvet.engine import Vetter
from urlvet.policy import Policy

OFFLINE = Policy(dns={"enabled": False})


class Collect:
    """A writer that keeps every occurrence's URL and decision, and the diagnostics."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str] | str] = []

    def start(self) -> None:
        pass

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        self.items.append((occ.url, record.decision.value))

    def diagnostic(self, diag: Diagnostic) -> None:
        self.items.append(diag.code)

    def finish(self, summary: Summary) -> None:
        pass


def _run(
    path: Path, options: AuditOptions, strategy: Any = None
) -> tuple[Summary, list[tuple[str, str] | str]]:
    writer = Collect()
    reporter = Reporter(writer, fail_at=OFFLINE.compiled.block_at)
    summary = Auditor(OFFLINE, options).run(
        [Source(path.name, str(path))], reporter, None, strategy
    )
    return summary, writer.items


class Counting:
    """A strategy of its own: vets in process, and remembers what it was asked."""

    lookahead = 1

    def __init__(self) -> None:
        self.inner = InProcess(RecordVetter.for_options(Vetter(OFFLINE), AuditOptions()))
        self.submitted: list[list[Key]] = []
        self.closed = False

    def submit(self, keys: list[Key]) -> Batch:
        self.submitted.append(list(keys))
        return self.inner.submit(keys)

    def vet_now(self, key: Key) -> Record:
        return self.inner.vet_now(key)

    def close(self) -> None:
        self.closed = True


def test_a_strategy_of_ones_own_gets_each_windows_distinct_misses(tmp_path: Path) -> None:
    urls = [f"https://h{i % 50}.example.com/{i % 700}" for i in range(2 * WINDOW + 10)]
    path = tmp_path / "in.urls"
    path.write_text("\n".join(urls) + "\n", encoding="utf-8")
    strategy = Counting()
    summary, items = _run(path, AuditOptions(), strategy)
    assert strategy.closed
    assert len(strategy.submitted) == 3  # one submission a window
    flat = [k[0] for keys in strategy.submitted for k in keys]
    assert len(flat) == len(set(flat)) == 700  # each key vetted once, hits never resubmitted
    assert summary.vetted == 700
    assert [url for url, _ in items] == urls  # every occurrence, in input order


def test_the_process_pool_gives_the_in_process_results_in_order(tmp_path: Path) -> None:
    urls = [
        f"https://10.0.{i % 3}.{i % 200}/{i % 900}"
        if i % 3 == 0
        else f"https://site{i % 400}.example.com/{i % 1300}"
        for i in range(3 * WINDOW)
    ]
    lines = [*urls[:100], "not a url", *urls[100:]]
    path = tmp_path / "in.urls"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one, one_items = _run(path, AuditOptions())
    # A tiny cache: records of earlier windows are evicted and vetted again on the spot.
    two, two_items = _run(path, AuditOptions(jobs=2, cache_size=5))
    assert two_items == one_items
    assert (two.urls, two.by_decision, two.failing) == (one.urls, one.by_decision, one.failing)
    assert two.vetted >= one.vetted


def test_a_worker_that_dies_stops_the_run_with_an_error() -> None:
    pool = ProcessPool(OFFLINE, AuditOptions(jobs=2))
    try:
        keys: list[Key] = [(f"https://h{i}.example.com/", None, None) for i in range(64)]
        assert len(pool.submit(keys).records()) == 64  # the workers are up and answer
        for worker in pool._workers:  # no public handle on the processes
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
            worker.join()
        with pytest.raises(RuntimeError, match="ended unexpectedly"):
            pool.submit(keys).records()
    finally:
        pool.close()


# --- plain URLs: records made at once, in the loop ------------------------------------------


def test_the_key_of_an_occurrence_is_cut_out_of_it_in_one_step() -> None:
    from urlvet.audit.pipeline import _KEY

    occ = Occurrence("p", 1, 1, 3, "https://a.example/", "stdio", "open it", "mcp:draft")
    assert occ[_KEY] == (occ.url, occ.server, occ.message)


class Ordinary:
    """Vets every key the ordinary way: with every memo of the Vetter off."""

    lookahead = 0

    def __init__(self, options: AuditOptions) -> None:
        self.inner = InProcess(
            RecordVetter.for_options(Vetter(OFFLINE, host_cache_size=0), options)
        )

    def submit(self, keys: list[Key]) -> Batch:
        return self.inner.submit(keys)

    def vet_now(self, key: Key) -> Record:
        return self.inner.vet_now(key)

    def close(self) -> None:
        pass


def _plain_mix() -> list[str]:
    """Plain URLs (repeated near and far, secrets in the tail or the head, names that only
    look like secrets, IDN and IP hosts) among others."""
    heads = [
        "https://example.com",
        "http://shop.example.org:8080",
        "https://xn--bcher-kva.example",
        "https://bücher.example",
        "https://10.1.2.3",
        "https://[::1]",
        "https://admin:hunter2@example.net",
        "https://ghp_abcdefghijklmnop1234@github.com",
        "https://google.com@evil.example",
        "https://EXAMPLE.com",
        "https://paypa1.com",
    ]
    tails = [
        "/",
        "/a/b-c_d~e.f",
        "/x?id=1&page=2",
        "/cb?code=abc123&state=1",
        "/x?token=t0ps3cr3t",
        "/x#access_token=eyJhbGci0iJ",
        "/x?token_type=bearer",
        "/x?id=1&Session=9f8e7d",
        "/x?API_KEY=zzzzzzzz#frag",
        "/?q",
    ]
    urls = [h + t for h in heads for t in tails]
    others = ["https://example.com/a%20b", "javascript:alert(1)", "not a url", "ftp://x.example/"]
    return [*urls, *others, *urls[::-1], *urls[::7]]


@pytest.mark.parametrize(
    ("fmt", "cache_size"), [("jsonl", None), ("text", None), ("sarif", None), ("jsonl", 16)]
)
@pytest.mark.parametrize("redact", [True, False])
@pytest.mark.parametrize("server", [None, "https://tools.example.com/mcp"])
def test_records_vetted_with_the_memos_equal_the_ordinary_ones(
    tmp_path: Path, fmt: str, cache_size: int | None, redact: bool, server: str | None
) -> None:
    # With a cache of 16 records, records are evicted and made again: a plain URL's at once
    # (and counted as vetted again), any other's in its window.
    import io

    from urlvet.audit.output import RunInfo, make_writer
    from urlvet.audit.output.baseline import Baseline

    path = tmp_path / "in.urls"
    path.write_text("\n".join(_plain_mix()) + "\n", encoding="utf-8")
    options = AuditOptions(
        server=server,
        redact_secrets=redact,
        json_records=fmt == "jsonl",
        cache_size=cache_size or AuditOptions().cache_size,
    )
    compiled = OFFLINE.compiled

    def audit(strategy: Any, baseline: Baseline | None) -> tuple[str, Reporter, Summary]:
        out = io.StringIO()
        info = RunInfo(
            rules=compiled.rules,
            warn_at=compiled.warn_at,
            block_at=compiled.block_at,
            baseline=baseline is not None,
            redacted=redact,
        )
        writer = make_writer(fmt, out, info)
        reporter = Reporter(
            writer, fail_at=compiled.warn_at, baseline=baseline, collect_baseline=True
        )
        writer.start()
        summary = Auditor(OFFLINE, options).run(
            [Source("in.urls", str(path))], reporter, None, strategy
        )
        summary.elapsed = 0.0
        writer.finish(summary)
        if cache_size is not None:
            summary.vetted = 0
        return out.getvalue(), reporter, summary

    quick = InProcess(RecordVetter.for_options(Vetter(OFFLINE), options))
    fast, fast_reporter, fast_summary = audit(quick, None)
    slow, slow_reporter, slow_summary = audit(Ordinary(options), None)
    assert fast == slow
    assert fast_summary == slow_summary
    assert fast_reporter.collected == slow_reporter.collected
    assert fast_reporter.collected  # the findings were fingerprinted
    # Half of the findings accepted by a baseline: the same accepted, the same failing.
    accepted = sorted(fast_reporter.collected or {})[::2]
    baseline = Baseline(frozenset(accepted))
    fast, _, fast_summary = audit(
        InProcess(RecordVetter.for_options(Vetter(OFFLINE), options)), baseline
    )
    slow, _, slow_summary = audit(Ordinary(options), baseline)
    assert fast == slow
    assert fast_summary == slow_summary
    assert 0 < fast_summary.accepted < fast_summary.urls


def test_occurrences_in_a_row_are_counted_and_written_as_one_at_a_time() -> None:
    """The loop gives the reporter the occurrences between diagnostics in a row; the JSON
    writer writes them at once. Counts and output are those of one at a time."""
    import io

    from urlvet.audit.output import RunInfo
    from urlvet.audit.output.jsonl import JsonWriter

    vet = RecordVetter(Vetter(OFFLINE), None, True, True)
    urls = [
        "https://example.com/a?b=1",
        "http://example.com/x",
        "https://10.0.0.1/admin",
        "javascript:alert(1)",
        "https://idp.example/authorize?redirect_uri=https%3A%2F%2F10.0.0.2%2F",
        "https://user:hunter2@example.org/p?token=s3cr3t",
        "https://xn--pypal-4ve.com/signin",
        "https://example.com/a?b=1",
    ]
    occs = [
        Occurrence(path, n, 1, len(url), url, None, None, "url-list")
        for n, (path, url) in enumerate(
            [(p, u) for p in ("a.urls", 'b "odd".urls') for u in urls], start=1
        )
    ]
    recs = [vet((occ.url, None, None)) for occ in occs]
    fail_at = OFFLINE.compiled.warn_at
    for array in (False, True):
        info = RunInfo(rules=OFFLINE.compiled.rules, warn_at=1, block_at=2)
        outs = [io.StringIO(), io.StringIO()]
        reporters = [Reporter(JsonWriter(out, info, array=array), fail_at=fail_at) for out in outs]
        for occ, rec in zip(occs, recs, strict=True):
            reporters[0].occurrence(occ, rec)
        reporters[1].occurrences(occs[:5], recs[:5])
        reporters[1].occurrences(occs[5:], recs[5:])
        assert outs[0].getvalue() == outs[1].getvalue()
        assert outs[0].getvalue().count('"type":"url"') == len(occs)
        assert reporters[0].summary.failing == reporters[1].summary.failing > 0
        assert reporters[0]._combos == reporters[1]._combos
    # A writer of its own with no `occurrences`: given them one at a time.
    collect = Collect()
    Reporter(collect, fail_at=fail_at).occurrences(occs, recs)
    assert collect.items == [(o.url, r.decision.value) for o, r in zip(occs, recs, strict=True)]


def test_a_hosts_shared_findings_are_kept_per_server() -> None:
    # A record vetted with the memos is the one the ordinary path makes, whichever server
    # asked for the host before.
    quick = RecordVetter(Vetter(OFFLINE), None, True, True)
    ordinary = RecordVetter(Vetter(OFFLINE, host_cache_size=0), None, True, True)
    servers = [None, "https://tools.example.com/mcp", "https://other.example.net/mcp", "stdio"]
    hosts = ("example.com", "tools.example.com", "localhost:8080", "10.0.0.7")
    urls = [
        f"{scheme}://{h}/p/{i}?id={i}"
        for i in range(3)
        for h in hosts
        for scheme in ("https", "http")
    ]
    kinds = set()
    for _ in range(2):
        for server in servers:
            for url in urls:
                got = quick((url, server, None))
                assert got == ordinary((url, server, None)), (url, server)
                kinds.add((url.split("/")[2], server, got.codes))
    # The servers change what is found on the same hosts.
    assert len({codes for _, _, codes in kinds}) > len(hosts)
