"""The ``mcp`` SDK adapters: urlvet inside a Python client (urlvet's ``mcp`` extra).

:func:`guard_elicitation` returns an ``elicitation_callback`` for ``mcp.Client``/
``mcp.ClientSession`` that declines blocked URLs itself and shows the others to the client's
consent UI with their summary. :func:`vet_elicitation_error` and
:func:`guard_elicitation_error` do the same for a ``-32042`` ``MCPError``. The ``mcp`` package
is imported only inside these functions, so importing this module does not need it.

The server is always the one the client's configuration names (``server=``), never the
``serverInfo`` the server reports about itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from urlvet.consent import ConsentSummary
from urlvet.engine import Vetter, default_vetter
from urlvet.errors import InputError
from urlvet.findings import Decision, Verdict
from urlvet.mcp.wire import URL_ELICITATION_REQUIRED
from urlvet.server import Server, as_server

if TYPE_CHECKING:
    from mcp import MCPError
    from mcp.client.session import ClientRequestContext, ElicitationFnT
    from mcp.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ErrorData

logger = logging.getLogger("urlvet.mcp")


def _resolve(vetter: Vetter | None) -> Vetter:
    return vetter if vetter is not None else default_vetter()


ConsentUI: TypeAlias = Callable[
    [ConsentSummary, "ElicitRequestURLParams"], Awaitable["ElicitResult | str | bool"]
]
"""``async (summary, params) -> ElicitResult | "accept" | "decline" | "cancel" | bool``.

Called only for URLs urlvet allows or warns about; it must show ``summary`` (the warnings too)
and, when the person chooses to open the link, open ``summary.href``.
"""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "urlvet's MCP hook needs the MCP SDK (urlvet's mcp extra): pip install mcp"
        ) from exc


def _server_of(server: Server | str, server_name: str | None) -> Server:
    srv = as_server(server, name=server_name)
    if srv is None:  # pragma: no cover - as_server only returns None for None
        raise InputError("a server is required")
    if server_name is not None and srv.name is None:
        srv = Server(name=server_name, url=srv.url, parsed=srv.parsed)
    return srv


def _as_elicit_result(value: object) -> ElicitResult:
    from mcp.types import ElicitResult

    if isinstance(value, ElicitResult):
        # URL mode carries no content: whatever the UI put there stays on this side.
        return ElicitResult(action=value.action)
    if value is True or value == "accept":
        return ElicitResult(action="accept")
    if value == "cancel":
        return ElicitResult(action="cancel")
    if value is not False and value != "decline":
        logger.warning("the consent UI returned a %s; declining", type(value).__name__)
    return ElicitResult(action="decline")


def guard_elicitation(
    consent_ui: ConsentUI,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
    inner: ElicitationFnT | None = None,
    on_block: Callable[[ConsentSummary], Awaitable[None]] | None = None,
) -> ElicitationFnT:
    """An ``elicitation_callback`` for ``mcp.Client``/``mcp.ClientSession`` that vets URLs.

    - A URL-mode elicitation whose URL urlvet blocks is declined at once; ``consent_ui`` never
      sees it (``on_block``, if given, is told, for a log or a notice).
    - An allowed or warned URL goes to ``consent_ui(summary, params)`` with its
      :class:`ConsentSummary`; its answer is returned (URL mode carries no content).
    - A form-mode elicitation that the policy blocks (it asks for a password, a token, payment
      details: UV701-UV706) is declined at once; any other passes through untouched to
      ``inner`` (declined as unsupported when there is none, as the SDK does without one).

    ``server`` is the server as *your* configuration knows it: its URL or ``"stdio"`` (with
    ``server_name``), or a :class:`~urlvet.server.Server`. Never pass what the server reports
    about itself (``client.server_info``). The callback keeps no state, so the SDK may run
    several elicitations at once. It fails closed: if vetting or the UI raises, it declines.
    """
    _require_mcp()
    from mcp.types import INVALID_REQUEST, ElicitRequestURLParams, ElicitResult, ErrorData

    srv = _server_of(server, server_name)
    v = _resolve(vetter)

    async def elicitation_callback(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        if not isinstance(params, ElicitRequestURLParams):
            if _form_blocked(v, params, srv):
                return ElicitResult(action="decline")
            if inner is not None:
                return await inner(context, params)
            return ErrorData(code=INVALID_REQUEST, message="Elicitation not supported")
        try:
            verdict = await v.avet(params.url, srv, message=params.message)
            summary = ConsentSummary.from_verdict(verdict, srv, params.message)
        except Exception:
            logger.exception("vetting a URL elicitation failed; declining")
            return ElicitResult(action="decline")
        if verdict.decision is Decision.BLOCK:
            logger.info("declined a blocked URL from %s: %s", srv.label(), verdict.codes)
            if on_block is not None:
                try:
                    await on_block(summary)
                except Exception:
                    logger.exception("on_block raised; the URL stays declined")
            return ElicitResult(action="decline")
        try:
            chosen = await consent_ui(summary, params)
        except Exception:
            logger.exception("the consent UI raised; declining")
            return ElicitResult(action="decline")
        return _as_elicit_result(chosen)

    return elicitation_callback


def _form_blocked(vetter: Vetter, params: ElicitRequestParams, server: Server) -> bool:
    """True when the policy blocks the form ``params`` (or it could not be vetted)."""
    from urlvet.mcp.forms import vet_form

    try:
        schema = getattr(params, "requested_schema", None)
        verdict = vet_form(vetter, schema, getattr(params, "message", None), server)
    except Exception:
        logger.exception("vetting a form elicitation failed; declining")
        return True
    if verdict.decision is Decision.BLOCK:
        logger.info("declined a form from %s: %s", server.label(), verdict.codes)
        return True
    return False


@dataclass(frozen=True)
class VettedElicitation:
    """One URL elicitation from a ``-32042`` error, vetted."""

    params: ElicitRequestURLParams
    """The elicitation as the server sent it."""
    verdict: Verdict
    """urlvet's verdict on its URL."""
    summary: ConsentSummary
    """What the consent screen shows."""
    result: ElicitResult | None = field(default=None)
    """The answer, once given (always a decline when blocked)."""

    @property
    def blocked(self) -> bool:
        """True when urlvet blocks the URL: it must not be offered or opened."""
        return self.verdict.decision is Decision.BLOCK


def _elicitations_of(error: MCPError | ErrorData) -> list[ElicitRequestURLParams]:
    _require_mcp()
    from mcp import UrlElicitationRequiredError
    from mcp.types import ErrorData

    data = error if isinstance(error, ErrorData) else getattr(error, "error", None)
    if not isinstance(data, ErrorData):
        raise InputError(f"not an MCP error: {type(error).__name__}")
    if data.code != URL_ELICITATION_REQUIRED:
        raise InputError(f"MCP error {data.code} is not -32042 (URL elicitation required)")
    try:
        return list(UrlElicitationRequiredError.from_error(data).elicitations)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise InputError(f"the server's -32042 error is malformed: {exc}") from None


async def vet_elicitation_error(
    error: MCPError | ErrorData,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
) -> tuple[VettedElicitation, ...]:
    """Vet every URL elicitation of a ``-32042`` error (``mcp.MCPError`` or its ``ErrorData``).

    Raises :class:`~urlvet.errors.InputError` when the error is not -32042 or is malformed; the
    caller then opens nothing and does not retry.
    """
    srv = _server_of(server, server_name)
    v = _resolve(vetter)
    out = []
    for params in _elicitations_of(error):
        verdict = await v.avet(params.url, srv, message=params.message)
        out.append(
            VettedElicitation(
                params, verdict, ConsentSummary.from_verdict(verdict, srv, params.message)
            )
        )
    return tuple(out)


async def guard_elicitation_error(
    error: MCPError | ErrorData,
    consent_ui: ConsentUI,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
) -> tuple[VettedElicitation, ...]:
    """Vet a ``-32042`` error's elicitations and ask the person about those not blocked.

    Blocked ones are declined without reaching ``consent_ui``; the others are shown one after
    the other. Retry the failed request only when every result is ``accept``.
    """
    from mcp.types import ElicitResult

    out = []
    for item in await vet_elicitation_error(error, vetter, server=server, server_name=server_name):
        if item.blocked:
            result = ElicitResult(action="decline")
        else:
            try:
                result = _as_elicit_result(await consent_ui(item.summary, item.params))
            except Exception:
                logger.exception("the consent UI raised; declining")
                result = ElicitResult(action="decline")
        out.append(VettedElicitation(item.params, item.verdict, item.summary, result))
    return tuple(out)


__all__ = [
    "ConsentUI",
    "VettedElicitation",
    "guard_elicitation",
    "guard_elicitation_error",
    "vet_elicitation_error",
]
