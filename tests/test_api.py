"""The library API: the pinned public surface, no I/O at import, immutable shared objects."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import ValidationError

import urlvet
from urlvet import Decision, Finding, Policy, Severity, Verdict, Vetter

SRC = Path(urlvet.__file__).resolve().parent


def test_public_surface_is_pinned() -> None:
    assert urlvet.__all__ == [
        "Decision",
        "Finding",
        "InputError",
        "Policy",
        "PolicyError",
        "Server",
        "Severity",
        "UrlvetError",
        "Verdict",
        "Vetter",
        "load_policy",
        "vet",
    ]
    for name in urlvet.__all__:
        assert getattr(urlvet, name).__doc__, f"urlvet.{name} has no docstring"


def test_errors_form_one_hierarchy() -> None:
    assert issubclass(urlvet.PolicyError, urlvet.UrlvetError)
    assert issubclass(urlvet.InputError, urlvet.UrlvetError)


IMPORT_PROBE = textwrap.dedent(
    """
    import json, sys
    events = []
    def hook(event, args):
        if event == "open":
            path, mode = args[0], args[1]
            events.append(["open", str(path), str(mode)])
        elif event.startswith("socket.") or event in ("subprocess.Popen", "os.system"):
            events.append([event, repr(args)[:200], ""])
    sys.addaudithook(hook)
    import urlvet
    sys.stdout.write(json.dumps(events))
    """
)

_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".pth", ".zip")


def _is_package_metadata(path: Path) -> bool:
    # pydantic looks for plugins when the first model class is built: it reads every
    # installed distribution's entry_points.txt (importlib.metadata). Read-only metadata of
    # installed modules, and pydantic's doing, not urlvet's; ~175 files and ~30 ms here. It
    # can be switched off with PYDANTIC_DISABLE_PLUGINS=__all__ (an open item, not silenced).
    return path.name == "entry_points.txt" and path.parent.name.endswith(".dist-info")


def test_import_does_no_io_beyond_reading_modules() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    events = json.loads(proc.stdout)
    assert not [e for e in events if e[0] != "open"], "network or processes at import"
    for _event, path, mode in events:
        opened = Path(path)
        assert not set(mode) & set("wax+"), (path, mode)
        # module files, directories the import system lists, installed packages' metadata
        assert (
            opened.suffix in _MODULE_SUFFIXES or opened.is_dir() or _is_package_metadata(opened)
        ), path
    # Neither the suffix rules (tldextract's snapshot or urlvet's cache of them) nor a policy.
    suffix_rules = ("tld_set_snapshot", "/psl/rules-")
    assert not [
        p for _e, p, _m in events if any(s in p for s in suffix_rules) or p.endswith(".yaml")
    ]


def test_import_is_quick_and_lazy() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, urlvet; print(json.dumps(sorted(m for m in sys.modules)))".replace(
                "json.dumps", "__import__('json').dumps"
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = set(json.loads(proc.stdout))
    # Heavy or I/O-bound dependencies load on first use, never at import.
    for lazy in ("tldextract", "requests", "dns.resolver", "icu", "click"):
        assert lazy not in modules, f"{lazy} is imported by `import urlvet`"


URLS = [
    "https://example.com/",
    "http://127.1/",
    "https://google.com@evil.example/",
    "javascript:alert(1)",
    "https://10.0.0.1.nip.io/",
    "https://foo.github.io/x",
    "not a url",
    "https://münchen.de/",
    "https://[::ffff:169.254.169.254]/",
    "https://accounts.google.com/o/oauth2/v2/auth",
]
SERVERS = [None, "stdio", "https://mcp.example.com/mcp", "http://127.0.0.1:9000/"]


def test_same_input_same_verdict() -> None:
    a = Vetter(Policy(dns={"enabled": False}))
    b = Vetter(Policy(dns={"enabled": False}))
    for url in URLS:
        for server in SERVERS:
            first = a.vet(url, server)
            assert a.vet(url, server) == first
            assert b.vet(url, server) == first
            assert first.model_dump_json() == b.vet(url, server).model_dump_json()


def test_vetter_is_thread_safe() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}))
    jobs = [(u, s) for u in URLS for s in SERVERS] * 20
    expected = [vetter.vet(u, s) for u, s in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: vetter.vet(*job), jobs))
    assert got == expected


def test_vetter_is_immutable() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}))
    with pytest.raises(AttributeError):
        vetter.policy = Policy()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del vetter.policy
    with pytest.raises(AttributeError):
        vetter.anything = 1  # type: ignore[attr-defined]
    assert vetter.resolver is None  # DNS off: no resolver, and no I/O


def test_verdict_and_finding_are_frozen() -> None:
    verdict = Vetter(Policy(dns={"enabled": False})).vet("http://127.0.0.1/")
    with pytest.raises(ValidationError):
        verdict.decision = Decision.ALLOW  # type: ignore[misc]
    finding = verdict.findings[0]
    assert isinstance(finding, Finding)
    with pytest.raises(ValidationError):
        finding.severity = Severity.INFO  # type: ignore[misc]
    assert isinstance(verdict.findings, tuple)
    assert hash(Severity.HIGH) == hash(Severity("high"))


def test_verdict_fields() -> None:
    verdict = Vetter(Policy(dns={"enabled": False})).vet(
        "HTTPS://Sub.Example.co.uk:8443/a?b#c", "https://mcp.example.com/"
    )
    assert isinstance(verdict, Verdict)
    assert verdict.url == "HTTPS://Sub.Example.co.uk:8443/a?b#c"
    assert verdict.href == "https://sub.example.co.uk:8443/a?b#c"
    assert verdict.host == "sub.example.co.uk"
    assert verdict.host_kind == "domain"
    assert verdict.registrable_domain == "example.co.uk"
    assert verdict.server == "https://mcp.example.com"
    assert verdict.codes == tuple(f.code for f in verdict.findings)
    severities = [f.severity.rank for f in verdict.findings]
    assert severities == sorted(severities, reverse=True)  # most serious first
    assert verdict.to_json_dict()["decision"] in ("allow", "warn", "block")


def test_module_level_vet_with_a_policy() -> None:
    verdict = urlvet.vet("https://169.254.169.254/", policy=Policy(dns={"enabled": False}))
    assert verdict.decision is Decision.BLOCK
    assert "UV201" in verdict.codes


def test_bad_server_is_the_only_error() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}))
    with pytest.raises(urlvet.InputError):
        vetter.vet("https://example.com/", "ftp://nope/")
    assert vetter.vet(12345).decision is Decision.BLOCK  # type: ignore[arg-type]
    assert vetter.vet(None).decision is Decision.BLOCK  # type: ignore[arg-type]


def test_py_typed_is_shipped() -> None:
    assert (SRC / "py.typed").is_file()
