"""A small hand-written JSON-RPC server over stdio, for what the SDK cannot send.

It speaks no protocol revision of its own: the client scripts it. Each request is answered,
except where said:

- ``test/send`` ``{"lines": [TEXT, ...]}``: writes each text verbatim as one line (the draft's
  ``interaction/create`` and ``-32003``, malformed and over-long lines), then answers ``{}``;
- ``test/received``: answers ``{"lines": [...]}``, every line it has read so far, verbatim;
- ``test/big`` ``{"size": N}``: answers with a result holding N bytes of text;
- ``test/exit`` ``{"code": N}``: exits at once with status N (flushing what it wrote);
- ``tools/call``: answers ``{"content": [{"type": "text", "text": JSON of the params}]}``,
  unless the arguments hold ``"ask": {key: inputRequest}`` and the params no
  ``inputResponses``: then an ``input_required`` result asking for those, with a
  ``requestState`` (the 2026-07-28 shape). It answers when ``"delay"`` seconds have passed, so
  that many calls can be in flight at once;
- anything else with an id: ``{}``; notifications and responses are only recorded.

``--stubborn`` makes it ignore the end of its stdin and SIGTERM, and start a grandchild that
sleeps (its pid is written to stderr as ``grandchild=PID``): the proxy must still leave
nothing behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

_lock = threading.Lock()
received: list[str] = []


def write(obj: Any) -> None:
    line = json.dumps(obj, separators=(",", ":")) + "\n"
    with _lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def write_raw(text: str) -> None:
    with _lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def answer(msg: dict[str, Any]) -> None:
    method = msg.get("method")
    params = msg.get("params") or {}
    msg_id = msg.get("id")
    if method == "test/send":
        for text in params["lines"]:
            write_raw(text)
        write({"jsonrpc": "2.0", "id": msg_id, "result": {}})
    elif method == "test/received":
        with _lock:
            lines = list(received)
        write({"jsonrpc": "2.0", "id": msg_id, "result": {"lines": lines}})
    elif method == "test/big":
        write({"jsonrpc": "2.0", "id": msg_id, "result": {"blob": "x" * int(params["size"])}})
    elif method == "test/exit":
        sys.stdout.flush()
        os._exit(int(params["code"]))
    elif method == "tools/call":
        args = params.get("arguments") or {}
        delay = float(args.get("delay", 0))

        def reply() -> None:
            if delay:
                time.sleep(delay)
            if "ask" in args and "inputResponses" not in params:
                result: dict[str, Any] = {
                    "resultType": "input_required",
                    "inputRequests": args["ask"],
                    "requestState": "state-1",
                }
            else:
                result = {"content": [{"type": "text", "text": json.dumps(params)}]}
            write({"jsonrpc": "2.0", "id": msg_id, "result": result})

        if delay:
            threading.Thread(target=reply, daemon=True).start()
        else:
            reply()
    elif msg_id is not None and method is not None:
        write({"jsonrpc": "2.0", "id": msg_id, "result": {}})


def main() -> None:
    stubborn = "--stubborn" in sys.argv
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(f"grandchild={child.pid}", file=sys.stderr, flush=True)
    for raw in sys.stdin.buffer:
        text = raw.decode("utf-8", "replace").rstrip("\n")
        with _lock:
            received.append(text)
        try:
            msg = json.loads(text)
        except ValueError:
            continue
        if isinstance(msg, dict):
            answer(msg)
    if stubborn:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
