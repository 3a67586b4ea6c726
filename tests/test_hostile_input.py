"""Hostile input through the public commands: a clear finding or error, the verdict it would
have had, never a traceback; and the linear scanners find exactly what the patterns they
replace found (those patterns are the oracle here: they cost their input's length squared).

Time is measured in ``bench/adversarial_bench.py``, never here.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from support import OFFLINE
from urlvet import Decision, PolicyError
from urlvet.audit.output import redact as redaction
from urlvet.audit.scan import urls_in_text
from urlvet.checks.addresses import embedded_addresses
from urlvet.cli import main
from urlvet.policy import load_policy


def invoke(*args: str, stdin: str | None = None) -> Any:
    result = CliRunner().invoke(main, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def audit_jsonl(path: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    result = invoke("audit", "--no-dns", "--no-progress", "--format", "jsonl", *extra, str(path))
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def _elicit(url: str, msg_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "elicitation/create",
        "params": {"mode": "url", "url": url, "message": "Sign in", "elicitationId": f"e{msg_id}"},
    }


# -- through the commands -------------------------------------------------------------------


def test_a_query_of_percent_signs_keeps_its_verdict_in_an_audit(tmp_path: Path) -> None:
    urls = [f"https://h{i}.example/?x=1&{'%' * 2000}" for i in range(20)]
    (tmp_path / "p.urls").write_text("\n".join(urls) + "\n", encoding="utf-8")
    code, records = audit_jsonl(tmp_path / "p.urls")
    assert code == 0
    assert [r["url"] for r in records] == urls
    assert [r["decision"] for r in records] == [OFFLINE.vet(u).decision.value for u in urls]


@pytest.mark.parametrize("run", [8_000, 64_000], ids=["8000", "64000"])
def test_a_nip_io_name_after_a_run_of_hyphens_is_blocked_by_check_and_hook(run: int) -> None:
    url = "https://" + "-" * run + "g.nip.io/"
    checked = invoke("check", "--no-dns", "--format", "json", url)
    (verdict,) = json.loads(checked.stdout)
    assert verdict["decision"] == "block"
    assert "UV204" in [f["code"] for f in verdict["findings"]]
    hooked = invoke("hook", "--no-dns", "--server", "stdio", stdin=json.dumps(_elicit(url)) + "\n")
    assert '"decision":"block"' in hooked.stdout.replace(" ", "")


@pytest.mark.parametrize(
    ("tail", "name"), [(")" * 128_000, "p.log"), ("." * 1_000_000, "d.log")], ids=["parens", "dots"]
)
def test_trailing_punctuation_after_a_url_in_a_log_line_is_left_out(
    tmp_path: Path, tail: str, name: str
) -> None:
    # Free text, and the text path of the JSON Lines reader.
    for suffix, kind in ((name, "text"), (name.replace(".log", ".jsonl"), "jsonl")):
        path = tmp_path / suffix
        path.write_text("see https://a.example/x" + tail + "\n", encoding="utf-8")
        code, records = audit_jsonl(path, "--input-kind", kind)
        assert code == 0
        assert [(r["column"], r["url"]) for r in records] == [(5, "https://a.example/x")]


def test_a_log_line_over_the_line_limit_is_reported_before_it_is_scanned(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_text("see https://a.example/x" + "." * 2_000_000 + "\n", encoding="utf-8")
    code, records = audit_jsonl(path, "--input-kind", "text")
    assert code == 2
    assert [r.get("code") for r in records] == ["line-too-long"]


def test_thousands_of_escaped_urls_in_one_json_line_are_each_found_where_written(
    tmp_path: Path,
) -> None:
    requests = [_elicit(f"https://e{i}.example/p", i) for i in range(3000)]
    line = json.dumps(requests).replace("/", "\\/")
    (tmp_path / "e.jsonl").write_text(line + "\n", encoding="utf-8")
    code, records = audit_jsonl(tmp_path / "e.jsonl")
    assert code == 0
    assert [r["url"] for r in records] == [f"https://e{i}.example/p" for i in range(3000)]
    for r in records:
        written = line[r["column"] - 1 :]
        assert json.loads('"' + written[: written.index('"')] + '"') == r["url"]


def test_every_one_of_thousands_of_token_parameters_is_redacted(tmp_path: Path) -> None:
    query = "".join(f"token=v{i:05d}&" for i in range(20_000))
    (tmp_path / "t.urls").write_text(f"https://example.com/?{query}\n", encoding="utf-8")
    code, (record,) = audit_jsonl(tmp_path / "t.urls")
    assert code == 1  # over the length limit (UV105)
    assert record["url"].count("token=REDACTED") == 20_000
    assert not re.search(r"v\d{5}", json.dumps(record))


def test_a_userinfo_before_a_long_run_of_letters_and_digits_is_redacted(tmp_path: Path) -> None:
    path = tmp_path / "u.log"
    path.write_text("see https://user:s3cret@" + "a1" * 32_000 + ".example/\n", encoding="utf-8")
    _, (record,) = audit_jsonl(path, "--input-kind", "text")
    assert "s3cret" not in json.dumps(record)
    assert record["url"].startswith("https://user:REDACTED@a1a1")


def test_a_toml_key_of_thousands_of_parts_is_a_policy_error_naming_the_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text('[dns]\nenabled = false\nx = "a.b.c"\n' + ".".join(["a"] * 25_000) + " = 1\n")
    result = invoke("policy", "check", str(path))
    assert result.exit_code == 2
    assert f"{path}:4: a key of more than 64 dotted parts" in result.stderr
    with pytest.raises(PolicyError, match="dotted parts"):
        load_policy(path)


def test_a_toml_policy_with_dotted_strings_and_comments_is_read(tmp_path: Path) -> None:
    # Dots in strings and comments are no key's: only keys are bounded.
    dotted = ".".join(["a"] * 100)
    path = tmp_path / "ok.toml"
    path.write_text(
        f"# {dotted}\n[dns]\nenabled = false\n[domains]\n"
        f'blocked = ["x.{dotted}.example"]  # {dotted}\n'
        f"allowed = ['''\ny.{dotted}.test''']\n",
        encoding="utf-8",
    )
    policy = load_policy(path)
    assert policy.domains.blocked == [f"x.{dotted}.example"]
    assert policy.domains.allowed == [f"y.{dotted}.test"]


def test_a_policy_that_exhausts_memory_is_a_policy_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing real exhausts memory on demand on a shared machine: the parser is made to.
    import tomllib

    def exhausted(text: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(tomllib, "loads", exhausted)
    path = tmp_path / "p.toml"
    path.write_text("[dns]\nenabled = false\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=re.escape(f"{path}: the policy file takes more memory")):
        load_policy(path)


def test_a_gzip_feed_of_blank_lines_is_read_as_empty(tmp_path: Path) -> None:
    (tmp_path / "blank.gz").write_bytes(gzip.compress(b"\n \r\n" * (4 << 20), 9))
    (tmp_path / "bad.txt").write_text("evil.example\n", encoding="utf-8")
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "dns: {enabled: false}\ndomains: {blocked_files: [blank.gz, bad.txt]}\n", encoding="utf-8"
    )
    assert invoke("policy", "check", str(policy)).exit_code == 0
    checked = invoke("check", "--policy", str(policy), "--format", "json", "https://evil.example/")
    assert "UV208" in [f["code"] for f in json.loads(checked.stdout)[0]["findings"]]


def test_a_csv_feed_field_over_the_csv_limit_is_a_policy_error_naming_the_line(
    tmp_path: Path,
) -> None:
    field = ("a" * 60_000 + "\n") * 3
    (tmp_path / "f.csv").write_text(f'id,url\n1,"{field}"\n2,https://x.example/\n')
    policy = tmp_path / "p.yaml"
    policy.write_text("urls: {blocked_files: [{path: f.csv, format: csv, column: url}]}\n")
    result = invoke("policy", "check", str(policy))
    assert result.exit_code == 2
    assert re.search(
        r"f\.csv:\d+: not readable as CSV \(field larger than field limit", result.stderr
    )
    assert "Traceback" not in result.stderr


def test_json_nested_too_deeply_in_a_json_lines_input_is_a_diagnostic(tmp_path: Path) -> None:
    deep = '{"url":' * 100_000 + "1" + "}" * 100_000
    logged = json.dumps({"ts": 1, "message": '{"url":' * 5_000 + "1" + "}" * 5_000})
    path = tmp_path / "d.jsonl"
    path.write_text(f"{deep}\n{logged}\n{json.dumps(_elicit('http://10.0.0.1/'))}\n")
    code, records = audit_jsonl(path)
    assert code == 2
    assert [r.get("code") for r in records[:2]] == ["json-too-deep", "json-too-deep"]
    assert [r["line"] for r in records] == [1, 2, 3]
    assert records[2]["decision"] == "block"


def test_a_baseline_nested_too_deeply_is_an_input_error(tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    baseline.write_text('{"urlvet_baseline": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "a.urls").write_text("https://a.example/\n", encoding="utf-8")
    result = invoke("audit", "--no-dns", "--baseline", str(baseline), str(tmp_path / "a.urls"))
    assert result.exit_code == 2
    assert "nested too deeply to be a baseline" in result.stderr


def test_many_secrets_never_leave_part_of_one_readable() -> None:
    secrets = [f"secret{i:03d}value" for i in range(20)] + ["xabc", "abcdefgh"]
    text = "quoted: " + " ".join(secrets) + " and xabcdefgh and " + "secret007value" * 3
    masked = redaction.redact(text, frozenset(secrets))
    assert not any(s in masked for s in secrets)
    assert "defgh" not in masked  # the overlap of two secrets is masked whole
    assert masked.startswith("quoted: REDACTED")


# -- the linear scanners find what the patterns they replace found ---------------------------

OLD_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*:[/\\]*[^/\\?#@\s:\"'<>]*:)(?P<value>[^/\\?#\s\"'<>]*)@"
)
OLD_USERNAME = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*:[/\\]+)(?P<value>[^/\\?#@\s:\"'<>]+)@"
)
OLD_V6 = re.compile(r"(?<![^.])([0-9a-f-]*--[0-9a-f-]*|(?:[0-9a-f]{1,4}-){7}[0-9a-f]{1,4})(?![^.])")
URLISH = st.text(alphabet="aB1:/@?#&=;.-+ %\\\"'<>tokpasx", max_size=40)


@settings(max_examples=1000, deadline=None)
@given(URLISH)
def test_userinfo_redaction_is_the_patterns(text: str) -> None:
    without_parameters = text.replace("=", "")  # only the userinfo patterns apply
    assert redaction.redact(without_parameters) == _old_redact_userinfo(without_parameters)
    expected = {m.group("value") for m in OLD_PASSWORD.finditer(text) if m.group("value")}
    found = {text[b:e] for _, b, e in redaction._password_spans(text) if e > b}
    assert found == expected


def _old_redact_userinfo(text: str) -> str:
    if "@" not in text:
        return text
    out = OLD_PASSWORD.sub(
        lambda m: f"{m.group('head')}{redaction.REDACTED if m.group('value') else ''}@", text
    )
    return OLD_USERNAME.sub(
        lambda m: (
            f"{m.group('head')}{redaction.REDACTED}@"
            if redaction.looks_like_token(m.group("value"))
            else m.group(0)
        ),
        out,
    )


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="0123456789abcdefg-.", max_size=48))
def test_ipv6_addresses_in_names_are_the_patterns(name: str) -> None:
    import ipaddress

    expected = []
    for m in OLD_V6.finditer(name):
        try:
            expected.append(ipaddress.IPv6Address(m.group(1).replace("-", ":")))
        except ValueError:
            continue
    assert [a for a in embedded_addresses(name) if a.version == 6] == expected


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="a/()[]{}.,;:!?*\\", max_size=30))
def test_a_urls_trailing_punctuation_is_cut_as_before(tail: str) -> None:
    url = "https://a.example/" + tail
    expected = url  # the loop the one walk back replaced, one character at a time
    closers = {")": "(", "]": "[", "}": "{"}
    while expected[-1] in ".,;:!?*\\" or (
        expected[-1] in closers
        and expected.count(expected[-1]) > expected.count(closers[expected[-1]])
    ):
        expected = expected[:-1]
    assert [found for _, found in urls_in_text("see " + url)] == [expected]


def test_the_verdict_on_a_hostile_host_is_unchanged_by_the_linear_scanners() -> None:
    assert OFFLINE.vet("https://" + "-" * 4000 + "1-2-3-4--.nip.io/").decision is Decision.BLOCK
    assert "UV204" in OFFLINE.vet("https://fe80--1.sslip.io/").codes


def test_a_first_line_longer_than_the_sniffed_head_decides_the_input_kind(tmp_path: Path) -> None:
    text = tmp_path / "a.log"
    text.write_text("see https://a.example/x" + ")" * 20_000 + "\n", encoding="utf-8")
    message = _elicit("http://10.0.0.1/") | {"pad": "x" * 20_000}
    jsonl = tmp_path / "b.log"
    jsonl.write_text(json.dumps(message) + "\n", encoding="utf-8")
    url = tmp_path / "c.log"
    url.write_text("https://a.example/" + "a" * 20_000 + "\n", encoding="utf-8")
    kinds = [audit_jsonl(p)[1][0]["input"] for p in (text, jsonl, url)]
    assert kinds == ["text", "mcp:elicitation/create", "url-list"]
