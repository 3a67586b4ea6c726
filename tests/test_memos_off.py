"""Verdicts with every shortcut on are those with every memo off (the reference).

The reference runs in a process of its own with ``URLVET_MEMOS=off`` (see
``support.reference``): no functools cache, no host cache, no plain or query shape. The input
is what makes a shortcut share an answer it must not: hostile tails of duplicated parameters,
escapes in one to three rounds, long runs and every redirect parameter, on a redirector, a
sign-in page and a shortener, under the default, the strict and a custom policy with feeds.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from support.reference import SRC, TESTS, Case, reference_case_verdicts, reference_verdicts
from urlvet import Decision, Policy, Vetter
from urlvet.checks.redirects import REDIRECT_PARAMETERS
from urlvet.evaluate import default_corpus_files, load_cases
from urlvet.policy import load_policy
from urlvet.server import as_server

ROOT = Path(__file__).resolve().parent.parent
OFFLINE: dict[str, Any] = {"dns": {"enabled": False}}
SERVERS: list[str | None] = [None, "stdio", "https://mcp.example.com/mcp"]

# The URLs that a memo handing out one object for two equal parameters once let through.
SHARED_PARAMETER_URLS = [
    "https://www.google.com/url?url=https://www.google.com/url?q=javascript:alert(1)"
    "&url=https://www.google.com/url?q=javascript:alert(1)",
    "https://www.google.com/url?q=http://10.0.0.1/&q=http://10.0.0.1/",
    "https://www.google.com/url?url=https://www.google.com/url?q=javascript:alert(1)",
]

HEADS = [
    "https://www.google.com/url",
    "https://accounts.example.com/login",
    "https://bit.ly/3Kx9TqZ",
    "https://www.facebook.com/l.php",
    "http://203.0.113.9/go",
]
DESTINATIONS = [
    "javascript:alert(1)",
    "http://10.0.0.1/",
    "http://localhost:8080/cb",
    "https://xn--pypal-4ve.com/signin",
    "https://www.google.com/url?q=javascript:alert(1)",
    "https://www.google.com/url?q=http://169.254.169.254/",
    "https://evil.example/",
    "https://example.org/ok",
    "https://bit.ly/abc",
]
PARAMETERS = sorted(REDIRECT_PARAMETERS | {"q", "token", "utm_source", "redirect%5Furi"})


def _encoded(text: str, rounds: int) -> str:
    for _ in range(rounds):
        text = quote(text, safe="")
    return text


def hostile_urls(count: int, seed: int) -> list[str]:
    """URLs with hostile tails: duplicated parameters, escapes in one to three rounds, long
    runs, every redirect parameter."""
    rng = random.Random(seed)
    out: dict[str, None] = dict.fromkeys(SHARED_PARAMETER_URLS)
    for name in PARAMETERS:  # every redirect parameter, each destination, each head
        for head in HEADS:
            out[f"{head}?{name}={_encoded(rng.choice(DESTINATIONS), rng.randint(0, 3))}"] = None
    while len(out) < count:
        head = rng.choice(HEADS)
        parts: list[str] = []
        for _ in range(rng.randint(1, 4)):
            name = rng.choice(PARAMETERS)
            value = _encoded(rng.choice(DESTINATIONS), rng.randint(0, 3))
            part = f"{name}={value}"
            parts += [part] * rng.choice((1, 1, 2, 3))  # the same parameter again
        shape = rng.randrange(4)
        if shape == 1:  # a long run
            parts.insert(rng.randrange(len(parts) + 1), "x=" + rng.choice("%a-.)=") * 300)
        elif shape == 2:  # many short parameters
            parts += [f"id{i}=%2{i % 10}" for i in range(rng.randint(10, 60))]
        elif shape == 3:  # escapes in the name and a fragment
            parts.append("%6E%65%78%74=" + _encoded(rng.choice(DESTINATIONS), 1) + "#frag")
        rng.shuffle(parts)
        out[f"{head}?{'&'.join(parts)}"] = None
    return list(out)


def _corpus_urls() -> list[str]:
    return list(dict.fromkeys(c.url for c in load_cases(default_corpus_files())))


def _custom_policy(tmp: Path) -> Path:
    (tmp / "feeds").mkdir()
    (tmp / "feeds" / "domains.txt").write_text("evil.example\nbit.ly\n", encoding="utf-8")
    (tmp / "feeds" / "urls.txt").write_text("https://example.org/ok\n", encoding="utf-8")
    policy = tmp / "custom.yaml"
    policy.write_text(
        "dns: {enabled: false}\n"
        "domains: {blocked_files: [feeds/domains.txt], allowed: [accounts.example.com]}\n"
        "urls: {blocked_files: [feeds/urls.txt]}\n"
        "redirectors: ['*.example.com/login?next,continue', '*.google.com/url?q,url']\n"
        "severity: {UV214: critical}\n",
        encoding="utf-8",
    )
    return policy


def _mismatches(
    policy: Policy, reference: dict[str | None, list[dict[str, Any]]], urls: list[str]
) -> list[str]:
    vetter = Vetter(policy)
    bad: list[str] = []
    for server, want in reference.items():
        # Forwards, then backwards: a shortcut filled by one URL then answers another.
        for order in (range(len(urls)), range(len(urls) - 1, -1, -1)):
            for i in order:
                got = vetter.vet_offline(urls[i], server).to_json_dict()
                if got != want[i]:
                    bad.append(
                        f"{urls[i][:200]!r} from {server}: "
                        f"{[f['code'] for f in got['findings']]} with memos, "
                        f"{[f['code'] for f in want[i]['findings']]} with every memo off"
                    )
    return bad


@pytest.mark.parametrize("which", ["default", "strict", "custom"])
def test_hostile_tails_get_the_verdicts_of_the_reference(which: str, tmp_path: Path) -> None:
    urls = hostile_urls(700, seed=28) + _corpus_urls()
    source: dict[str, Any] | Path
    if which == "default":
        source, policy = OFFLINE, Policy.model_validate(OFFLINE)
    elif which == "strict":
        source = ROOT / "src" / "urlvet" / "policies" / "strict.yaml"
        policy = load_policy(source)
    else:
        source = _custom_policy(tmp_path)
        policy = load_policy(source)
    reference = reference_verdicts(source, urls, SERVERS)
    bad = _mismatches(policy, reference, urls)
    assert not bad, "\n".join(bad[:20])


def test_corpus_cases_with_their_policies_servers_and_messages_get_the_reference() -> None:
    groups: dict[str, tuple[dict[str, Any], list[Case]]] = {}
    for case in load_cases(default_corpus_files()):
        policy = {**OFFLINE, **(case.policy or {})}
        _, cases = groups.setdefault(json.dumps(policy, sort_keys=True), (policy, []))
        for server in (case.server, None, "stdio"):
            cases.append((case.url, server, case.server_name if server else None, case.message))
    reference = reference_case_verdicts(list(groups.values()))
    bad: list[str] = []
    for (policy, cases), want in zip(groups.values(), reference, strict=True):
        vetter = Vetter(Policy.model_validate(policy))
        for (url, server, name, message), expected in zip(cases, want, strict=True):
            asked = as_server(server, name=name) if server else None
            got = vetter.vet_offline(url, asked, message=message).to_json_dict()
            if got != expected:
                bad.append(
                    f"{url[:200]!r} from {server}: {got['decision']} with memos, "
                    f"{expected['decision']} with every memo off"
                )
    assert not bad, "\n".join(bad[:20])


def test_the_external_corpora_get_the_verdicts_of_the_reference() -> None:
    from support.corpora import external_inputs

    urls = external_inputs()
    assert len(urls) > 1000
    reference = reference_verdicts(OFFLINE, urls, SERVERS)
    bad = _mismatches(Policy.model_validate(OFFLINE), reference, urls)
    assert not bad, "\n".join(bad[:20])


def test_two_copies_of_a_carried_redirect_are_both_vetted() -> None:
    reference = reference_verdicts(OFFLINE, SHARED_PARAMETER_URLS, [None])[None]
    vetter = Vetter(Policy.model_validate(OFFLINE))
    twice, internal, once = (vetter.vet_offline(u) for u in SHARED_PARAMETER_URLS)
    assert twice.decision is Decision.BLOCK
    assert "UV214" in twice.codes
    assert "UV210" in internal.codes
    # The one-parameter form: the same-site hop's own redirect counts (UV213).
    assert once.decision is Decision.BLOCK
    assert "UV213" in once.codes
    assert [v.to_json_dict() for v in (twice, internal, once)] == reference


def test_the_reference_keeps_no_memo() -> None:
    probe = (
        "import urlvet.url as u; from urlvet import Vetter, Policy;"
        "v = Vetter(Policy(dns={'enabled': False}));"
        "[v.vet_offline('https://a.example/?next=http://10.0.0.1/') for _ in range(3)];"
        "print(u._kept_first_item.cache_info().maxsize, u._domain_facts.cache_info().currsize,"
        " sum(len(m) for m in v.memos.values()))"
    )
    env = {**os.environ, "URLVET_MEMOS": "off", "PYTHONPATH": f"{SRC}{os.pathsep}{TESTS}"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["0", "0", "0"]
