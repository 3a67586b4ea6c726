"""Policies: the shipped files, their URL fixtures, loading, merging, errors, the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

from urlvet import Policy, PolicyError, Vetter, load_policy
from urlvet.cli import main
from urlvet.findings import Severity
from urlvet.policy import merge, policy_json_schema
from urlvet.review.fixtures import FixtureCase, check_case, load_fixtures

ROOT = Path(__file__).resolve().parents[1]
POLICIES_DIR = ROOT / "src" / "urlvet" / "policies"
"""The built-in policies, their fixtures and the policy schema, as the package ships them."""
SCHEMA_FILE = POLICIES_DIR / "policy.schema.json"


# -- the shipped policies --------------------------------------------------------------------


def test_default_yaml_is_the_built_in_default() -> None:
    assert load_policy(POLICIES_DIR / "default.yaml") == Policy()


def test_strict_yaml_extends_default() -> None:
    strict = load_policy(POLICIES_DIR / "strict.yaml")
    default = Policy()
    assert strict.thresholds.block is Severity.MEDIUM
    assert strict.limits.max_url_length == 1024
    assert strict.dns.failure_severity is Severity.HIGH
    assert strict.severity["UV107"] is Severity.MEDIUM
    # inherited in full
    assert strict.trusted_third_parties == default.trusted_third_parties
    assert strict.domains == default.domains


@pytest.mark.parametrize("name", ["default.yaml", "strict.yaml"])
def test_shipped_policies_validate_against_the_schema(name: str) -> None:
    data = yaml.safe_load((POLICIES_DIR / name).read_text(encoding="utf-8"))
    jsonschema.validate(data, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


# -- the policies' URL fixtures (semgrep-style) -------------------------------------------------


def _fixture_cases(policy_name: str) -> list[Any]:
    # The same reader and checks as `urlvet policy test`, one pytest case per fixture.
    fixtures = load_fixtures(POLICIES_DIR / f"{policy_name}.fixtures.yaml")
    return [
        pytest.param(policy_name, case, id=f"{policy_name}:{case.line}:{case.url[:50]!r}")
        for case in fixtures.cases
    ]


_VETTERS: dict[str, Vetter] = {}


def _vetter(policy_name: str) -> Vetter:
    if policy_name not in _VETTERS:
        _VETTERS[policy_name] = Vetter(load_policy(POLICIES_DIR / f"{policy_name}.yaml"))
    return _VETTERS[policy_name]


@pytest.mark.parametrize("name", ["default", "strict"])
def test_fixture_files_are_well_formed_and_substantial(name: str) -> None:
    cases = load_fixtures(POLICIES_DIR / f"{name}.fixtures.yaml").cases
    assert len(cases) >= 25
    assert all(case.decision is not None for case in cases)


@pytest.mark.parametrize(
    ("policy_name", "case"), _fixture_cases("default") + _fixture_cases("strict")
)
def test_policy_fixture(policy_name: str, case: FixtureCase) -> None:
    verdict = _vetter(policy_name).vet_offline(case.url, case.as_server(), message=case.message)
    assert check_case(case, verdict) == ()


# -- loading: extends, merging, TOML, overrides, select/ignore ----------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_extends_joins_additive_lists_and_replaces_scalars(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "base.yaml",
        "extends: none\n"
        "domains:\n  blocked: [a.example]\ntrusted_third_parties: [auth.a.example]\n"
        "limits: {max_url_length: 500}\nignore: [UV107]\n",
    )
    child = _write(
        tmp_path,
        "team.yaml",
        "extends: base.yaml\ndomains:\n  blocked: [b.example, a.example]\n"
        "trusted_third_parties: [auth.b.example]\nlimits: {max_url_length: 600}\n"
        "ignore: [UV205]\n",
    )
    policy = load_policy(child)
    assert policy.domains.blocked == ["a.example", "b.example"]
    assert policy.trusted_third_parties == ["auth.a.example", "auth.b.example"]
    assert policy.ignore == ["UV107", "UV205"]
    assert policy.limits.max_url_length == 600


def test_extends_the_shipped_default(tmp_path: Path) -> None:
    (tmp_path / "default.yaml").write_text(
        (POLICIES_DIR / "default.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    child = _write(
        tmp_path, "team.yaml", "extends: default.yaml\ndomains: {blocked: [evil.example]}\n"
    )
    policy = load_policy(child)
    assert policy.domains.blocked == ["evil.example"]
    assert policy.domains.internal_suffixes == Policy().domains.internal_suffixes
    verdict = Vetter(policy).vet_offline("https://login.evil.example/")
    assert "UV208" in verdict.codes


def test_merge_is_deep_and_additive_only_where_declared() -> None:
    parent = {"select": ["UV1"], "domains": {"allowed": ["a"], "blocked": ["x"]}}
    child = {"select": ["UV2"], "domains": {"allowed": ["b"]}}
    assert merge(parent, child) == {
        "select": ["UV2"],
        "domains": {"allowed": ["a", "b"], "blocked": ["x"]},
    }


def test_toml_policy_loads_like_yaml(tmp_path: Path) -> None:
    toml = _write(
        tmp_path,
        "p.toml",
        'ignore = ["UV107"]\n[thresholds]\nwarn = "medium"\nblock = "critical"\n'
        '[domains]\nblocked = ["evil.example"]\n',
    )
    yml = _write(
        tmp_path,
        "p.yaml",
        "ignore: [UV107]\nthresholds: {warn: medium, block: critical}\n"
        "domains: {blocked: [evil.example]}\n",
    )
    assert load_policy(toml) == load_policy(yml)


def test_per_code_severity_overrides() -> None:
    policy = Policy(
        dns={"enabled": False}, severity={"UV101": "info", "cross-site-from-server": "high"}
    )
    vetter = Vetter(policy)
    http = vetter.vet("http://example.com/")
    assert http.findings[0].severity is Severity.INFO
    assert http.decision.value == "allow"
    cross = vetter.vet("https://other.example/", "https://mcp.example.com/")
    assert cross.decision.value == "block"


@pytest.mark.parametrize(
    ("select", "ignore", "fires", "silent"),
    [
        (["UV"], [], {"UV101", "UV201"}, set()),
        (["UV2"], [], {"UV201"}, {"UV101"}),
        (["UV201"], [], {"UV201"}, {"UV101", "UV206"}),
        (["non-public-address-literal"], [], {"UV201"}, {"UV101"}),
        (["UV"], ["UV1"], {"UV201"}, {"UV101", "UV107"}),
        (["UV"], ["plaintext-http"], {"UV201"}, {"UV101"}),
        (["UV"], ["UV20"], {"UV101"}, {"UV201", "UV206"}),
    ],
)
def test_select_and_ignore_by_code_prefix_and_name(
    select: list[str], ignore: list[str], fires: set[str], silent: set[str]
) -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, select=select, ignore=ignore))
    got = set(vetter.vet("http://0x7f.1:8080/").codes)
    assert fires <= got
    assert not silent & got


def test_policy_is_immutable_and_with_changes_validates() -> None:
    policy = Policy()
    with pytest.raises(ValidationError):
        policy.limits = None  # type: ignore[assignment,misc]
    changed = policy.with_changes(ignore=["UV107"])
    assert changed.ignore == ["UV107"]
    assert policy.ignore == []
    with pytest.raises(ValidationError):
        policy.with_changes(ignore=["UV999"])


def test_domains_in_a_policy_are_spelled_as_the_browser_spells_hosts() -> None:
    policy = Policy(domains={"blocked": ["Faß.DE.", "ＥＸＡＭＰＬＥ.org"]})
    assert policy.domains.blocked == ["xn--fa-hia.de", "example.org"]
    assert Policy(
        trusted_third_parties=["*.Okta.com", "GitHub.com/login/oauth/"]
    ).trusted_third_parties == [
        "*.okta.com",
        "github.com/login/oauth",
    ]


# -- broken policies: PolicyError naming file, line and key -------------------------------------

BROKEN: list[tuple[str, str, str]] = [
    # (file name, content, expected "file:line: key: message" fragment)
    ("unknown_key.yaml", "thresholds:\n  warn: low\nfoo: 1\n", ":3: foo: unknown key"),
    (
        "nested_unknown.yaml",
        "dns:\n  enabled: false\n  retries: 3\n",
        ":3: dns.retries: unknown key",
    ),
    (
        "bad_severity.yaml",
        "thresholds:\n  warn: low\n  block: severe\n",
        ":3: thresholds.block: Input should be 'info'",
    ),
    (
        "bad_override.yaml",
        "severity:\n  UV101: loud\n",
        ":2: severity.UV101: Input should be 'info'",
    ),
    (
        "bad_cidr.yaml",
        "networks:\n  blocked:\n  - 10.0.0.0/8\n  - 10.0.0.0/33\n",
        ":4: networks.blocked.1: '10.0.0.0/33' is not an IP network in CIDR form",
    ),
    (
        "unknown_code.yaml",
        "severity:\n  UV101: high\n  UV999: low\n",
        ":3: severity.UV999: unknown rule code 'UV999'",
    ),
    (
        "unknown_selector.yaml",
        "select: [UV1, UV9]\n",
        ":1: select.1: unknown rule code, prefix or name 'UV9'",
    ),
    (
        "bad_domain.yaml",
        "domains:\n  blocked:\n  - 'a b'\n",
        ":3: domains.blocked.0: 'a b' is not a domain",
    ),
    (
        "wildcard_domain.yaml",
        "domains:\n  blocked: ['*.evil.example']\n",
        ":2: domains.blocked.0: '*.evil.example': write the domain without '*'",
    ),
    (
        "bad_type.yaml",
        "limits:\n  max_url_length: lots\n",
        ":2: limits.max_url_length: Input should be",
    ),
    (
        "too_small.yaml",
        "limits:\n  max_url_length: 3\n",
        ":2: limits.max_url_length: Input should be greater",
    ),
    (
        "thresholds_order.yaml",
        "thresholds:\n  warn: high\n  block: low\n",
        ":1: thresholds: warn (high) must not be above block (low)",
    ),
    ("invalid.yaml", "thresholds:\n  warn: [low\n", ": invalid YAML"),
    (
        "anchor.yaml",
        "a: &x [1, 2]\nb: *x\n",
        ":1: invalid YAML: YAML anchors (&name) are not allowed",
    ),
    (
        "bomb.yaml",
        "ignore: &a [UV1, UV1]\nselect: &b [*a, *a]\n",
        "invalid YAML: YAML anchors (&name) are not allowed",
    ),
    (
        "duplicate.yaml",
        "thresholds:\n  warn: low\n  warn: high\n",
        ":3: thresholds.warn: duplicate key",
    ),
    ("not_mapping.yaml", "- UV101\n", ":1: a policy must be a mapping"),
    ("python_tag.yaml", "ignore: !!python/object/apply:os.system [echo]\n", ":1: invalid YAML"),
    (
        "unknown_key.toml",
        '[thresholds]\nwarn = "low"\nloud = true\n',
        ":3: thresholds.loud: unknown key",
    ),
    ("invalid.toml", '[thresholds]\nwarn = "low"\nblock = \n', ":3: invalid TOML"),
    ("bad_severity.toml", '[severity]\nUV101 = "loud"\n', ":2: severity.UV101: Input should be"),
    ("invalid.json", '{"ignore": [}', ":1: invalid JSON"),
]


@pytest.mark.parametrize(("name", "text", "fragment"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_policy_names_file_line_and_key(
    tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert fragment in message, message


def test_not_utf8_policy(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"thresholds:\n  warn: \xe9\n")
    with pytest.raises(PolicyError, match=r"latin1\.yaml:2: the file is not valid UTF-8"):
        load_policy(path)


def test_circular_extends(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "# a\nextends: b.yaml\n")
    _write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(PolicyError, match=r"b\.yaml:1: extends: circular 'extends' chain"):
        load_policy(tmp_path / "a.yaml")
    _write(tmp_path, "self.yaml", "extends: self.yaml\n")
    with pytest.raises(PolicyError, match="circular"):
        load_policy(tmp_path / "self.yaml")


def test_missing_extends_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "team.yaml", "ignore: []\nextends: nowhere.yaml\n")
    with pytest.raises(PolicyError, match=r"team\.yaml:2: extends: no such policy file"):
        load_policy(path)


def test_error_in_a_parent_names_the_parent(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", "limits:\n  max_url_length: 5\n")
    child = _write(tmp_path, "team.yaml", "extends: base.yaml\n")
    with pytest.raises(PolicyError, match=r"base\.yaml:2: limits\.max_url_length"):
        load_policy(child)


def test_extends_depth_is_bounded(tmp_path: Path) -> None:
    for i in range(12):
        _write(tmp_path, f"p{i}.yaml", f"extends: p{i + 1}.yaml\n")
    _write(tmp_path, "p12.yaml", "ignore: []\n")
    with pytest.raises(PolicyError, match="deep"):
        load_policy(tmp_path / "p0.yaml")


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "absent.yaml")


def test_empty_policy_file_is_the_default(tmp_path: Path) -> None:
    assert load_policy(_write(tmp_path, "empty.yaml", "")) == Policy()


def test_cli_exit_2_for_a_broken_policy(tmp_path: Path) -> None:
    path = _write(tmp_path, "team.yaml", "thresholds:\n  warn: low\nfoo: 1\n")
    runner = CliRunner()
    result = runner.invoke(
        main, ["check", "--no-dns", "--policy", str(path), "https://example.com/"]
    )
    assert result.exit_code == 2
    assert f"{path}:3: foo: unknown key" in result.stderr
    assert result.stdout == ""
    checked = runner.invoke(main, ["policy", "check", str(path)])
    assert checked.exit_code == 2
    assert f"{path}:3: foo: unknown key" in checked.stderr


# -- the committed JSON Schema ------------------------------------------------------------------


def test_committed_schema_is_fresh() -> None:
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == policy_json_schema(), (
        "src/urlvet/policies/policy.schema.json is stale: regenerate it with "
        "`urlvet policy schema > src/urlvet/policies/policy.schema.json`"
    )


def test_schema_file_is_what_the_cli_prints() -> None:
    result = CliRunner().invoke(main, ["policy", "schema"])
    assert result.exit_code == 0
    assert result.stdout == SCHEMA_FILE.read_text(encoding="utf-8")


def test_schema_rejects_what_the_loader_rejects() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"foo": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"thresholds": {"warn": "severe"}}, schema)
