"""Coverage-guided fuzzing of parsing and vetting (atheris / libFuzzer).

    python tests/fuzz/fuzz_vet.py -runs=20000 SEED_DIR        # tests/fuzz/run_fuzz.sh does this

One input is: a byte choosing the server, a byte of flags, then the URL. The URL bytes are
decoded as UTF-8 with ``surrogatepass`` (so lone surrogates occur), or handed to the API as
bytes; with a flag, text after a blank line is the server's message. Each input goes through
the WHATWG parse, ``Vetter.vet_offline``, the consent summary and its renderings, and the MCP
hook; the laws checked are those the public API documents:

- ``urlvet.url.parse`` raises only ``InvalidURL``; ``vet_offline`` never raises for any URL;
- the decision is one of allow/warn/block, and the same input gives the same verdict;
- the consent renderings never raise, and the HTML card never contains a script tag;
- the hook answers every line (``answer_line`` never raises).

Any other exception is a crash: libFuzzer stops and writes the input to ``crash-*``.
"""

from __future__ import annotations

import contextlib
import json
import sys

import atheris

with atheris.instrument_imports(include=["urlvet"]):
    from urlvet import Decision, Policy, Vetter
    from urlvet.consent import summarize
    from urlvet.mcp import answer_line
    from urlvet.server import as_server
    from urlvet.url import InvalidURL, parse

VETTER = Vetter(Policy(dns={"enabled": False}))
SERVERS = (
    None,
    "stdio",
    "https://mcp.example.com/mcp",
    "http://127.0.0.1:8765/mcp",
    "https://a.github.io/mcp",
    "https://mcp.xn--mnchen-3ya.de/",
)
SERVER_OBJECTS = tuple(as_server(s) for s in SERVERS)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    server = SERVER_OBJECTS[data[0] % len(SERVER_OBJECTS)]
    flags = data[1]
    body = data[2:]
    text = _decode(body)
    message = None
    if flags & 1:
        text, _, message = text.partition("\n\n")
    url: str | bytes = body if flags & 2 else text

    if isinstance(url, str):
        with contextlib.suppress(InvalidURL):
            parse(url)

    verdict = VETTER.vet_offline(url, server, message=message)
    if verdict.decision not in (Decision.ALLOW, Decision.WARN, Decision.BLOCK):
        raise AssertionError(f"bad decision {verdict.decision!r}")
    again = VETTER.vet_offline(url, server, message=message)
    if again != verdict:
        raise AssertionError("the same input gave two verdicts")

    summary = summarize(verdict, server, message)
    summary.to_text()
    summary.to_markdown()
    summary.to_json()
    if "<script" in summary.to_html().lower():
        raise AssertionError("a script tag reached the HTML card")

    if flags & 4:
        rpc = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {"mode": "url", "url": text, "message": message or "", "elicitationId": "e"},
        }
        answer_line(json.dumps(rpc), VETTER, server)
    if flags & 8:
        answer_line(body, VETTER, server)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
