"""A hostile MCP server over stdio: it writes whatever raw bytes a test gives it.

    python hostile_server.py SCRIPT

``SCRIPT`` is a JSON file ``{"kind": "request" | "response", "attack": BASE64, "log": PATH}``.
The server speaks just enough MCP for a real client to reach its one tool, ``go``: it answers
``initialize`` (2025-11-25) and ``tools/list``, and when ``go`` is called it

- ``request``: writes the attack bytes as they are (a server-to-client request it made up,
  JSON-RPC id ``"hostile-1"``), waits for the client's answer to it, and answers the call with
  the text ``answered: <the client's answer as JSON>``;
- ``response``: writes the attack bytes in place of the call's answer, with every ``{ID}``
  replaced by the call's id as JSON; a retried call (2026-07-28: it carries ``inputResponses``)
  is answered with the text ``retried: <inputResponses as JSON>``.

Every line it reads is appended to ``log``, so a test sees what reached the server (declines).
Bytes go out unchecked: invalid UTF-8, odd numbers, deep nesting, anything the test chose.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

ATTACK_ID = "hostile-1"
"""The id of the server-to-client request a ``request`` script writes."""


def _write(raw: bytes) -> None:
    sys.stdout.buffer.write(raw if raw.endswith(b"\n") else raw + b"\n")
    sys.stdout.buffer.flush()


def _reply(msg_id: Any, result: dict[str, Any]) -> None:
    _write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode())


def _text(msg_id: Any, text: str) -> None:
    # resultType "complete" is what 2026-07-28 requires; earlier clients ignore the member.
    content = [{"type": "text", "text": text}]
    _reply(msg_id, {"resultType": "complete", "content": content, "isError": False})


TOOL = {"name": "go", "description": "Runs the attack.", "inputSchema": {"type": "object"}}


def main(script_path: str) -> None:
    """Serve one client until its stdin closes."""
    script = json.loads(Path(script_path).read_text(encoding="utf-8"))
    attack = base64.b64decode(script["attack"])
    with Path(script["log"]).open("ab") as log:
        _serve(script["kind"], attack, log)


def _serve(kind: str, attack: bytes, log: Any) -> None:
    pending: Any = None
    for line in sys.stdin.buffer:
        log.write(line if line.endswith(b"\n") else line + b"\n")
        log.flush()
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        method, msg_id = message.get("method"), message.get("id")
        if method is None:
            # The client's answer to the attack (whatever id the attack gave it: 1.0 is 1).
            if pending is not None and msg_id != pending:
                _text(pending, "answered: " + json.dumps(message, sort_keys=True))
                pending = None
            continue
        if msg_id is None:
            continue  # a notification
        if method == "initialize":
            _reply(
                msg_id,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1.0"},
                },
            )
        elif method == "tools/list":
            _reply(msg_id, {"tools": [TOOL]})
        elif method == "tools/call":
            params = message.get("params") or {}
            if "inputResponses" in params:
                _text(msg_id, "retried: " + json.dumps(params["inputResponses"], sort_keys=True))
            elif kind == "request":
                pending = msg_id
                _write(attack)
            else:
                _write(attack.replace(b"{ID}", json.dumps(msg_id).encode()))
        else:
            _reply(msg_id, {})


if __name__ == "__main__":
    main(sys.argv[1])
