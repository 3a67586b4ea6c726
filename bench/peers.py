"""urlvet beside peer packages on the same labelled cases, in one process, offline.

    python bench/peers.py                 # corpus/*.jsonl (the DNS-only cases are left out)
    python bench/peers.py --out bench/peers.md

Peers are optional benchmark extras (``pip install -e '.[peers]'``), never runtime
dependencies. Each is used the way its own README shows; where a README's main path needs the
network (feeds, DNS, HTTP), the offline path it documents is used and the table says so.

No peer may reach the network. The script re-runs itself in a new network namespace
(``unshare --net``, as root) where only a down loopback exists, and inside the process a guard
refuses every name lookup and every connection that is not to loopback, and counts the
attempts per peer. A peer that tried is reported with the count.

For each tool the table gives, per family, the share of cases that should be flagged (expected
warn or block) which the tool flags, the share of cases that should be allowed which it flags
anyway (false alarms), and the mean microseconds per URL (wall time of the whole run divided by
the number of URLs, setup excluded).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.metadata
import ipaddress
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from urlvet.evaluate import Case, default_corpus_files, load_cases  # noqa: E402

FAMILIES = (
    "transport",
    "addresses",
    "lookalike",
    "server",
    "message",
    "hosting",
    "aliases",
    "wrappers",
    "grants",
    "capitals",
)
_NETNS_ENV = "URLVET_PEERS_NETNS"


# --- the network guard -----------------------------------------------------------------------


class NetworkBlocked(OSError):
    """Raised by the guard instead of a name lookup or a connection."""


@dataclass
class Guard:
    """Refuses name lookups and non-loopback connections; counts attempts per peer."""

    current: str = "-"
    attempts: Counter[str] = field(default_factory=Counter)
    isolation: str = "python guard only"

    def install(self) -> None:
        real_getaddrinfo = socket.getaddrinfo
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        guard = self

        def numeric(host: Any) -> bool:
            if host is None:
                return True
            text = host.decode() if isinstance(host, bytes) else str(host)
            try:
                ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError:
                return False
            return True

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not numeric(host):
                guard.attempts[guard.current] += 1
                raise socket.gaierror(socket.EAI_NONAME, f"urlvet bench: no DNS ({host!r})")
            return real_getaddrinfo(host, *args, **kwargs)

        def loopback(address: Any) -> bool:
            if isinstance(address, tuple) and address:
                try:
                    return ipaddress.ip_address(str(address[0]).split("%", 1)[0]).is_loopback
                except ValueError:
                    return False
            return isinstance(address, str | bytes)  # AF_UNIX paths

        def connect(sock: socket.socket, address: Any) -> None:
            if not loopback(address):
                guard.attempts[guard.current] += 1
                raise NetworkBlocked(errno.ENETUNREACH, f"urlvet bench: no network ({address!r})")
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if not loopback(address):
                guard.attempts[guard.current] += 1
                return errno.ENETUNREACH
            return real_connect_ex(sock, address)

        socket.getaddrinfo = getaddrinfo
        socket.gethostbyname = lambda host: getaddrinfo(host, None)[0][4][0]
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]

    @contextlib.contextmanager
    def peer(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        try:
            yield
        finally:
            self.current = previous


def reexec_in_netns(argv: Sequence[str]) -> int | None:
    """Run this script again in a fresh network namespace; None when that is impossible."""
    if os.environ.get(_NETNS_ENV) or not shutil.which("unshare") or os.geteuid() != 0:
        return None
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    env = {**os.environ, _NETNS_ENV: "1"}
    return subprocess.call(["unshare", "--net", "--", sys.executable, *argv], env=env)


# --- peers -------------------------------------------------------------------------------------

Decision = str  # "allow" | "warn" | "block"


@dataclass
class Result:
    """One tool's run over the cases."""

    name: str
    kind: str
    version: str = ""
    decisions: list[Decision | None] = field(default_factory=list)
    seconds: float = 0.0
    setup_seconds: float = 0.0
    median_seconds: float | None = None
    errors: int = 0
    status: str = "ran"
    note: str = ""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _host(url: str) -> tuple[str, str] | None:
    """(A-label host, Unicode host) as a browser parses the URL; None when it does not."""
    from ada_url import URL, idna_to_unicode

    try:
        u = URL(url)
        host = u.hostname
    except (ValueError, UnicodeError, TypeError):
        return None
    if not host:
        return None
    uni = host
    if "xn--" in host:
        try:
            uni = str(idna_to_unicode(host))
        except (ValueError, UnicodeError):
            uni = host
    return host, uni


def _site(host: str) -> str:
    from urlvet.url import site_of

    return site_of(host)[0] or host.rstrip(".")


def protected_domains(cases: Sequence[Case]) -> list[str]:
    """urlvet's shipped protected list plus every server site in the cases: what every
    lookalike peer is told to protect, so that all start from the same knowledge."""
    from urlvet.lookalike import default_protected_domains

    names = set(default_protected_domains())
    for c in cases:
        if c.server and c.server != "stdio":
            h = _host(c.server)
            if h:
                names.add(_site(h[0]))
    return sorted(names)


def run_per_url(
    result: Result, cases: Sequence[Case], judge: Callable[[Case], Decision | None]
) -> Result:
    decisions: list[Decision | None] = []
    times: list[float] = []
    start = time.perf_counter()
    for case in cases:
        t = time.perf_counter()
        try:
            decisions.append(judge(case))
        except NetworkBlocked:
            decisions.append(None)
        except Exception:
            result.errors += 1
            decisions.append(None)
        times.append(time.perf_counter() - t)
    result.seconds = time.perf_counter() - start
    result.median_seconds = statistics.median(times) if times else None
    result.decisions = decisions
    return result


def peer_urlvet(cases: Sequence[Case], _protected: list[str]) -> Result:
    from urlvet import Policy, Vetter
    from urlvet.server import as_server

    r = Result("urlvet", "all families (offline)", _version("urlvet"))
    t = time.perf_counter()
    vetter = Vetter(Policy(dns={"enabled": False}))
    servers = {
        (c.server, c.server_name): as_server(
            c.server or ("stdio" if c.server_name else None), name=c.server_name
        )
        for c in cases
    }
    # The policy a case names (blocked networks, servers: ...) is part of its input; each
    # policy is compiled once, in setup, as a client would at start-up.
    from urlvet.policy import merge

    base = vetter.policy.model_dump(mode="json")
    vetters = {
        repr(sorted(c.policy.items())): Vetter(Policy.model_validate(merge(base, c.policy)))
        for c in cases
        if c.policy
    }
    for v in (vetter, *vetters.values()):
        v.vet_offline("https://warm.example/", "https://mcp.example.com/")
    r.setup_seconds = time.perf_counter() - t

    def judge(c: Case) -> Decision:
        v = vetters[repr(sorted(c.policy.items()))] if c.policy else vetter
        server = servers[(c.server, c.server_name)]
        return v.vet_offline(c.url, server, message=c.message).decision.value

    return run_per_url(r, cases, judge)


def peer_url_guard(cases: Sequence[Case], _protected: list[str]) -> Result:
    from url_guard import UnsafeUrlError, assert_public_url

    r = Result(
        "url-guard",
        "address guard",
        _version("url-guard"),
        note="`assert_public_url(url)` (structural check, no DNS), as its README shows; "
        "a ValueError is a refusal, as its README says",
    )

    def judge(c: Case) -> Decision:
        try:
            assert_public_url(c.url)
        except UnsafeUrlError:
            return "block"
        except ValueError:
            # Its README: UnsafeUrlError subclasses ValueError so that call sites catching
            # ValueError keep working; urllib's own ValueError (bad IPv6, NFKC netloc) is
            # caught by those call sites the same way.
            return "block"
        return "allow"

    return run_per_url(r, cases, judge)


def peer_antissrf(cases: Sequence[Case], _protected: list[str]) -> Result:
    import requests
    from AntiSSRF import AntiSSRFError, AntiSSRFPolicy, PolicyConfigOptions

    r = Result(
        "microsoft-antissrf",
        "address guard",
        _version("microsoft-antissrf"),
        note="`AntiSSRFPolicy(EXTERNAL_ONLY_LATEST).get_antissrf_session().get(url)` as "
        "its README shows; it judges the addresses a name resolves to, so offline it can "
        "only judge IP literals: a refused DNS lookup counts as not flagged",
    )
    t = time.perf_counter()
    session = AntiSSRFPolicy(PolicyConfigOptions.EXTERNAL_ONLY_LATEST).get_antissrf_session()
    r.setup_seconds = time.perf_counter() - t
    refusals = (
        AntiSSRFError,
        requests.exceptions.InvalidURL,
        requests.exceptions.MissingSchema,
        requests.exceptions.InvalidSchema,
        requests.exceptions.URLRequired,
    )

    def judge(c: Case) -> Decision | None:
        try:
            session.get(c.url, timeout=1, allow_redirects=False)
        except refusals:
            return "block"
        except requests.exceptions.ConnectionError as exc:
            # Our guard refused the connection after AntiSSRF let it through, or refused the
            # DNS lookup it needed: either way AntiSSRF did not object.
            if isinstance(exc.__context__, AntiSSRFError) or "AntiSSRF" in str(exc):
                return "block"
            return "allow"
        except (NetworkBlocked, socket.gaierror):
            return "allow"
        except requests.exceptions.RequestException:
            return "block"
        return "allow"

    return run_per_url(r, cases, judge)


def peer_disarm(cases: Sequence[Case], _protected: list[str]) -> Result:
    from disarm import is_suspicious_hostname

    r = Result(
        "disarm",
        "lookalike (hostname)",
        _version("disarm"),
        note="`is_suspicious_hostname(host)` on the Unicode host a browser parses",
    )

    def judge(c: Case) -> Decision | None:
        h = _host(c.url)
        if h is None:
            return None
        suspicious, _ = is_suspicious_hostname(h[1])
        return "warn" if suspicious else "allow"

    return run_per_url(r, cases, judge)


def peer_impersonation_detector(cases: Sequence[Case], protected: list[str]) -> Result:
    from impersonation_detector import Detector, Message

    r = Result(
        "impersonation-detector",
        "lookalike + message",
        _version("impersonation-detector"),
        note="`Detector(protected).analyze(Message(body=message + url))`, rule backend; "
        "hold counts as warn",
    )
    t = time.perf_counter()
    det = Detector(protected)
    r.setup_seconds = time.perf_counter() - t
    actions = {"allow": "allow", "warn": "warn", "hold": "warn", "block": "block"}

    def judge(c: Case) -> Decision | None:
        body = f"{c.message or ''}\n{c.url}".strip()
        return actions.get(det.analyze(Message(body=body)).action)

    return run_per_url(r, cases, judge)


def peer_otacon(cases: Sequence[Case], protected: list[str]) -> Result:
    from otacon import permutations

    r = Result(
        "otacon",
        "lookalike (permutations)",
        _version("otacon"),
        note="offline `otacon generate DOMAIN` permutations of every protected domain; a "
        "URL is flagged when its site is one of them (scanning needs DNS/HTTP/WHOIS)",
    )
    t = time.perf_counter()
    variants: set[str] = set()
    own = set(protected)  # its documented exclusion list: never report a protected domain
    for domain in protected:
        with contextlib.suppress(Exception):
            for p in permutations.generate(domain, exclude=own):
                name = getattr(p, "domain", None) or getattr(p, "fqdn", None) or str(p)
                variants.add(str(name).lower().rstrip("."))
    r.setup_seconds = time.perf_counter() - t
    r.note += f"; {len(variants):,} permutations generated in {r.setup_seconds:.1f} s"

    def judge(c: Case) -> Decision | None:
        h = _host(c.url)
        if h is None:
            return None
        return "warn" if _site(h[0]) in variants or h[0].rstrip(".") in variants else "allow"

    return run_per_url(r, cases, judge)


def peer_opensquat(cases: Sequence[Case], protected: list[str]) -> Result:
    from opensquat import app

    r = Result(
        "opensquat",
        "lookalike (keywords vs domain list)",
        _version("opensquat"),
        note="`opensquat -k keywords.txt -d domains.txt` (local domain file instead of the "
        "NRD feed), in process; keywords are the protected names of four letters or more; hosts on a protected site "
        "itself are not reported; it sees hosts only",
    )
    hosts = {}
    for i, c in enumerate(cases):
        h = _host(c.url)
        if h is not None:
            hosts[i] = h[0].rstrip(".")
    with tempfile.TemporaryDirectory() as tmp:
        kw = Path(tmp) / "keywords.txt"
        dom = Path(tmp) / "domains.txt"
        # Brand names as its README's keyword file lists them; labels shorter than four
        # letters (t, x, me, go) would match every domain at any confidence level.
        words = sorted({d.split(".")[0] for d in protected if len(d.split(".")[0]) >= 4})
        kw.write_text("\n".join(words) + "\n")
        dom.write_text("\n".join(sorted(set(hosts.values()))) + "\n")
        start = time.perf_counter()
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            flagged = app.Domain().main(str(kw), 1, str(dom), False)
        r.seconds = time.perf_counter() - start
    # It is built to scan newly registered domains, where the brand's own never appear: as
    # with otacon's exclusion list, a host on a protected site itself is not reported.
    own = set(protected)
    flagged_set = {str(d).lower().rstrip(".") for d in flagged or []}
    r.decisions = [
        ("warn" if hosts[i] in flagged_set and _site(hosts[i]) not in own else "allow")
        if i in hosts
        else None
        for i in range(len(cases))
    ]
    return r


def peer_barb(cases: Sequence[Case], _protected: list[str]) -> Result:
    import json

    from barb.main import app as barb_app
    from typer.testing import CliRunner

    r = Result(
        "barb-phish",
        "phishing heuristics",
        _version("barb-phish"),
        note="`barb analyze URL... -o ndjson` (offline core, no --osint), in process; "
        "SUSPICIOUS warns, HIGH_RISK and PHISHING block",
    )
    verdicts = {
        "SAFE": "allow",
        "LOW_RISK": "allow",
        "SUSPICIOUS": "warn",
        "HIGH_RISK": "block",
        "PHISHING": "block",
    }
    runner = CliRunner()
    decisions: list[Decision | None] = []
    start = time.perf_counter()
    for c in cases:
        try:
            out = runner.invoke(barb_app, ["analyze", c.url, "-o", "ndjson"], catch_exceptions=True)
            line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
            if line is None:
                decisions.append(None)
                if out.exception is not None and not isinstance(out.exception, SystemExit):
                    r.errors += 1
                continue
            verdict = str(json.loads(line).get("verdict", "")).upper()
            decisions.append(verdicts.get(verdict))
        except Exception:
            r.errors += 1
            decisions.append(None)
    r.seconds = time.perf_counter() - start
    r.decisions = decisions
    r.note += "; time includes the CLI layer"
    return r


def peer_phish_signals(cases: Sequence[Case], _protected: list[str]) -> Result:
    from phish_signals import analyze_url

    r = Result(
        "phish-signals",
        "phishing heuristics",
        _version("phish-signals"),
        note="`analyze_url(url)`: malicious blocks, suspicious warns, unknown (unparsed) "
        "is not flagged",
    )
    risk = {"malicious": "block", "suspicious": "warn", "clean": "allow", "unknown": None}

    def judge(c: Case) -> Decision | None:
        return risk.get(analyze_url(c.url)["risk"])

    return run_per_url(r, cases, judge)


PEERS: list[tuple[str, str, Callable[[Sequence[Case], list[str]], Result]]] = [
    ("urlvet", "urlvet", peer_urlvet),
    ("url-guard", "url_guard", peer_url_guard),
    ("microsoft-antissrf", "AntiSSRF", peer_antissrf),
    ("opensquat", "opensquat", peer_opensquat),
    ("disarm", "disarm", peer_disarm),
    ("impersonation-detector", "impersonation_detector", peer_impersonation_detector),
    ("otacon", "otacon", peer_otacon),
    ("barb-phish", "barb", peer_barb),
    ("phish-signals", "phish_signals", peer_phish_signals),
]


# --- the table ---------------------------------------------------------------------------------


def _flagged(d: Decision | None) -> bool:
    return d in ("warn", "block")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def render(results: list[Result], cases: Sequence[Case], guard: Guard) -> str:
    fams = [f for f in FAMILIES if any(c.family == f for c in cases)]
    head = [
        "tool",
        "kind",
        *[f"{f} det." for f in fams],
        "false alarms",
        "µs/URL median / mean",
        "notes",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        if r.status != "ran":
            row = [f"{r.name} {r.version}".strip(), r.kind, *["-"] * len(fams), "-", "-", r.status]
            lines.append("| " + " | ".join(row) + " |")
            continue
        cells = []
        for f in fams:
            idx = [i for i, c in enumerate(cases) if c.family == f and c.decision != "allow"]
            cells.append(_pct(sum(_flagged(r.decisions[i]) for i in idx), len(idx)))
        benign = [i for i, c in enumerate(cases) if c.decision == "allow"]
        fa = _pct(sum(_flagged(r.decisions[i]) for i in benign), len(benign))
        mean = f"{1e6 * r.seconds / len(cases):,.0f}" if cases else "-"
        median = f"{1e6 * r.median_seconds:,.0f}" if r.median_seconds is not None else "-"
        us = f"{median} / {mean}"
        notes = r.note
        if guard.attempts.get(r.name):
            notes += f"; **{guard.attempts[r.name]} network attempts blocked**"
        if r.errors:
            notes += f"; {r.errors} URLs raised an exception (not flagged)"
        row = [f"{r.name} {r.version}".strip(), r.kind, *cells, fa, us, notes]
        lines.append("| " + " | ".join(row) + " |")
    n_flag = sum(c.decision != "allow" for c in cases)
    per_family = ", ".join(f"{f} {sum(c.family == f for c in cases)}" for f in (*fams, "benign"))
    lines += [
        "",
        f"{len(cases)} cases from corpus/ ({per_family}; DNS-only cases left out), "
        f"{n_flag} labelled warn or block, {len(cases) - n_flag} labelled allow. "
        "*det.*: share of a family's warn/block cases the tool flags (warns or blocks); "
        "*false alarms*: share of allow cases (all families) it flags; µs/URL: median and mean "
        "wall time per URL in one process on this 2-core machine, setup excluded (the corpus "
        "holds deliberately huge inputs, which weigh on the mean; tools run as one batch have "
        "no median). "
        f"Network: {guard.isolation}. "
        "The corpus is urlvet's own and covers what urlvet is for (the URL against the MCP "
        "server that asked, local callbacks, policy lists), which most peers do not attempt: "
        "read each peer in the columns of its own kind.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="corpus JSONL files (default: corpus/*.jsonl)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "peers.md"), help="Markdown file")
    parser.add_argument("--only", action="append", help="run only these tools (repeatable)")
    args = parser.parse_args(argv)

    if argv is None:
        rc = reexec_in_netns([str(Path(__file__).resolve()), *sys.argv[1:]])
        if rc is not None:
            return rc
    guard = Guard()
    if os.environ.get(_NETNS_ENV):
        guard.isolation = (
            "a fresh network namespace (`unshare --net`) plus an in-process guard "
            "that refuses DNS and non-loopback connections"
        )
    else:
        guard.isolation = "an in-process guard that refuses DNS and non-loopback connections"
    guard.install()

    cases = [c for c in load_cases(args.files or default_corpus_files()) if not c.dns]
    protected = protected_domains(cases)
    results: list[Result] = []
    for name, module, run in PEERS:
        if args.only and name not in args.only:
            continue
        print(f"running {name} …", file=sys.stderr, flush=True)
        with guard.peer(name):
            try:
                __import__(module)
            except Exception as exc:
                results.append(
                    Result(
                        name,
                        "",
                        _version(name),
                        status=f"not run: import failed ({type(exc).__name__}: "
                        f"{str(exc)[:80]}); `pip install -e '.[peers]'`",
                    )
                )
                continue
            try:
                results.append(run(cases, protected))
            except Exception as exc:
                results.append(
                    Result(
                        name,
                        "",
                        _version(name),
                        status=f"not run: {type(exc).__name__}: {str(exc)[:120]}",
                    )
                )
    table = render(results, cases, guard)
    print(table)
    if args.out:
        Path(args.out).write_text(
            "# urlvet and its peers on corpus/\n\nMade by `python bench/peers.py`.\n\n"
            + table
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
