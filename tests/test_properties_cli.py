"""Laws for every input, across the command line and the public API beyond ``vet``.

The CLI never shows a traceback and always exits 0, 1 or 2; the hook, consent, audit and
policy entry points never raise for hostile input (only the documented error types); the same
input gives the same output. tests/test_properties.py holds the laws of ``vet`` itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import OFFLINE
from urlvet.cli import main
from urlvet.consent import ConsentSummary, summarize
from urlvet.errors import InputError, PolicyError
from urlvet.mcp import HookAnswer, answer, answer_line, hook_lines
from urlvet.policy import load_policy

SETTINGS = settings(
    max_examples=int(os.environ.get("URLVET_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# URL-ish text: pieces that exercise parsing (schemes, userinfo, IP spellings, IDNs, controls,
# bidi, surrogates) glued together, besides plain random text.
_PIECES = st.sampled_from(
    [
        "https://", "http://", "javascript:", "data:,", "file:///", "//", "@", ":", "/", "\\",
        "?", "#", "%", "%2e", "%00", ".", "。", "[", "]", "::ffff:", "127.0.0.1", "0x7f",
        "2130706433", "xn--", "xn--80ak6aa92e", "аррӏе", "münchen", "localhost", "nip.io",
        "example.com", "evil.example", "\x00", "\t", "\n", "\u202e", "\u200b", "\ufeff",
        "\ud800", "ß", "\u2044", "ｅｘａｍｐｌｅ", "a" * 70,
    ]
)  # fmt: skip
URLS = st.one_of(st.text(max_size=200), st.lists(_PIECES, max_size=12).map("".join))
SERVERS = st.sampled_from(
    ["stdio", "https://mcp.example.com/mcp", "http://127.0.0.1:8000/mcp", "not a server", ""]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
    | URLS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(
            ["jsonrpc", "id", "method", "params", "result", "error", "code", "data", "url",
             "message", "mode", "elicitationId", "elicitations", "inputRequests", "type",
             "interaction", "resultType", "requestState"]
        ) | st.text(max_size=8),
        children,
        max_size=6,
    ),
    max_leaves=20,
)  # fmt: skip
METHODS = st.sampled_from(["elicitation/create", "interaction/create", "tools/call", ""])


def _rpc(method: str, url: str, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"mode": "url", "url": url, "message": message, "elicitationId": "e1"},
    }


def _clean_exit(result: Result) -> None:
    """Exit 0, 1 or 2 and no traceback, whatever the input."""
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


# -- the command line ---------------------------------------------------------------------------


@SETTINGS
@given(
    urls=st.lists(URLS, min_size=1, max_size=3),
    server=SERVERS,
    fmt=st.sampled_from(["text", "json"]),
)
def test_check_never_shows_a_traceback(urls: list[str], server: str, fmt: str) -> None:
    args = ["check", "--no-dns", "--format", fmt, "--server", server, "--", *urls]
    result = CliRunner().invoke(main, args)
    _clean_exit(result)
    if result.exit_code != 2 and fmt == "json":
        data = json.loads(result.stdout)
        assert [d["url"] for d in data] == urls
        assert {d["decision"] for d in data} <= {"allow", "warn", "block"}


@SETTINGS
@given(url=URLS, server=SERVERS)
def test_check_gives_the_same_output_for_the_same_input(url: str, server: str) -> None:
    args = ["check", "--no-dns", "--format", "json", "--server", server, "--", url]
    first, second = CliRunner().invoke(main, args), CliRunner().invoke(main, args)
    assert (first.exit_code, first.stdout) == (second.exit_code, second.stdout)


@SETTINGS
@given(
    url=URLS,
    server=SERVERS,
    message=st.text(max_size=300),
    fmt=st.sampled_from(["text", "markdown", "html", "json"]),
)
def test_consent_never_shows_a_traceback(url: str, server: str, message: str, fmt: str) -> None:
    args = ["consent", "--no-dns", "--server", server, "--message", message, "--format", fmt]
    result = CliRunner().invoke(main, [*args, "--", url])
    _clean_exit(result)
    if result.exit_code != 2 and fmt == "html":
        assert "<script" not in result.stdout.lower()


@SETTINGS
@given(
    lines=st.lists(
        st.one_of(
            st.text(max_size=200),
            JSON.map(lambda j: json.dumps(j)),
            st.tuples(METHODS, URLS, st.text(max_size=50)).map(lambda t: json.dumps(_rpc(*t))),
        ),
        max_size=5,
    )
)
def test_hook_answers_every_line_with_one_json_line(lines: list[str]) -> None:
    lines = [ln.replace("\r", " ").replace("\n", " ") for ln in lines]
    # Lone surrogates reach a real pipe as the bytes they encode to (what a buggy client sends).
    stdin = "".join(ln + "\n" for ln in lines).encode("utf-8", "surrogatepass")
    result = CliRunner().invoke(main, ["hook", "--no-dns", "--server", "stdio"], input=stdin)
    _clean_exit(result)
    assert result.exit_code == 0
    out = [ln for ln in result.stdout.splitlines() if ln.strip()]
    # One answer per line that is not blank (ASCII whitespace: the hook reads bytes).
    assert len(out) == sum(1 for ln in lines if ln.encode("utf-8", "surrogatepass").strip())
    for ln in out:
        assert isinstance(json.loads(ln), dict)


@SETTINGS
@given(text=st.one_of(st.text(max_size=400), st.lists(URLS, max_size=6).map("\n".join)))
def test_audit_of_any_text_on_stdin_never_shows_a_traceback(text: str) -> None:
    for kind in ("urls", "text", "jsonl"):
        result = CliRunner().invoke(
            main,
            ["audit", "--no-dns", "--no-progress", "--input-kind", kind, "-"],
            input=text.encode("utf-8", "surrogatepass"),
        )
        _clean_exit(result)


@SETTINGS
@given(data=st.binary(max_size=300))
def test_audit_of_any_bytes_never_shows_a_traceback(data: bytes) -> None:
    result = CliRunner().invoke(main, ["audit", "--no-dns", "--no-progress", "-"], input=data)
    _clean_exit(result)


@SETTINGS
@given(code=st.text(max_size=12))
def test_rule_lookup_never_shows_a_traceback(code: str) -> None:
    _clean_exit(CliRunner().invoke(main, ["rule", "--", code]))


@SETTINGS
@given(text=st.one_of(st.text(max_size=300), JSON.map(json.dumps)))
def test_policy_check_of_any_file_exits_0_or_2(text: str, tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("policy")
    for name in ("p.yaml", "p.toml"):
        f = folder / name
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        result = CliRunner().invoke(main, ["policy", "check", str(f)])
        _clean_exit(result)
        assert result.exit_code in (0, 2)


@SETTINGS
@given(lines=st.lists(st.one_of(st.text(max_size=120), JSON.map(json.dumps)), max_size=4))
def test_eval_of_any_case_file_exits_0_or_2(lines: list[str], tmp_path_factory: Any) -> None:
    f = tmp_path_factory.mktemp("eval") / "cases.jsonl"
    f.write_text(
        "\n".join(ln.replace("\n", " ") for ln in lines), encoding="utf-8", errors="surrogatepass"
    )
    result = CliRunner().invoke(main, ["eval", "--no-misses", str(f)])
    _clean_exit(result)
    assert result.exit_code in (0, 2)


# -- the public API beyond vet -------------------------------------------------------------------


@SETTINGS
@given(message=JSON)
def test_hook_answer_to_any_decoded_message_never_raises(message: Any) -> None:
    a = answer(message, OFFLINE, "stdio")
    assert isinstance(a, HookAnswer)
    json.dumps(a.to_json_dict())


@SETTINGS
@given(method=METHODS, url=URLS, message=st.text(max_size=80), server=SERVERS)
def test_hook_answer_to_url_requests_never_raises(
    method: str, url: str, message: str, server: str
) -> None:
    try:
        a = answer(_rpc(method, url, message), OFFLINE, server)
    except InputError:
        assert server in ("not a server", "")  # only an invalid configured server raises
        return
    assert isinstance(a, HookAnswer)
    again = answer(_rpc(method, url, message), OFFLINE, server)
    assert a.to_json_dict() == again.to_json_dict()


@SETTINGS
@given(line=st.one_of(st.text(max_size=300), st.binary(max_size=300)))
def test_hook_answer_line_never_raises(line: str | bytes) -> None:
    assert isinstance(answer_line(line, OFFLINE, "stdio"), HookAnswer)
    assert all(isinstance(x, str) for x in hook_lines([line], OFFLINE, "stdio"))


@SETTINGS
@given(url=URLS, server=SERVERS, message=st.one_of(st.none(), st.text(max_size=300)))
def test_consent_summary_and_renderings_never_raise(
    url: str, server: str, message: str | None
) -> None:
    try:
        verdict = OFFLINE.vet_offline(url, server, message=message)
    except InputError:
        return
    from urlvet.server import as_server

    summary = summarize(verdict, as_server(server), message)
    assert isinstance(summary, ConsentSummary)
    for text in (summary.to_text(), summary.to_text(colour=True), summary.to_markdown()):
        assert isinstance(text, str)
    html = summary.to_html()
    assert "<script" not in html.lower()
    json.loads(summary.to_json())


@SETTINGS
@given(text=st.text(max_size=500))
def test_policy_loader_raises_only_policy_errors(text: str, tmp_path_factory: Any) -> None:
    folder: Path = tmp_path_factory.mktemp("load")
    for name in ("p.yaml", "p.toml", "p.json"):
        f = folder / name
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            policy = load_policy(f)
        except PolicyError:
            continue
        policy.compiled  # noqa: B018 - compiling must not raise for a valid policy


@SETTINGS
@given(message=JSON, text=st.text(max_size=400))
def test_audit_extractors_never_raise(message: Any, text: str) -> None:
    from urlvet.audit import urls_in_text
    from urlvet.mcp.wire import url_requests

    url_requests(message)
    for col, url in urls_in_text(text):
        assert isinstance(col, int)
        assert isinstance(url, str)
