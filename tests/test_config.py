"""Named built-in policies, the default base of every policy file, and where a command finds
its policy: --policy, URLVET_POLICY, the nearest .urlvet.yaml or [tool.urlvet]."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from urlvet import Decision, Policy, PolicyError, Vetter, load_policy
from urlvet.cli import main
from urlvet.config import choose_policy, find_settings
from urlvet.hsts import QUIET_AGE_WARNING_ENV, hsts_preload_list_date, stale_list_warning
from urlvet.policy import builtin_policy_path, is_policy_name, policy_sources

SHORTENER_ONLY = "domains: {shorteners: [go.example.net]}\n"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that is the root of a repository, so no file above it counts."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


# -- names and paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "is_name"),
    [
        ("default", True),
        ("strict", True),
        ("team-policy", True),
        ("strict.yaml", False),
        ("./strict", False),
        ("rules/team.yaml", False),
        ("C:\\policies\\team", False),
        ("", False),
    ],
)
def test_a_name_has_no_slash_and_no_dot(spec: str, is_name: bool) -> None:
    assert is_policy_name(spec) is is_name


def test_a_path_object_is_always_a_path(in_tmp: Path) -> None:
    (in_tmp / "strict").write_text("thresholds: {block: critical}\n", encoding="utf-8")
    assert load_policy(Path("strict")).thresholds.block.value == "critical"
    assert load_policy("strict").thresholds.block.value == "medium"  # the built-in one
    assert load_policy("./strict").thresholds.block.value == "critical"


def test_named_policies_are_the_shipped_files() -> None:
    assert load_policy("default") == Policy()
    assert load_policy("strict") == load_policy(builtin_policy_path("strict"))
    assert load_policy("strict") != Policy()


def test_an_unknown_name_lists_the_built_in_ones() -> None:
    with pytest.raises(PolicyError, match=r"'stirct' is not a built-in policy .*default, strict"):
        load_policy("stirct")


def test_the_old_file_name_of_a_built_in_policy_says_to_use_its_name(in_tmp: Path) -> None:
    with pytest.raises(PolicyError, match=r"default\.yaml: no such policy file .*'default'"):
        load_policy("default.yaml")
    team = in_tmp / "team.yaml"
    team.write_text("# ours\nextends: strict.yaml\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"team\.yaml:2: extends: .*`extends: strict`"):
        load_policy(team)


def test_extends_names_an_unknown_policy_with_file_and_line(in_tmp: Path) -> None:
    team = in_tmp / "team.yaml"
    team.write_text("thresholds: {warn: low}\nextends: defaults\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"team\.yaml:2: extends: 'defaults' is not a built-in"):
        load_policy(team)


# -- what a file without `extends` starts from ------------------------------------------------


def test_a_file_without_extends_adds_to_the_default(in_tmp: Path) -> None:
    (in_tmp / "p.yaml").write_text(SHORTENER_ONLY, encoding="utf-8")
    code, out, _ = run("check", "--no-dns", "--policy", "p.yaml", "https://bit.ly/x")
    assert (code, out.split()[0]) == (0, "WARN")
    assert "UV212" in out
    policy = load_policy("p.yaml")
    assert policy.domains.shorteners == [*Policy().domains.shorteners, "go.example.net"]
    assert policy.trusted_third_parties == Policy().trusted_third_parties


def test_extends_none_starts_from_nothing(in_tmp: Path) -> None:
    (in_tmp / "p.yaml").write_text("extends: none\n" + SHORTENER_ONLY, encoding="utf-8")
    code, out, _ = run("check", "--no-dns", "--policy", "p.yaml", "https://bit.ly/x")
    assert (code, out.split()[0]) == (0, "ALLOW")
    assert load_policy("p.yaml").domains.shorteners == ["go.example.net"]


def test_policy_check_says_what_a_file_inherits(in_tmp: Path) -> None:
    (in_tmp / "p.yaml").write_text(SHORTENER_ONLY, encoding="utf-8")
    (in_tmp / "team.yaml").write_text("extends: strict\n", encoding="utf-8")
    (in_tmp / "alone.yaml").write_text("extends: none\n", encoding="utf-8")
    code, out, _ = run("policy", "check", "p.yaml", "team.yaml", "alone.yaml", "default")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "p.yaml: ok"
    assert lines[1].startswith("  extends: default (built-in) (implied: the file has no `extends`)")
    assert lines[2] == "team.yaml: ok"
    assert lines[3].startswith("  extends: strict (built-in) -> default (built-in);")
    assert lines[4] == "alone.yaml: ok"
    assert lines[5].startswith("  extends: none: starts from nothing; its lists replace")
    assert lines[6:] == ["default: ok", "  extends: none (states every setting)"]


def test_the_chain_of_a_named_policy_ends_in_default() -> None:
    chain = [Path(s.path).name for s in policy_sources("strict")]
    assert chain == ["strict.yaml", "default.yaml"]


# -- urlvet policy show -------------------------------------------------------------------------


def test_policy_show_prints_a_built_in_policy_as_shipped() -> None:
    code, out, _ = run("policy", "show", "default")
    assert code == 0
    assert out == builtin_policy_path("default").read_text(encoding="utf-8")
    data = yaml.safe_load(out)
    assert data.pop("extends") == "none"  # the base of every other policy
    assert Policy.model_validate(data) == Policy()


def test_policy_show_resolved_prints_what_a_command_uses(in_tmp: Path) -> None:
    code, out, _ = run("policy", "show", "--resolved", "strict")
    assert code == 0
    assert Policy.model_validate(yaml.safe_load(out)) == load_policy("strict")
    assert "extends" not in yaml.safe_load(out)


def test_policy_show_of_an_unknown_name_is_a_usage_error() -> None:
    code, out, err = run("policy", "show", "lenient")
    assert (code, out) == (2, "")
    assert "'lenient' is not a built-in policy" in err


# -- where a command finds its policy --------------------------------------------------------------


def _team(root: Path, text: str = "thresholds: {block: critical}\n") -> Path:
    (root / "rules").mkdir(exist_ok=True)
    path = root / "rules" / "team.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_pyproject_names_the_policy_for_every_directory_below_it(in_tmp: Path) -> None:
    team = _team(in_tmp)
    (in_tmp / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.urlvet]\npolicy = "rules/team.yaml"\n', encoding="utf-8"
    )
    deep = in_tmp / "src" / "pkg"
    deep.mkdir(parents=True)
    choice = choose_policy(None, {}, deep)
    assert (choice.spec, choice.origin) == (team, "file")
    assert choice.describe() == f"{in_tmp / 'pyproject.toml'}:5: [tool.urlvet] policy"


def test_pyproject_may_name_a_built_in_policy(in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text('[tool.urlvet]\npolicy = "strict"\n', encoding="utf-8")
    assert choose_policy(None, {}, in_tmp).spec == "strict"


def test_a_pyproject_without_tool_urlvet_is_passed_over(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("extends: strict\n", encoding="utf-8")
    sub = in_tmp / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n", encoding="utf-8")
    assert choose_policy(None, {}, sub).spec == in_tmp / ".urlvet.yaml"


def test_the_nearest_file_wins_and_urlvet_yaml_wins_in_its_directory(in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text('[tool.urlvet]\npolicy = "strict"\n', encoding="utf-8")
    (in_tmp / ".urlvet.yml").write_text("extends: strict\n", encoding="utf-8")
    assert choose_policy(None, {}, in_tmp).spec == in_tmp / ".urlvet.yml"
    (in_tmp / ".urlvet.yaml").write_text("extends: strict\n", encoding="utf-8")
    assert choose_policy(None, {}, in_tmp).spec == in_tmp / ".urlvet.yaml"
    sub = in_tmp / "service"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.urlvet]\npolicy = "default"\n', encoding="utf-8")
    assert choose_policy(None, {}, sub).spec == "default"


def test_the_search_stops_at_the_repository_root(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("extends: strict\n", encoding="utf-8")
    inner = in_tmp / "vendored"
    (inner / ".git").mkdir(parents=True)
    assert find_settings(inner) is None
    assert choose_policy(None, {}, inner).origin == "built-in"


def test_environment_beats_files_and_the_option_beats_both(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("extends: strict\n", encoding="utf-8")
    env = {"URLVET_POLICY": "default"}
    assert choose_policy(None, env, in_tmp).origin == "environment"
    assert choose_policy("rules/x.yaml", env, in_tmp).spec == "rules/x.yaml"
    assert choose_policy(None, {"URLVET_POLICY": "  "}, in_tmp).origin == "file"


def test_the_found_policy_decides_what_check_does(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("extends: none\n" + SHORTENER_ONLY, encoding="utf-8")
    code, out, _ = run("check", "--no-dns", "https://bit.ly/x")
    assert (code, out.split()[0]) == (0, "ALLOW")
    code, out, _ = run("check", "--no-dns", "https://bit.ly/x", env={"URLVET_POLICY": "default"})
    assert out.split()[0] == "WARN"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[tool.urlvet]\npolicy = "strict"\nselect = ["UV1"]\n',
            ":3: tool.urlvet.select: unknown key",
        ),
        ("[tool.urlvet]\npolicy = 3\n", ":2: tool.urlvet.policy: must name a built-in policy"),
        ("[tool.urlvet]\n", ":1: tool.urlvet.policy: must name a built-in policy"),
        ('[tool]\nurlvet = "strict"\n', ":1: tool.urlvet: must be a table"),
        ("[tool.urlvet\n", ":1: invalid TOML"),
    ],
)
def test_a_broken_tool_urlvet_table_is_an_error_naming_file_line_and_key(
    in_tmp: Path, text: str, message: str
) -> None:
    (in_tmp / "pyproject.toml").write_text(text, encoding="utf-8")
    code, out, err = run("check", "--no-dns", "https://example.com/")
    assert (code, out) == (2, "")
    assert f"{in_tmp / 'pyproject.toml'}{message}" in err


def test_a_broken_found_policy_names_its_file_and_line(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("thresholds: {warn: low}\nselct: [UV1]\n", "utf-8")
    code, _, err = run("check", "--no-dns", "https://example.com/")
    assert code == 2
    assert f"{in_tmp / '.urlvet.yaml'}:2: selct: unknown key" in err


def test_show_settings_says_which_file_chose_the_policy(in_tmp: Path) -> None:
    team = _team(in_tmp, "extends: strict\nignore: [UV107]\n")
    (in_tmp / "pyproject.toml").write_text(
        '[tool.urlvet]\npolicy = "rules/team.yaml"\n', encoding="utf-8"
    )
    code, out, _ = run("check", "--show-settings", "--no-dns")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"Settings: {in_tmp / 'pyproject.toml'}:2: [tool.urlvet] policy"
    assert lines[1] == f"Policy: {team}"
    assert lines[2] == f"Files: {team} -> strict (built-in) -> default (built-in)"
    assert lines[3] == "Changed by command-line options: dns"
    resolved = yaml.safe_load("\n".join(lines[5:]))
    assert resolved["ignore"] == ["UV107"]
    assert resolved["thresholds"] == {"warn": "low", "block": "medium"}
    assert resolved["dns"]["enabled"] is False


def test_show_settings_without_any_configuration(in_tmp: Path) -> None:
    code, out, _ = run("audit", "--show-settings", "-")
    assert code == 0
    assert out.splitlines()[0].startswith("Settings: no --policy, no URLVET_POLICY")
    assert out.splitlines()[2] == "Files: default (built-in)"


def test_check_without_urls_is_a_usage_error(in_tmp: Path) -> None:
    code, _, err = run("check", "--no-dns")
    assert code == 2
    assert "Missing argument 'URLS...'" in err


# -- the age of the HSTS preload list ------------------------------------------------------------


def test_a_list_over_a_year_old_gets_a_warning() -> None:
    assert stale_list_warning("2025-01-01", date(2025, 12, 31)) is None
    assert stale_list_warning("2025-01-01", date(2026, 1, 1)) is None  # 365 days
    warning = stale_list_warning("2025-01-01", date(2026, 1, 2))
    assert warning is not None
    assert "from 2025-01-01, 366 days old" in warning
    assert QUIET_AGE_WARNING_ENV in warning
    assert stale_list_warning("2025.1.1rc1", date(2030, 1, 1)) is None


def test_check_and_audit_warn_once_about_the_shipped_list(in_tmp: Path) -> None:
    expected = stale_list_warning(hsts_preload_list_date(), date.today())
    env = {QUIET_AGE_WARNING_ENV: ""}
    (in_tmp / "urls.txt").write_text("https://example.com/\nhttps://example.org/\n", "utf-8")
    for args in (
        ("check", "--no-dns", "https://example.com/", "https://example.org/"),
        ("audit", "--no-dns", "--no-progress", "urls.txt"),
    ):
        code, _, err = run(*args, env=env)
        assert code == 0
        if expected is None:
            assert "HSTS preload list" not in err
        else:
            assert err.count(f"urlvet: warning: {expected}") == 1
        _, _, quiet = run(*args, env={QUIET_AGE_WARNING_ENV: "1"})
        assert "HSTS preload list" not in quiet


def test_vetting_with_a_found_policy_is_the_same_as_naming_it(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yaml").write_text("extends: strict\n", encoding="utf-8")
    found = load_policy(choose_policy(None, {}, in_tmp).spec)
    verdict = Vetter(found.with_changes(dns={"enabled": False})).vet("https://8.8.8.8/")
    assert verdict.decision is Decision.BLOCK  # strict blocks a public IP literal (medium)


def test_show_settings_shows_the_tls_options_applied(in_tmp: Path) -> None:
    code, out, _ = run("check", "--show-settings", "--tls")
    assert code == 0
    assert "Changed by command-line options: tls" in out
    resolved = yaml.safe_load(out.split("Resolved policy:\n", 1)[1])
    assert resolved["tls"]["probe"] is True


def test_the_proxy_shows_its_settings_without_starting_the_server(in_tmp: Path) -> None:
    (in_tmp / ".urlvet.yml").write_text("extends: strict\n", encoding="utf-8")
    marker = in_tmp / "started"
    code, out, _ = run("proxy", "--show-settings", "--", "touch", str(marker))
    assert code == 0
    assert out.splitlines()[0] == f"Settings: {in_tmp / '.urlvet.yml'}"
    assert not marker.exists()
