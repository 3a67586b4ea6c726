"""What the client declared it supports, and the URL requests it did not declare (UV710).

A server must not send a URL request of a kind the client never declared:

- 2025-11-25 (elicitation.mdx, Capabilities): URL-mode ``elicitation/create`` and the ``-32042``
  error need ``capabilities.elicitation.url`` in the client's ``initialize`` request. "For
  backwards compatibility, an empty capabilities object is equivalent to declaring support for
  ``form`` mode only": ``elicitation: {}`` declares no URL mode;
- draft user interaction (spec PR #475): ``interaction/create`` and the ``-32003`` error of type
  ``ua`` need ``"ua"`` in ``capabilities.userInteraction.types``;
- 2026-07-28: the client declares its capabilities "in
  ``_meta.io.modelcontextprotocol/clientCapabilities`` on each request", so a URL elicitation
  inside an ``input_required`` result is judged by the request that result answers (and by the
  ``initialize`` capabilities when that request carries none).

Nothing is judged where no declaration was seen: a proxy that starts after the client's
``initialize`` does not guess what the client said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from urlvet.mcp.wire import ParsedMessage

CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
"""2026-07-28: where a request's ``_meta`` carries the client's capabilities."""

_NEEDS_URL_MODE = frozenset({"elicitation/create", "url_elicitation_required", "input_required"})
_NEEDS_UA = frozenset({"interaction/create", "interaction_required"})


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """The URL requests a client declared it supports."""

    elicitation_form: bool = False
    """``elicitation.form`` (or the empty ``elicitation: {}``) was declared."""
    elicitation_url: bool = False
    """``elicitation.url`` was declared."""
    interaction_types: frozenset[str] = frozenset()
    """The draft's ``userInteraction.types``."""

    @classmethod
    def declared(cls, capabilities: Any) -> ClientCapabilities:
        """Read a ``ClientCapabilities`` object as sent (anything that is not one declares
        nothing)."""
        if not isinstance(capabilities, dict):
            return cls()
        elicitation = capabilities.get("elicitation")
        form = url = False
        if isinstance(elicitation, dict):
            url = isinstance(elicitation.get("url"), dict)
            form = isinstance(elicitation.get("form"), dict) or not elicitation
        interaction = capabilities.get("userInteraction")
        types = interaction.get("types") if isinstance(interaction, dict) else None
        kinds = frozenset(t for t in types if isinstance(t, str)) if isinstance(types, list) else ()
        return cls(form, url, frozenset(kinds))


def in_initialize(request: Any) -> ClientCapabilities | None:
    """The capabilities of a client's ``initialize`` request, or None when it is not one."""
    if not isinstance(request, dict) or request.get("method") != "initialize":
        return None
    params = request.get("params")
    return ClientCapabilities.declared(
        params.get("capabilities") if isinstance(params, dict) else None
    )


def in_meta(request: Any) -> ClientCapabilities | None:
    """The 2026-07-28 capabilities a request carries in its ``_meta``, or None."""
    params = request.get("params") if isinstance(request, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or CAPABILITIES_META_KEY not in meta:
        return None
    return ClientCapabilities.declared(meta[CAPABILITIES_META_KEY])


def undeclared_reason(parsed: ParsedMessage, declared: ClientCapabilities) -> str | None:
    """Why the URL requests of ``parsed`` were not declared by the client, or None when they
    were (or the message carries none)."""
    if not parsed.requests:
        return None
    if parsed.shape in _NEEDS_URL_MODE and not declared.elicitation_url:
        said = "form mode only" if declared.elicitation_form else "no elicitation"
        return (
            f"the client declared {said} (no elicitation.url capability), and the server sent "
            f"a URL elicitation ({parsed.shape})"
        )
    if parsed.shape in _NEEDS_UA and "ua" not in declared.interaction_types:
        return (
            'the client did not declare "ua" in userInteraction.types, and the server sent a '
            f"user-agent interaction ({parsed.shape})"
        )
    return None


@dataclass
class Declarations:
    """What one client declared over a session, as a relay sees its requests."""

    session: ClientCapabilities | None = None
    """From the client's ``initialize`` (None until one was seen)."""

    def observe(self, request: Any) -> None:
        """Take note of one client request (only ``initialize`` changes anything)."""
        found = in_initialize(request)
        if found is not None:
            self.session = found

    def for_message(
        self, parsed: ParsedMessage, original_request: Any = None
    ) -> ClientCapabilities | None:
        """The capabilities that apply to a server message (None: nothing was declared that
        urlvet saw)."""
        if parsed.protocol == "2026-07-28":
            found = in_meta(original_request)
            if found is not None:
                return found
        return self.session


__all__ = [
    "CAPABILITIES_META_KEY",
    "ClientCapabilities",
    "Declarations",
    "in_initialize",
    "in_meta",
    "undeclared_reason",
]
