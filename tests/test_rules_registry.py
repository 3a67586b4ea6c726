"""The rule registry: stable codes, readable names, a doc for every rule (CI fails without)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from support.corpora import load
from urlvet import Policy
from urlvet.checks import registry
from urlvet.checks.base import Rule, missing_sections, rule
from urlvet.cli import main
from urlvet.findings import Severity
from urlvet.url import InvalidURL, ParsedURL, parse

RULES = list(registry.rules().values())

# Codes are a public contract (policies, baselines and SARIF name them): never renamed, never
# reused. These exist since issue 2 and must keep their names.
STABLE = {
    "UV100": "unparseable-url",
    "UV101": "plaintext-http",
    "UV102": "dangerous-scheme",
    "UV103": "credentials-in-url",
    "UV104": "userinfo-deception",
    "UV105": "overlong-url",
    "UV106": "hidden-characters",
    "UV107": "non-standard-port",
    "UV201": "non-public-address-literal",
    "UV202": "localhost-name",
    "UV203": "internal-name",
    "UV204": "address-in-name",
    "UV205": "public-address-literal",
    "UV206": "obfuscated-address",
    "UV207": "blocked-network",
    "UV208": "blocked-domain",
    "UV401": "cross-site-from-server",
    "UV402": "server-domain-embedded",
    "UV403": "trusted-third-party",
    "UV404": "local-callback",
    "UV405": "unexpected-domain-for-server",
}


def test_stable_codes_keep_their_names() -> None:
    table = registry.rules()
    for code, name in STABLE.items():
        assert code in table, code
        assert table[code].name == name


@pytest.mark.parametrize("r", RULES, ids=lambda r: r.code)
def test_code_is_uv_family_and_two_digits(r: Rule) -> None:
    assert re.fullmatch(r"UV[1-6]\d\d", r.code)
    assert r.family == f"UV{r.code[2]}xx"


def test_codes_and_names_are_unique() -> None:
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)


@pytest.mark.parametrize("r", RULES, ids=lambda r: r.code)
def test_name_is_kebab_case_and_reads_after_allow(r: Rule) -> None:
    # "allow plaintext-http", "allow private-address-resolution": a noun phrase, no verbs
    # of judgement, no code in it.
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
    assert not r.name.startswith(("no-", "avoid-", "check-", "detect-", "uv"))
    assert len(r.name) <= 40


@pytest.mark.parametrize("r", RULES, ids=lambda r: r.code)
def test_every_rule_has_its_doc_sections(r: Rule) -> None:
    assert missing_sections(r.doc) == [], f"{r.code} {r.name}: doc lacks sections"
    for heading in ("What it does", "Why is this bad?", "Example"):
        assert r.section(heading), f"{r.code}: empty section {heading!r}"
    assert r.summary, r.code
    assert isinstance(r.severity, Severity)


def test_registering_a_rule_with_a_bad_code_fails() -> None:
    with pytest.raises(ValueError, match="bad rule code"):
        rule("UV0001", "x", Severity.LOW)
    with pytest.raises(ValueError, match="bad rule code"):
        rule("XX101", "x", Severity.LOW)


def test_a_code_cannot_be_registered_twice() -> None:
    def other(url: object, ctx: object) -> list[object]:
        return []

    with pytest.raises(ValueError, match="defined twice"):
        rule("UV101", "plaintext-http", Severity.HIGH, reads={"scheme"})(other)  # type: ignore[arg-type]


def test_expand_selects_by_code_prefix_and_name() -> None:
    assert registry.expand("UV201") == ["UV201"]
    assert registry.expand("uv201") == ["UV201"]
    assert registry.expand("plaintext-http") == ["UV101"]
    assert set(registry.expand("UV1")) >= {c for c in STABLE if c.startswith("UV1")}
    assert registry.expand("UV") == list(registry.rules())
    assert registry.expand("UV999") == []


def test_urlvet_rule_lists_every_rule() -> None:
    result = CliRunner().invoke(main, ["rule"])
    assert result.exit_code == 0
    for r in RULES:
        assert r.code in result.output
        assert r.name in result.output


@pytest.mark.parametrize("r", RULES, ids=lambda r: r.code)
def test_urlvet_rule_code_prints_the_doc(r: Rule) -> None:
    result = CliRunner().invoke(main, ["rule", r.code])
    assert result.exit_code == 0
    assert f"# {r.code} {r.name}" in result.output
    assert r.doc in result.output
    by_name = CliRunner().invoke(main, ["rule", r.name])
    assert by_name.output == result.output


def test_urlvet_rule_unknown_code_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["rule", "UV999"])
    assert result.exit_code == 2
    assert "unknown rule" in result.output


# --- what a rule declares it can fire on --------------------------------------------------------

_SERVERS = (None, "stdio", "https://mcp.example.com/mcp", "http://127.0.0.1:8765/mcp")
# Lists filled in, so that the rules guarded by them have something to find.
_BUSY_POLICY = Policy(
    dns={"enabled": False},
    networks={"allowed": ["10.0.0.0/8"], "blocked": ["45.33.0.0/16", "2600:3c01::/32"]},
    domains={"allowed": ["corp.example"], "blocked": ["badcorp.com", "evil.example"]},
    servers={"github": {"domains": ["github.com"]}},
    protected_domains=["example.com"],
)


def _declared_urls() -> list[ParsedURL]:
    """Every URL of urlvet's corpus and of the WHATWG vectors that parses, of every host kind."""
    texts = []
    for path in sorted((Path(__file__).parents[1] / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                texts.append(json.loads(line)["url"])
    texts += [t["input"] for t in load("whatwg/urltestdata.json") if isinstance(t, dict)]
    out = []
    for text in texts:
        try:
            out.append(parse(text))
        except InvalidURL:
            continue
    return out
