"""A scripted Streamable HTTP endpoint (Starlette on uvicorn), for what the SDK server cannot send.

``python tests/support/http_upstream.py PORT`` serves ``http://127.0.0.1:PORT/mcp``:

- every request to ``/mcp`` is recorded (method, headers, body) and ``GET /received`` returns
  the records as JSON;
- POST ``tools/call`` with ``arguments.events`` (JSON texts): an SSE stream of those events, each
  with an ``id:`` line, then the response ``{"content": [{"type": "text", "text": "done"}]}``;
- POST ``tools/call`` with ``arguments.ask``: an ``input_required`` JSON result asking for it
  (requestState ``state-1``), or, once the params hold ``inputResponses``, a JSON result echoing
  the params (or, with ``arguments.retry_status``, that HTTP status);
- POST ``tools/call`` with ``arguments.status``: that HTTP status and a plain body;
- any other POST of a request: ``{}``; of a response or notification: 202;
- GET: 405; DELETE: 200.

Every answer carries ``Mcp-Session-Id: sess-1``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

records: list[dict[str, Any]] = []
SESSION = {"mcp-session-id": "sess-1"}


async def endpoint(request: Request) -> Response:
    body = await request.body()
    records.append(
        {"method": request.method, "headers": dict(request.headers), "body": body.decode()}
    )
    if request.method == "GET":
        return Response(status_code=405, headers=SESSION)
    if request.method == "DELETE":
        return Response(status_code=200, headers=SESSION)
    msg = json.loads(body)
    if "method" not in msg or "id" not in msg:
        return Response(status_code=202, headers=SESSION)
    params = msg.get("params") or {}
    args = params.get("arguments") or {}
    if msg["method"] == "tools/call" and "status" in args:
        return Response("upstream trouble", status_code=int(args["status"]), headers=SESSION)
    if msg["method"] == "tools/call" and "events" in args:

        async def stream() -> Any:
            for n, text in enumerate(args["events"]):
                yield f"id: ev-{n}\ndata: {text}\n\n".encode()
            final = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {"content": [{"type": "text", "text": "done"}]},
            }
            yield f"id: ev-final\ndata: {json.dumps(final)}\n\n".encode()

        return StreamingResponse(stream(), media_type="text/event-stream", headers=SESSION)
    if msg["method"] == "tools/call" and "ask" in args:
        if "inputResponses" in params and "retry_status" in args:
            return Response("retry refused", status_code=int(args["retry_status"]))
        if "inputResponses" in params:
            result: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(params)}]}
        else:
            result = {
                "resultType": "input_required",
                "inputRequests": args["ask"],
                "requestState": "state-1",
            }
        return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": result}, headers=SESSION)
    return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": {}}, headers=SESSION)


async def received(request: Request) -> Response:
    return JSONResponse(records)


app = Starlette(
    routes=[
        Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"]),
        Route("/received", received, methods=["GET"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
