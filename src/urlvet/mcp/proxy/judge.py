"""The proxy's one seam onto vetting: a decoded server message in, a :class:`Judgement` out.

Parsing is :func:`urlvet.mcp.wire.parse_message` (strict), the replies are built by
:func:`urlvet.mcp.answers.proxy_action`; this module only vets the URLs in between and says
what to log.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from urlvet.errors import UrlvetError
from urlvet.findings import Decision
from urlvet.mcp.answers import ProxyAction, main_finding, proxy_action
from urlvet.mcp.proxy.interaction import InteractionLint
from urlvet.mcp.wire import HookError, JsonId, ParsedMessage, parse_message, url_requests
from urlvet.text import one_line
from urlvet.url import parse as parse_url

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from urlvet.engine import Vetter
    from urlvet.findings import Verdict
    from urlvet.server import Server


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One vetted URL, as ``--log`` writes it."""

    shape: str
    """The wire shape that carried it (the one claimed, for a malformed message)."""
    url: str
    message: str | None
    decision: str
    codes: tuple[str, ...]
    action: str
    """forwarded, forwarded-with-warning or declined."""


@dataclass(frozen=True, slots=True)
class BlockNotice:
    """One blocked URL request, as the operator and the client are told of it."""

    site: str
    """The URL's registrable domain (or its host), never the whole URL: the notice must not
    become a link to the page it warns about."""
    reason: str
    """Why: the main finding and its code, or why the message could not be read."""
    codes: tuple[str, ...] = ()
    """The rule codes of the verdict."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """What to do with one server message, and what to log about it."""

    action: ProxyAction
    parsed: ParsedMessage
    entries: tuple[LogEntry, ...] = ()
    notes: tuple[str, ...] = ()
    """Lines for the operator's stderr (interaction lint: what was declined and why)."""
    blocked: tuple[BlockNotice, ...] = ()
    """What was blocked, one notice per URL (one for a message that could not be read)."""


def _notices(
    parsed: ParsedMessage, verdicts: Sequence[Verdict], action: ProxyAction, data: Any
) -> tuple[BlockNotice, ...]:
    if action.did != "declined":
        return ()
    if parsed.shape == "malformed":
        found = url_requests(data).requests if isinstance(data, dict) else []
        sites = sorted({_site_of(f.url) for f in found}) or ["no URL read"]
        reason = parsed.error.message if parsed.error is not None else "malformed"
        return (BlockNotice(", ".join(sites), f"the message could not be read: {reason}"),)
    out = []
    for verdict in verdicts:
        if verdict.decision is not Decision.BLOCK:
            continue
        finding = main_finding(verdict)
        reason = f"{finding.message} ({finding.code})" if finding is not None else "blocked"
        site = verdict.registrable_domain or verdict.host or "no host"
        out.append(BlockNotice(one_line(site, SITE_LIMIT), reason, verdict.codes))
    return tuple(out)


SITE_LIMIT = 80
"""Characters of a site named in a notice."""


def _site_of(url: str) -> str:
    try:
        parsed = parse_url(url)
    except UrlvetError:
        return "an unreadable URL"
    return one_line(parsed.registrable_domain or parsed.host or "no host", SITE_LIMIT)


def _entries(
    parsed: ParsedMessage, verdicts: Sequence[Verdict], action: ProxyAction, data: Any
) -> tuple[LogEntry, ...]:
    shape = parsed.claimed or parsed.shape
    if parsed.shape == "malformed":
        # No URL of a malformed message is vetted; the log still names them (read leniently).
        found = url_requests(data).requests if isinstance(data, dict) else []
        return tuple(
            LogEntry(shape, f.url, f.message, Decision.BLOCK.value, (), "declined") for f in found
        )
    out = []
    for request, verdict in zip(parsed.requests, verdicts, strict=True):
        if action.did == "declined":
            did = "declined"
        elif action.did == "forwarded-with-warning" and verdict.decision is Decision.WARN:
            did = "forwarded-with-warning"
        else:
            did = "forwarded"
        out.append(
            LogEntry(
                shape, request.url, request.message, verdict.decision.value, verdict.codes, did
            )
        )
    return tuple(out)


class Judge:
    """Vets the URL requests in server messages, as the configured ``server`` asked."""

    def __init__(self, vetter: Vetter, server: Server) -> None:
        self.vetter = vetter
        self.server = server
        self.server_label = server.url or "stdio"
        """The server for the log: its URL, or ``stdio``."""
        self.lint = InteractionLint(vetter, server)
        """The forms and the client's capabilities (UV7xx)."""

    @staticmethod
    def parse(data: Any) -> ParsedMessage:
        """The strict reading of one decoded message."""
        return parse_message(data)

    async def judge(
        self,
        data: Any,
        *,
        original_request: Mapping[str, Any] | None = None,
        retry_id: JsonId | None = None,
        too_long: int | None = None,
        channel: str = "",
    ) -> Judgement:
        """The judgement on one decoded message (an object, not a batch).

        ``original_request`` and ``retry_id`` let a blocked ``input_required`` result be
        retried. ``too_long`` (the limit it broke) makes a URL request be declined unread.
        """
        if not isinstance(data, dict):
            return Judgement(ProxyAction("forwarded", None), parse_message(data))
        data = _canonical(data)
        parsed = parse_message(data)
        if parsed.shape == "malformed" and parsed.claimed is None:
            # Not JSON-RPC at all: not ours unless it reads as a URL request once a missing
            # "jsonrpc" member is assumed (a client might be lenient there too).
            loose = parse_message(data, lenient=True)
            if not loose.carries_urls:
                return Judgement(ProxyAction("forwarded", None), parsed)
            parsed = dataclasses.replace(
                loose,
                shape="malformed",
                requests=(),
                claimed=loose.claimed or loose.shape,
                error=parsed.error,
            )
        if too_long is not None and parsed.carries_urls:
            parsed = _as_too_long(parsed, too_long)
        verdicts: list[Verdict] = []
        if parsed.shape != "malformed":
            for request in parsed.requests:
                verdicts.append(
                    await self.vetter.avet(request.url, self.server, message=request.message)
                )
        # -- the interaction around the URLs (urlvet.mcp.proxy.interaction) --
        verdicts, notes = self.lint.capabilities(parsed, verdicts, original_request, channel)
        forms = self.lint.forms(data, parsed, verdicts, original_request, retry_id)
        if forms is not None:
            entries = _entries(parsed, verdicts, forms.action, data) + forms.entries
            return Judgement(
                forms.action,
                parsed,
                entries,
                notes + forms.notes,
                _notices(parsed, verdicts, forms.action, data),
            )
        # --
        action = proxy_action(
            data, parsed, verdicts, original_request=original_request, retry_id=retry_id
        )
        blocked = _notices(parsed, verdicts, action, data)
        return Judgement(
            action,
            parsed,
            _entries(parsed, verdicts, action, data),
            # One line per block: a block notice names the rule (UV710 among them) already.
            () if blocked else notes,
            blocked,
        )


def _canonical(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with an integral float error code made an int: a JavaScript client reads
    ``-32042.0`` as ``-32042``, so urlvet must too."""
    error = data.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        if isinstance(code, float) and code.is_integer():
            return {**data, "error": {**error, "code": int(code)}}
    return data


def _as_too_long(parsed: ParsedMessage, limit: int) -> ParsedMessage:
    keys = tuple(r.key for r in parsed.requests if r.key is not None)
    return dataclasses.replace(
        parsed,
        shape="malformed",
        requests=(),
        claimed=parsed.claimed or parsed.shape,
        declinable_keys=parsed.declinable_keys or keys,
        error=HookError(
            code="too-long",
            message=f"the message is longer than {limit:,} bytes; it was not read",
        ),
    )


__all__ = ["BlockNotice", "Judge", "Judgement", "LogEntry"]
