"""What the interaction lint (UV701-UV706, UV710) costs the proxy and the hook, per message.

Three figures, each the median and p99 over ``--rounds`` calls, in microseconds:

- **vet_form**: the verdict on one form (the spec's three-field contact form; a sign-in form
  that asks for a password; a 40-field form with titles and descriptions);
- **relay, form**: the proxy's whole judgement of a 2025-11-25 ``elicitation/create`` form
  message (``Relay.from_server``: parse, vet the form, build the decline);
- **relay, URL**: the same for a URL elicitation to a client whose ``initialize`` the relay
  saw, with and without URL mode declared (UV710 adds a finding and a decline).

    python bench/interaction_bench.py [--rounds 2000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from urlvet.engine import Vetter
from urlvet.mcp import vet_form
from urlvet.mcp.proxy.core import Relay
from urlvet.policy import Policy
from urlvet.server import as_server

VETTER = Vetter(Policy(dns={"enabled": False}))
CONTACT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your full name"},
        "email": {"type": "string", "format": "email", "description": "Your email address"},
        "age": {"type": "number", "minimum": 18, "description": "Your age"},
    },
}
SIGN_IN = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "title": "Username"},
        "password": {"type": "string", "title": "Password", "description": "Your password"},
    },
}
WIDE = {
    "type": "object",
    "properties": {
        f"field_{n}": {
            "type": "string",
            "title": f"Preference number {n}",
            "description": "Tell us what you would like us to remember about this setting.",
        }
        for n in range(40)
    },
}


def _message(msg_id: int, params: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}
    ).encode()


def _time(fn: Callable[[], Any], rounds: int) -> dict[str, float]:
    for _ in range(min(100, rounds)):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return {"p50_us": statistics.median(times), "p99_us": times[int(len(times) * 0.99) - 1]}


def _relay(capabilities: dict[str, Any]) -> Relay:
    relay = Relay.build(VETTER, as_server("stdio"), diagnostic=lambda _: None)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"capabilities": capabilities},
    }
    relay.from_client(json.dumps(init).encode())
    return relay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    rows: dict[str, dict[str, float]] = {}
    for name, schema in (("contact form", CONTACT), ("sign-in form", SIGN_IN), ("40 fields", WIDE)):
        rows[f"vet_form, {name}"] = _time(lambda s=schema: vet_form(VETTER, s, "Hi"), args.rounds)
    relay = _relay({"elicitation": {"form": {}, "url": {}}})
    for name, schema in (("contact form", CONTACT), ("sign-in form", SIGN_IN)):
        line = _message(1, {"mode": "form", "message": "Hi", "requestedSchema": schema})
        rows[f"relay, {name}"] = _time(
            lambda ln=line: loop.run_until_complete(relay.from_server(ln)), args.rounds
        )
    url = {"mode": "url", "elicitationId": "e", "url": "https://example.com/a", "message": "m"}
    for name, caps in (
        ("url declared", {"elicitation": {"url": {}}}),
        ("form only", {"elicitation": {}}),
    ):
        relay = _relay(caps)
        line = _message(2, url)
        rows[f"relay, URL, {name}"] = _time(
            lambda r=relay, ln=line: loop.run_until_complete(r.from_server(ln)), args.rounds
        )
    loop.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'case':<32} {'p50 µs':>10} {'p99 µs':>10}   ({args.rounds} rounds)")
    for name, row in rows.items():
        print(f"{name:<32} {row['p50_us']:>10.1f} {row['p99_us']:>10.1f}")


if __name__ == "__main__":
    main()
