"""The proxy's one seam onto vetting: a decoded server message in, a :class:`Judgement` out."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from urlvet.findings import Decision
from urlvet.mcp import aanswer, parse_message

if TYPE_CHECKING:
    from urlvet.engine import Vetter
    from urlvet.findings import Verdict
    from urlvet.mcp import HookAnswer
    from urlvet.server import Server

URLVET_BLOCKED = -32001
"""The JSON-RPC error code of the error the client gets when urlvet blocked a URL it could not
decline on the client's behalf."""

Kind = Literal["pass", "rewrite", "decline", "retry"]


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One vetted URL, for ``--log``."""

    shape: str
    url: str
    message: str | None
    decision: str
    codes: tuple[str, ...]
    action: str


@dataclass(frozen=True, slots=True)
class Judgement:
    """What to do with one server message."""

    kind: Kind
    """pass (forward the bytes), rewrite (forward ``message``), decline (send ``reply`` to the
    server and ``message``, if any, to the client) or retry (resend the client's request with
    ``retry_params``)."""
    message: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    retry_params: dict[str, Any] | None = None
    reason: str | None = None
    entries: tuple[LogEntry, ...] = ()


def _main_finding(verdict: Verdict) -> str:
    worst = max(verdict.findings, key=lambda f: f.severity.rank, default=None)
    return worst.message if worst is not None else "this link needs a closer look"


def warning_line(verdict: Verdict) -> str:
    """The one line put before a warned message: ``urlvet: ...``."""
    return f"urlvet: {_main_finding(verdict)}".replace("\n", " ")


def _prefixed(message: Any, line: str) -> Any:
    if isinstance(message, dict) and isinstance(message.get("text"), str):
        return {**message, "text": f"{line}\n{message['text']}"}
    if isinstance(message, str):
        return f"{line}\n{message}"
    return line if message is None or isinstance(message, str) else message


class Judge:
    """Vets the URL requests in server messages, as the configured ``server`` asked."""

    def __init__(self, vetter: Vetter, server: Server) -> None:
        self.vetter = vetter
        self.server = server
        self.server_label = server.url or "stdio"
        """The server for the log: its URL, or ``stdio``."""

    def carries_urls(self, data: Any) -> bool:
        """True when the message claims a URL-request shape (well formed or not)."""
        parsed = parse_message(data)
        return parsed.shape not in ("other", "malformed") or parsed.protocol is not None

    async def judge(self, data: Any) -> Judgement:
        """The judgement on one decoded message (one object, not a batch)."""
        if not isinstance(data, dict):
            return Judgement("pass")
        ans = await aanswer(data, self.vetter, self.server)
        if ans.shape == "other" or (ans.shape == "malformed" and ans.protocol is None):
            return Judgement("pass")
        if ans.shape == "malformed":
            reason = ans.error.message if ans.error is not None else "malformed"
            return self.refuse(data, f"the URL request is malformed: {reason}")
        return self._decide(data, ans)

    def _decide(self, data: dict[str, Any], ans: HookAnswer) -> Judgement:
        blocked = [r for r in ans.requests if r.verdict.decision is Decision.BLOCK]
        warned = [r for r in ans.requests if r.verdict.decision is Decision.WARN]
        shape = ans.shape

        def entries(action_of: Any) -> tuple[LogEntry, ...]:
            return tuple(
                LogEntry(
                    shape,
                    r.url,
                    r.message,
                    r.verdict.decision.value,
                    r.verdict.codes,
                    action_of(r),
                )
                for r in ans.requests
            )

        if blocked:
            first = blocked[0]
            reason = f"urlvet blocked {first.url}: {_main_finding(first.verdict)}"
            log = entries(
                lambda r: (
                    "declined"
                    if r.verdict.decision is Decision.BLOCK or shape != "input_required"
                    else "forwarded"
                )
            )
            if shape in ("elicitation/create", "interaction/create"):
                return Judgement("decline", reply=ans.response, reason=reason, entries=log)
            if shape == "input_required":
                assert ans.response is not None
                return Judgement("retry", retry_params=ans.response, reason=reason, entries=log)
            # An error that asks for URLs: nothing to decline, the client is told instead.
            return Judgement(
                "decline", message=self._blocked_error(data, reason), reason=reason, entries=log
            )
        if warned:
            rewritten = self._rewrite(
                data, shape, {id(r): warning_line(r.verdict) for r in warned}, ans
            )
            log = entries(
                lambda r: (
                    "forwarded-with-warning" if r.verdict.decision is Decision.WARN else "forwarded"
                )
            )
            return Judgement("rewrite", message=rewritten, entries=log)
        return Judgement("pass", entries=entries(lambda r: "forwarded"))

    def _rewrite(
        self, data: dict[str, Any], shape: str, lines: dict[int, str], ans: HookAnswer
    ) -> dict[str, Any]:
        out = copy.deepcopy(data)
        by_url = {r.url: lines[id(r)] for r in ans.requests if id(r) in lines}
        for holder in _message_holders(out, shape):
            url = holder.get("url")
            if url is None and isinstance(holder.get("interaction"), dict):
                continue
            if isinstance(url, str) and url in by_url:
                holder["message"] = _prefixed(holder.get("message"), by_url[url])
        return out

    def _blocked_error(self, data: dict[str, Any], reason: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": data.get("id"),
            "error": {"code": URLVET_BLOCKED, "message": reason},
        }

    def refuse(self, data: Any, reason: str) -> Judgement:
        """Decline a URL request that cannot be vetted (too long, malformed)."""
        parsed = parse_message(data) if isinstance(data, dict) else None
        text = f"urlvet blocked a URL request: {reason}"
        if parsed is None or not isinstance(data, dict):
            return Judgement("decline", reason=text)
        msg_id = data.get("id")
        if "method" in data:
            if msg_id is None or parsed.protocol is None:
                return Judgement("decline", reason=text)
            if parsed.protocol == "draft":
                reply = {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {
                        "code": -32099,
                        "message": "User did not consent to the interaction.",
                    },
                }
            else:
                reply = {"jsonrpc": "2.0", "id": msg_id, "result": {"action": "decline"}}
            return Judgement("decline", reply=reply, reason=text)
        return Judgement("decline", message=self._blocked_error(data, text), reason=text)


def _message_holders(data: dict[str, Any], shape: str) -> list[dict[str, Any]]:
    """The objects that hold a url and its message, in a copy of a message of ``shape``."""
    out: list[dict[str, Any]] = []
    if shape == "elicitation/create":
        out.append(data["params"])
    elif shape == "interaction/create":
        params = data["params"]
        out.append(params["interaction"] if isinstance(params.get("interaction"), dict) else params)
    elif shape == "url_elicitation_required":
        out.extend(e for e in data["error"]["data"]["elicitations"] if isinstance(e, dict))
    elif shape == "interaction_required":
        d = data["error"]["data"]
        items = d.get("interactions") or ([d["interaction"]] if "interaction" in d else [d])
        out.extend(i for i in items if isinstance(i, dict))
    elif shape == "input_required":
        for item in data["result"].get("inputRequests", {}).values():
            if isinstance(item, dict) and isinstance(item.get("params"), dict):
                out.append(item["params"])
    return out


__all__ = ["URLVET_BLOCKED", "Judge", "Judgement", "LogEntry", "warning_line"]
