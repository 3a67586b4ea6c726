"""What a client shows a person before it opens a URL for an MCP server: the consent summary.

A :class:`ConsentSummary` is made from a :class:`~urlvet.findings.Verdict`, the
:class:`~urlvet.server.Server` that asked (as the client's own configuration names it) and the
server's message. It holds what the MCP specification asks a client to show (who asks, the full
URL, the server's reason) and what a careful person needs besides: the registrable domain
emphasised, the host in Unicode and punycode (punycode only when the lookalike checks found the
Unicode unsafe), the link's relation to the server, the warnings in plain language, and the
actions the decision leaves open.

Who asks is always the client's configuration, never the ``serverInfo`` a server reports about
itself: a malicious server can call itself anything.

The renderings (plain text, Markdown, JSON and a self-contained HTML card) treat every string
that came from the server, the URL and the message above all, as hostile: control, bidi and
invisible characters are made visible, every string is escaped for its format, long strings are
cut visibly, and nothing becomes a live link or runs a script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from urlvet.findings import Decision, Finding, Severity, TlsFacts, Verdict
from urlvet.server import Server, is_loopback_host
from urlvet.text import clip, clip_middle, hidden_characters, more_characters, visible
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse, to_unicode

Relation = Literal["same-site", "trusted-third-party", "unrelated", "local", "unknown"]
"""How the link relates to the server that asked for it."""

Action = Literal["open", "decline"]
"""An action a client offers the person."""

HostShownAs = Literal["unicode", "unicode+punycode", "punycode", "address", "none"]
"""How the host is shown: as written, both ways, punycode only, as an IP address, or not at all."""

# Codes whose firing means the Unicode form of the host must not be shown (the lookalike
# family: an unsafe IDN display, a homoglyph of a protected domain).
_UNSAFE_UNICODE_CODES = frozenset({"UV301", "UV302"})

# Display limits. A limit cuts only what is displayed, visibly, and never the host or the site:
# those are always shown in full on their own lines.
URL_DISPLAY_LIMIT = 600
"""Characters of the URL shown after the site; the rest is cut with a visible note."""
URL_PREFIX_LIMIT = 160
"""Characters of the URL shown before the site (scheme, userinfo, subdomains)."""
MESSAGE_DISPLAY_LIMIT = 1000
"""Characters of the server's message shown; the rest is cut with a visible note."""
MESSAGE_LINE_LIMIT = 12
"""Lines of the server's message shown."""
FIELD_DISPLAY_LIMIT = 300
"""Characters of any other field (server name, userinfo, warning text) shown."""

_ACTIONS: dict[Decision, tuple[Action, ...]] = {
    Decision.ALLOW: ("open", "decline"),
    Decision.WARN: ("open", "decline"),
    Decision.BLOCK: ("decline",),
}

_PRIMARY: dict[Decision, Action] = {
    Decision.ALLOW: "open",
    Decision.WARN: "decline",
    Decision.BLOCK: "decline",
}
"""The action drawn as the primary button: the safe one whenever urlvet found something, as
browsers' own warning pages do."""

_HEADLINES = {
    Decision.ALLOW: "Open this link?",
    Decision.WARN: "Check this link before you open it",
    Decision.BLOCK: "This link was blocked",
}

_ADVICE = {
    Decision.ALLOW: "urlvet found nothing wrong with this link. Open it only if you expected "
    "this request.",
    Decision.WARN: "urlvet found something that needs your attention. Read the warnings and "
    "open the link only if you trust it.",
    Decision.BLOCK: "urlvet blocked this link because it is unsafe. It will not be opened; "
    "you can only decline.",
}


class MarkedName(BaseModel):
    """A name written in a warning, with the letters a person should look at."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="The name as the warning writes it, such as 'pаypal.com'.")
    spans: tuple[tuple[int, int], ...] = Field(
        description="[start, end) of each foreign letter in the name, to emphasise."
    )


class ConsentWarning(BaseModel):
    """One finding, as a person reads it on the consent screen."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="The rule code, such as UV402.")
    name: str = Field(description="The rule name, such as server-domain-embedded.")
    severity: Severity = Field(description="How serious it is.")
    text: str = Field(description="The explanation in plain language.")
    marked: MarkedName | None = Field(
        None,
        description="A name in the text whose foreign letters the renderings emphasise (a "
        "homoglyph: the Cyrillic а in 'pаypal.com').",
    )


class HrefParts(BaseModel):
    """The normalised URL cut around its host, for emphasis.

    ``scheme + userinfo + subdomains + site + after == href``. The cut follows the URL's
    structure (the host comes after the userinfo), never a text search, so a domain name
    written in the userinfo or the path is never the one emphasised.
    """

    model_config = ConfigDict(frozen=True)

    scheme: str = Field(description="The scheme and '//', such as 'https://'.")
    userinfo: str = Field(description="User name and password with their '@', or ''.")
    subdomains: str = Field(description="The host's labels left of the site, with the dot.")
    site: str = Field(description="The registrable domain (or the whole host for addresses).")
    after: str = Field(description="Port, path, query and fragment after the site.")


class ConsentSummary(BaseModel):
    """Everything a consent screen shows for one URL an MCP server asks the client to open."""

    model_config = ConfigDict(frozen=True)

    decision: Decision = Field(description="allow, warn or block.")
    headline: str = Field(description="A one-line title for the screen.")
    advice: str = Field(description="One or two sentences on what the decision means.")
    actions: tuple[Action, ...] = Field(
        description="The actions to offer: open and decline on allow and warn, decline on block."
    )
    primary_action: Action = Field(
        description="The action to draw as the primary (default) button: open on allow, "
        "decline on warn and block."
    )

    server_name: str | None = Field(
        description="The server's name from the client's configuration (never its serverInfo)."
    )
    server_origin: str = Field(
        description="The server's origin from the client's configuration, or 'stdio'."
    )
    server_label: str = Field(description="How to name the server that asks to a person.")

    url: str = Field(description="The URL exactly as the server sent it.")
    href: str | None = Field(
        description="The URL as the browser will open it (WHATWG); None when unparseable."
    )
    href_parts: HrefParts | None = Field(
        description="The href cut around the registrable domain, for emphasis."
    )
    scheme: str | None = Field(description="The scheme, without the colon.")
    host: str | None = Field(description="The host in A-label (punycode) form.")
    host_unicode: str | None = Field(description="The host in Unicode (U-label) form.")
    host_display: str | None = Field(
        description="The host as the screen shows it: Unicode when safe, punycode when not."
    )
    host_shown_as: HostShownAs = Field(description="How the host is shown.")
    site: str | None = Field(
        description="The registrable domain as shown (Unicode or punycode, as the host is)."
    )
    site_ascii: str | None = Field(description="The registrable domain in A-label form.")
    userinfo: str | None = Field(
        description="The userinfo written before '@' (user[:password]): never the host."
    )

    destination: str | None = Field(
        None,
        description="Where the link really goes when it passes through a redirector (UV213): "
        "the last destination's URL as the browser opens it; None otherwise.",
    )
    fragment_host: str | None = Field(
        None,
        description="A host written in the URL's fragment (after '#', as in "
        "'#@accounts.google.com'), which the page's own script may show as if it were the "
        "site: the browser never sends the fragment anywhere; None when the fragment names "
        "no other host.",
    )
    destination_unknown: bool = Field(
        False,
        description="True when a URL shortener hides where the link goes (UV212).",
    )
    relation: Relation = Field(description="How the link relates to the server.")
    relation_text: str = Field(description="The relation in plain language.")
    certificate: str | None = Field(
        default=None,
        description="What the TLS probe found, in plain language ('issued 2 days ago by ... "
        "for ...'); None when no probe ran (it is off by default).",
    )

    message: str | None = Field(description="The server's message exactly as sent.")
    message_visible: str | None = Field(
        description="The message with control, bidi and invisible characters made visible."
    )
    message_hidden_characters: int = Field(
        description="How many control, bidi or invisible characters the message holds."
    )

    warnings: tuple[ConsentWarning, ...] = Field(
        description="Findings above information, most serious first, with their codes."
    )
    notes: tuple[ConsentWarning, ...] = Field(
        description="Informational findings (a trusted sign-in provider, a local callback)."
    )

    @classmethod
    def from_verdict(
        cls, verdict: Verdict, server: Server | None = None, message: str | None = None
    ) -> ConsentSummary:
        """Build the summary of ``verdict`` for the URL ``server`` asked to open.

        ``server`` is the server as the client's configuration knows it (see
        :func:`urlvet.server.as_server`); pass the message the server sent with the URL.
        """
        parsed = _reparse(verdict.href)
        codes = set(verdict.codes)
        host_display, shown_as, site, site_ascii = _host_display(verdict, codes)
        relation, relation_text = _relation(verdict, parsed, server, site)
        # When the Unicode form is unsafe, no warning may show it as if it were the host: only
        # the lookalike rules (UV30x), whose point is to explain the trick, name it.
        spoof = verdict.host_unicode if shown_as == "punycode" else None
        warnings = tuple(
            _warning(f, spoof, verdict.host)
            for f in verdict.findings
            if f.severity is not Severity.INFO
        )
        notes = tuple(
            _warning(f, spoof, verdict.host)
            for f in verdict.findings
            if f.severity is Severity.INFO
        )
        message_visible = visible(message, keep_newlines=True) if message is not None else None
        hidden_count = len(hidden_characters(message.replace("\n", " "))) if message else 0
        label = _server_label(server)
        return cls(
            decision=verdict.decision,
            headline=_HEADLINES[verdict.decision],
            advice=_ADVICE[verdict.decision],
            actions=_ACTIONS[verdict.decision],
            primary_action=_PRIMARY[verdict.decision],
            server_name=server.name if server is not None else None,
            server_origin=server.origin if server is not None else "unknown",
            server_label=label,
            url=verdict.url,
            href=verdict.href,
            href_parts=_href_parts(parsed) if parsed is not None else None,
            scheme=parsed.scheme if parsed is not None else None,
            host=verdict.host,
            host_unicode=verdict.host_unicode,
            host_display=host_display,
            host_shown_as=shown_as,
            site=site,
            site_ascii=site_ascii,
            userinfo=_userinfo(parsed),
            destination=_destination(verdict),
            fragment_host=fragment_host(parsed),
            destination_unknown="UV212" in codes,
            relation=relation,
            relation_text=relation_text,
            certificate=certificate_text(verdict.tls) if verdict.tls is not None else None,
            message=message,
            message_visible=message_visible,
            message_hidden_characters=hidden_count,
            warnings=warnings,
            notes=notes,
        )

    @property
    def codes(self) -> tuple[str, ...]:
        """The rule codes shown, warnings first."""
        return tuple(w.code for w in (*self.warnings, *self.notes))

    def to_json_dict(self) -> dict[str, Any]:
        """A plain JSON-ready dict (enums as strings)."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """The summary as a JSON document (hidden characters written as escapes)."""
        return json_dumps(self.to_json_dict(), indent=2)

    def to_text(self, colour: bool = False) -> str:
        """Plain text for a terminal; with ``colour``, ANSI emphasis on the decision and site."""
        return _render_text(self, colour)

    def to_markdown(self) -> str:
        """Markdown with every character escaped and no live link."""
        return _render_markdown(self)

    def to_html(self) -> str:
        """A self-contained HTML document: inline CSS only, no script, a strict CSP."""
        return _render_html(self)


def summarize(
    verdict: Verdict, server: Server | None = None, message: str | None = None
) -> ConsentSummary:
    """The consent summary of ``verdict`` (see :meth:`ConsentSummary.from_verdict`)."""
    return ConsentSummary.from_verdict(verdict, server, message)


# -- building ------------------------------------------------------------------------------


def json_dumps(data: Any, indent: int | None = None) -> str:
    """JSON text with Unicode kept readable but every hidden character written as ``\\uXXXX``.

    The data is unchanged (a JSON parser reads the same strings back); only a person reading
    the JSON in a terminal is protected from bidi overrides and invisible characters.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    # json.dumps already escapes C0 controls inside strings; those left are its own line breaks.
    hidden = [h for h in hidden_characters(text) if text[h[0]] not in "\n\r\t"]
    if not hidden:
        return text
    out, last = [], 0
    for i, _, _ in hidden:
        out.append(text[last:i])
        out.append(json.dumps(text[i], ensure_ascii=True)[1:-1])
        last = i + 1
    out.append(text[last:])
    return "".join(out)


_RECENT_DAYS = 60  # younger certificates are dated in days ("issued 2 days ago")


def certificate_text(facts: TlsFacts, now: datetime | None = None) -> str:
    """What the TLS probe found, as the consent screen's 'Certificate' line."""
    if facts.status == "untrusted":
        return f"not trusted ({facts.detail or 'the chain does not verify'})"
    if facts.status == "timeout":
        return "no secure connection within the deadline: not checked"
    if facts.status != "ok" or facts.valid_from is None:
        return f"no secure connection ({facts.detail or 'the handshake failed'})"
    issued = datetime.fromisoformat(facts.valid_from)
    age = ((now or datetime.now(UTC)) - issued).days
    if age < 0:
        when = f"to be valid from {issued:%Y-%m-%d}"
    elif age < _RECENT_DAYS:
        when = "issued today" if age == 0 else f"issued {_plural(age, 'day')} ago"
    else:
        when = f"issued on {issued:%Y-%m-%d}"
    names = ", ".join(facts.names[:3]) or "no names"
    if len(facts.names) > 3:
        names += f" and {len(facts.names) - 3} more"
    by = facts.issuer or "an unnamed authority"
    return f"{when} by {by} for {names} ({facts.version or 'TLS'})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _reparse(href: str | None) -> ParsedURL | None:
    if href is None:
        return None
    try:
        return parse(href)
    except InvalidURL:
        return None


def _host_display(
    verdict: Verdict, codes: set[str]
) -> tuple[str | None, HostShownAs, str | None, str | None]:
    host = verdict.host
    if not host:
        return None, "none", None, None
    site_ascii = verdict.registrable_domain
    if verdict.host_kind in (HostKind.IPV4.value, HostKind.IPV6.value):
        shown = f"[{host}]" if verdict.host_kind == HostKind.IPV6.value else host
        return shown, "address", shown, None
    unicode_host = verdict.host_unicode or host
    if unicode_host == host:
        return host, "unicode", site_ascii, site_ascii
    if codes & _UNSAFE_UNICODE_CODES:
        shown = host
        for f in verdict.findings:
            if f.code == "UV301":
                display = f.evidence.get("display") or f.evidence.get("punycode")
                if isinstance(display, str) and display:
                    shown = display
        return shown, "punycode", site_ascii, site_ascii
    site = to_unicode(site_ascii) if site_ascii else None
    return unicode_host, "unicode+punycode", site, site_ascii


def _server_label(server: Server | None) -> str:
    if server is None:
        return "an unidentified server"
    if server.url is None:
        return f"{server.name} (a local server, stdio)" if server.name else "a local server (stdio)"
    return server.label()


def _relation(
    verdict: Verdict, url: ParsedURL | None, server: Server | None, site_shown: str | None
) -> tuple[Relation, str]:
    codes = set(verdict.codes)
    if url is not None and url.host and is_loopback_host(url):
        return "local", "The link opens a page on this computer, not on a website."
    if "UV403" in codes:
        entry = next(
            (f.evidence.get("trusted_entry") for f in verdict.findings if f.code == "UV403"), None
        )
        who = f" ({entry})" if isinstance(entry, str) else ""
        return (
            "trusted-third-party",
            f"The link goes to a third party your policy trusts{who}, such as a sign-in "
            "provider, not to the server's own site.",
        )
    if server is None:
        return "unknown", "No server was named, so the link was not compared with one."
    if server.parsed is None or server.is_local:
        if "UV405" in codes:
            return (
                "unrelated",
                "The link is outside the sites your policy expects from this server.",
            )
        return (
            "unknown",
            "The server runs on this computer, so it has no website to compare the link with.",
        )
    server_site = server.registrable_domain or (server.host or "")
    link_site = (
        (url.registrable_domain or url.host.rstrip(".").lower()) if url and url.host else None
    )
    if link_site and server_site and link_site == server_site.rstrip(".").lower():
        return "same-site", f"The link is on the server's own site ({server_site})."
    return (
        "unrelated",
        f"The link is not on the server's site: the server is {server_site}, "
        f"the link goes to {site_shown or link_site or 'no website'}.",
    )


def _warning(f: Finding, spoof: str | None, host: str | None) -> ConsentWarning:
    text = f.message
    if spoof and host and spoof != host and not f.code.startswith("UV30"):
        text = text.replace(spoof, host)
    return ConsentWarning(
        code=f.code, name=f.name, severity=f.severity, text=text, marked=_marked(f)
    )


def _marked(f: Finding) -> MarkedName | None:
    """The foreign letters a homoglyph finding (UV302) names, as spans of the name compared."""
    compared = f.evidence.get("compared")
    letters = f.evidence.get("foreign_letters")
    if not isinstance(compared, str) or not isinstance(letters, list):
        return None
    spans = []
    for d in letters:
        at, end = (d.get("at"), d.get("end")) if isinstance(d, dict) else (None, None)
        if isinstance(at, int) and isinstance(end, int) and 0 <= at < end <= len(compared):
            spans.append((at, end))
    return MarkedName(text=compared, spans=tuple(spans)) if spans else None


def _marked_pieces(text: str, marked: MarkedName | None) -> list[tuple[bool, str]]:
    """``text`` cut into (emphasised, piece): the marked name's foreign letters emphasised, at
    the name's first whole occurrence in ``text`` (none when the name is not there, or cut)."""
    if marked is None:
        return [(False, text)]
    at = text.find(marked.text)
    if at < 0:
        return [(False, text)]
    pieces: list[tuple[bool, str]] = []
    last = at
    pieces.append((False, text[:at]))
    for start, end in marked.spans:
        pieces.append((False, text[last : at + start]))
        pieces.append((True, text[at + start : at + end]))
        last = at + end
    pieces.append((False, text[last:]))
    return [p for p in pieces if p[1]]


def _destination(verdict: Verdict) -> str | None:
    for f in verdict.findings:
        if f.code in ("UV213", "UV215"):
            final = f.evidence.get("final_destination") or f.evidence.get("destination")
            if isinstance(final, str) and final:
                return final
    return None


_FRAGMENT_HOST = re.compile(
    r"^#(?:[a-z][a-z0-9+.-]*:)?(?://)?@?(?P<host>(?:[a-z0-9-]{1,63}\.)+[a-z][a-z0-9-]{1,62})"
    r"(?=$|[/?#&:@])",
    re.IGNORECASE,
)


def fragment_host(url: ParsedURL | None) -> str | None:
    """A host written at the start of ``url``'s fragment (``#@accounts.google.com``,
    ``#https://login.example/``, ``#login.example/path``) other than the URL's own, or None.

    A page's script can read its fragment and show that name as if it were the site; the
    browser sends the fragment to no one, so the site is still the URL's host."""
    if url is None or not url.hash:
        return None
    m = _FRAGMENT_HOST.match(url.hash)
    if m is None:
        return None
    host = m.group("host").lower()
    if host == url.host.rstrip(".").lower():
        return None
    return host


def _fragment_line(s: ConsentSummary) -> str | None:
    """What the 'Fragment' row says, or None."""
    if s.fragment_host is None:
        return None
    return (
        f"names {_field(s.fragment_host)}, but the page is on {_field(s.site or s.host or '')}: "
        "what follows '#' is never sent to any site"
    )


def _destination_line(s: ConsentSummary) -> str | None:
    """What the 'Really opens' row says, or None when the link opens what it names."""
    if s.destination is not None:
        return _field(s.destination)
    if s.destination_unknown:
        return "unknown: a URL shortener hides where this link goes until it is opened"
    return None


def _userinfo(url: ParsedURL | None) -> str | None:
    if url is None or not url.has_userinfo:
        return None
    # Shown as written: the href shows it anyway, and it is the server's text, not the user's.
    return url.username + (f":{url.password}" if url.password else "")


def _href_parts(url: ParsedURL) -> HrefParts | None:
    href = url.href
    if url.host_kind not in (HostKind.DOMAIN, HostKind.IPV4, HostKind.IPV6) or not url.host:
        return None
    start = href.find("//")
    if start < 0 or href[:start] != url.scheme + ":":
        return None
    start += 2
    end = len(href)
    for delimiter in "/?#":
        found = href.find(delimiter, start)
        if found != -1:
            end = min(end, found)
    at = href.rfind("@", start, end)
    host_start = at + 1 if at != -1 else start
    host_text = f"[{url.host}]" if url.host_kind is HostKind.IPV6 else url.host
    if href[host_start : host_start + len(host_text)] != host_text:
        return None
    site_start, site_end = host_start, host_start + len(host_text)
    if url.host_kind is HostKind.DOMAIN:
        bare = url.host.rstrip(".")
        site = url.registrable_domain
        if (
            site
            and bare.lower().endswith(site)
            and (len(bare) == len(site) or bare[-len(site) - 1] == ".")
        ):
            site_start = host_start + len(bare) - len(site)
            site_end = host_start + len(bare)
    return HrefParts(
        scheme=href[:start],
        userinfo=href[start:host_start],
        subdomains=href[host_start:site_start],
        site=href[site_start:site_end],
        after=href[site_end:],
    )


# -- display pieces (hidden characters and clipping: urlvet.text) ---------------------------


def _display_url(summary: ConsentSummary) -> list[tuple[str, str]]:
    """The URL as (kind, text) pieces; kind is 'text', 'userinfo', 'site' or 'cut'.

    Every piece already has its hidden characters made visible, and long parts are cut
    visibly: the part before the site in its middle, the part after it at its end.
    """
    pieces: list[tuple[str, str]] = []
    parts = summary.href_parts
    if parts is None:
        raw = summary.href if summary.href is not None else summary.url
        shown, cut = clip(visible(raw), URL_DISPLAY_LIMIT)
        pieces.append(("text", shown))
        if cut:
            pieces.append(("cut", more_characters(cut)))
        return [p for p in pieces if p[1]]
    pieces.append(("text", parts.scheme))
    for kind, text in (("userinfo", parts.userinfo), ("text", parts.subdomains)):
        head, tail, cut = clip_middle(visible(text), URL_PREFIX_LIMIT)
        pieces.append((kind, head))
        if cut:
            pieces.append(("cut", f" … [{cut:,} characters not shown] … "))
            pieces.append((kind, tail))
    pieces.append(("site", visible(parts.site)))
    after, cut = clip(visible(parts.after), URL_DISPLAY_LIMIT)
    pieces.append(("text", after))
    if cut:
        pieces.append(("cut", more_characters(cut)))
    return [p for p in pieces if p[1]]


def _hidden_count(n: int) -> str:
    """'1 hidden or direction-changing character is' / '3 ... characters are'."""
    if n == 1:
        return "1 hidden or direction-changing character is"
    return f"{n} hidden or direction-changing characters are"


def _display_message(summary: ConsentSummary) -> tuple[str, str | None]:
    """(shown message, note on what was cut) for display; the message is never a link."""
    text = summary.message_visible or ""
    lines = text.split("\n")
    notes = []
    if len(lines) > MESSAGE_LINE_LIMIT:
        notes.append(f"{len(lines) - MESSAGE_LINE_LIMIT:,} more lines")
        text = "\n".join(lines[:MESSAGE_LINE_LIMIT])
    text, cut = clip(text, MESSAGE_DISPLAY_LIMIT)
    if cut:
        notes.append(f"{cut:,} more characters")
    note = f"[{' and '.join(notes)} not shown]" if notes else None
    return text, note


def _field(text: str | None, limit: int = FIELD_DISPLAY_LIMIT) -> str:
    if text is None:
        return ""
    shown, cut = clip(visible(text), limit)
    return shown + (more_characters(cut) if cut else "")


def _host_line(summary: ConsentSummary) -> str | None:
    if summary.host_display is None:
        return None
    if summary.host_shown_as == "unicode+punycode":
        return f"{_field(summary.host_unicode)} ({_field(summary.host)})"
    if summary.host_shown_as == "punycode":
        return f"{_field(summary.host_display)} (shown in punycode: its Unicode form is unsafe)"
    return _field(summary.host_display)


_SEVERITY_WORD = {
    Severity.CRITICAL: "critical",
    Severity.HIGH: "high",
    Severity.MEDIUM: "medium",
    Severity.LOW: "low",
    Severity.INFO: "info",
}

_ACTION_LABEL = {"open": "Open", "decline": "Decline"}


# -- plain text ------------------------------------------------------------------------------

_DECISION_COLOURS = {Decision.ALLOW: "green", Decision.WARN: "yellow", Decision.BLOCK: "red"}


def _render_text(s: ConsentSummary, colour: bool) -> str:
    import click  # its styling is the one colour path (as the CLI's); only for colour

    def emph(text: str) -> str:
        return click.style(text, bold=True, underline=True) if colour else text

    head = s.decision.value.upper()
    if colour:
        head = click.style(head, fg=_DECISION_COLOURS[s.decision], bold=True)
    lines = [f"{head}: {s.headline}", s.advice, ""]
    rows: list[tuple[str, str]] = [
        ("Asked by", f"{_field(s.server_label)} — as named in your configuration")
    ]
    url_text = "".join(emph(t) if kind == "site" else t for kind, t in _display_url(s))
    rows.append(("Opens", url_text))
    if s.site:
        rows.append(("Site", emph(_field(s.site))))
    host = _host_line(s)
    if host is not None:
        rows.append(("Host", host))
    if s.userinfo is not None:
        rows.append(("Userinfo", f"{_field(s.userinfo)}  (written before '@': NOT the site)"))
    destination = _destination_line(s)
    if destination is not None:
        rows.append(("Really opens", destination))
    fragment = _fragment_line(s)
    if fragment is not None:
        rows.append(("Fragment", fragment))
    rows.append(("Relation", _field(s.relation_text)))
    if s.certificate is not None:
        rows.append(("Certificate", _field(s.certificate)))
    for label, value in rows:
        lines.append(f"{label + ':':<10} {value}")
    if s.message is not None:
        text, note = _display_message(s)
        lines.append("Message from the server (as text):")
        lines.extend(f"  | {line}" for line in text.split("\n"))
        if note:
            lines.append(f"  {note}")
        if s.message_hidden_characters:
            lines.append(f"  ({_hidden_count(s.message_hidden_characters)} made visible as ⟨U+…⟩)")
    if s.warnings:
        lines.append("Warnings:")
        for w in s.warnings:
            text = "".join(
                click.style(piece, reverse=True) if em and colour else piece
                for em, piece in _marked_pieces(_field(w.text), w.marked)
            )
            lines.append(f"  ! {w.code} [{_SEVERITY_WORD[w.severity]}] {text}")
    if s.notes:
        lines.append("Notes:")
        for w in s.notes:
            lines.append(f"  i {w.code} {_field(w.text)}")
    lines.append("Actions:  " + "  ".join(_text_action(s, a) for a in _button_order(s)))
    return "\n".join(lines)


def _button_order(s: ConsentSummary) -> tuple[Action, ...]:
    """The actions, primary first."""
    return tuple(sorted(s.actions, key=lambda a: a != s.primary_action))


def _text_action(s: ConsentSummary, action: Action) -> str:
    label = f"[{_ACTION_LABEL[action]}]"
    return f"{label} (default)" if action == s.primary_action and len(s.actions) > 1 else label


# -- Markdown --------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


def _md(text: str) -> str:
    """Escape every ASCII punctuation character, so nothing is markup, HTML or a link."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_block(text: str) -> str:
    fence_len = max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    fence = "`" * fence_len
    return f"{fence}text\n{text}\n{fence}"


def _render_markdown(s: ConsentSummary) -> str:
    out = [f"### {_md(s.decision.value.upper())}: {_md(s.headline)}", "", _md(s.advice), ""]
    url_md = "".join(f"**{_md(t)}**" if kind == "site" else _md(t) for kind, t in _display_url(s))
    rows = [
        ("Asked by", f"{_md(_field(s.server_label))} — as named in your configuration"),
        ("Opens", url_md),
    ]
    if s.site:
        rows.append(("Site", f"**{_md(_field(s.site))}**"))
    host = _host_line(s)
    if host is not None:
        rows.append(("Host", _md(host)))
    if s.userinfo is not None:
        rows.append(("Userinfo", f"{_md(_field(s.userinfo))} \\(written before @: NOT the site\\)"))
    destination = _destination_line(s)
    if destination is not None:
        rows.append(("Really opens", f"**{_md(destination)}**"))
    fragment = _fragment_line(s)
    if fragment is not None:
        rows.append(("Fragment", _md(fragment)))
    rows.append(("Relation", _md(_field(s.relation_text))))
    if s.certificate is not None:
        rows.append(("Certificate", _md(_field(s.certificate))))
    out.extend(f"- **{label}:** {value}" for label, value in rows)
    if s.message is not None:
        text, note = _display_message(s)
        out += ["", "**Message from the server** \\(shown as text\\):", "", _md_block(text)]
        if note:
            out.append(_md(note))
    if s.warnings:
        out += ["", "**Warnings**", ""]
        out += [
            f"- **{_md(w.code)}** \\({_md(_SEVERITY_WORD[w.severity])}\\): "
            + "".join(
                f"**{_md(piece)}**" if em else _md(piece)
                for em, piece in _marked_pieces(_field(w.text), w.marked)
            )
            for w in s.warnings
        ]
    if s.notes:
        out += ["", "**Notes**", ""]
        out += [f"- **{_md(w.code)}**: {_md(_field(w.text))}" for w in s.notes]
    out += [
        "",
        "**Actions:** "
        + " · ".join(
            f"**{_ACTION_LABEL[a]}** \\(default\\)"
            if a == s.primary_action and len(s.actions) > 1
            else _ACTION_LABEL[a]
            for a in _button_order(s)
        ),
    ]
    return "\n".join(out) + "\n"


# -- HTML ------------------------------------------------------------------------------------

_CSS = """
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;padding:24px;background:#eef1f5;font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Noto Sans","DejaVu Sans",sans-serif;color:#1c2330}
.card{max-width:720px;margin:0 auto;background:#fff;border-radius:12px;overflow:hidden;
box-shadow:0 1px 3px rgba(16,24,40,.12),0 8px 24px rgba(16,24,40,.08);border:1px solid #d8dde6}
.band{padding:18px 24px;border-bottom:1px solid #e4e7ec}
.allow .band{background:#ecfdf3;border-top:6px solid #12b76a}
.warn .band{background:#fffaeb;border-top:6px solid #f79009}
.block .band{background:#fef3f2;border-top:6px solid #d92d20}
.badge{display:inline-block;font-size:12px;font-weight:700;letter-spacing:.06em;padding:2px 10px;
border-radius:999px;color:#fff;vertical-align:middle}
.allow .badge{background:#039855}.warn .badge{background:#dc6803}.block .badge{background:#b42318}
h1{display:inline;font-size:20px;margin:0 0 0 10px;vertical-align:middle}
.advice{margin:8px 0 0;color:#344054}
.body{padding:8px 24px 20px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:10px 16px;margin:12px 0}
dt{font-weight:600;color:#475467;font-size:13px;text-transform:uppercase;letter-spacing:.04em;
padding-top:2px}
dd{margin:0;min-width:0}
.url{font:14px/1.45 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;background:#f2f4f7;
border:1px solid #e4e7ec;border-radius:8px;padding:8px 10px;overflow-wrap:anywhere;
word-break:break-all;unicode-bidi:isolate;direction:ltr;color:#475467}
.site{font-weight:800;color:#101828;background:#fff3b0;border-radius:3px;padding:0 2px;
text-decoration:underline;text-decoration-thickness:2px;text-underline-offset:3px}
.sitename{font-size:18px;unicode-bidi:isolate;direction:ltr}
.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;overflow-wrap:anywhere;
unicode-bidi:isolate;direction:ltr}
.muted{color:#667085;font-size:13px}
.cut{color:#b42318;font-style:italic;font-family:system-ui,sans-serif;font-size:12px}
.userinfo{color:#b42318;font-weight:600;text-decoration:line-through;text-decoration-thickness:1px}
.mark{color:#b42318;background:#fee4e2;border-radius:3px;padding:0 2px;font-size:12px;
font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-style:normal}
.message{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;margin:6px 0 0;
padding:10px 12px;background:#f9fafb;border-left:4px solid #98a2b3;border-radius:4px;
unicode-bidi:isolate;font-size:14px;max-height:20em;overflow:auto}
h2{font-size:14px;margin:18px 0 6px;color:#344054;text-transform:uppercase;letter-spacing:.04em}
ul{list-style:none;padding:0;margin:0}
li{padding:8px 10px;border-radius:8px;margin:6px 0;background:#f9fafb;border:1px solid #eaecf0;
overflow-wrap:anywhere}
.sev{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;padding:1px 7px;
border-radius:4px;margin-right:6px;color:#fff;background:#667085}
.sev-critical{background:#912018}.sev-high{background:#d92d20}.sev-medium{background:#dc6803}
.sev-low{background:#ca8504}.sev-info{background:#1570ef}
.foreign{font-weight:800;color:#b42318;background:#fee4e2;border-radius:3px;padding:0 1px;
text-decoration:underline}
.code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;font-weight:700;margin-right:6px}
.actions{display:flex;gap:12px;justify-content:flex-end;padding:16px 24px;border-top:1px solid #e4e7ec;
background:#fcfcfd}
.btn{display:inline-block;padding:9px 20px;border-radius:8px;font-weight:600;border:1px solid #d0d5dd;
background:#fff;color:#344054}
.btn-primary{background:#155eef;border-color:#155eef;color:#fff}
.destination{color:#b42318;overflow-wrap:anywhere}
.foot{padding:0 24px 14px;background:#fcfcfd}
""".strip()

_CSS_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    f"form-action 'none'; img-src 'none'; font-src 'none'; style-src 'sha256-{_CSS_HASH}'"
)
"""The policy the HTML card declares: nothing may load or run but its one hashed stylesheet."""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


_MARK = re.compile(r"⟨U\+[0-9A-F]{4,6}⟩")


def _hv(text: str) -> str:
    """Escape ``text`` and set the ⟨U+XXXX⟩ marks of hidden characters apart visually."""
    out, last = [], 0
    for m in _MARK.finditer(text):
        out.append(_h(text[last : m.start()]))
        out.append(f'<span class="mark">{_h(m.group())}</span>')
        last = m.end()
    out.append(_h(text[last:]))
    return "".join(out)


def _render_html(s: ConsentSummary) -> str:
    cls = s.decision.value
    rows = _html_rows(s)
    body = ["<dl>"] + [f"<dt>{_h(k)}</dt><dd>{v}</dd>" for k, v in rows] + ["</dl>"]
    body.extend(_html_message(s))
    if s.warnings:
        body.append('<h2>Warnings</h2><ul id="warnings">')
        body.extend(_html_finding(w) for w in s.warnings)
        body.append("</ul>")
    if s.notes:
        body.append('<h2>Notes</h2><ul id="notes">')
        body.extend(_html_finding(w) for w in s.notes)
        body.append("</ul>")
    buttons = "".join(
        f'<span class="btn btn-{a} btn-primary" data-action="{a}">{_ACTION_LABEL[a]}</span>'
        if a == s.primary_action
        else f'<span class="btn btn-{a}" data-action="{a}">{_ACTION_LABEL[a]}</span>'
        for a in ("decline", "open")
        if a in s.actions
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_h(CONTENT_SECURITY_POLICY)}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>urlvet: {_h(s.headline)}</title>"
        f"<style>{_CSS}</style></head>"
        f'<body><main class="card {cls}" id="card" data-decision="{cls}">'
        f'<div class="band"><span class="badge">{_h(s.decision.value.upper())}</span>'
        f"<h1>{_h(s.headline)}</h1>"
        f'<p class="advice">{_h(s.advice)}</p></div>'
        f'<div class="body">{"".join(body)}</div>'
        f'<div class="actions" id="actions">{buttons}</div>'
        '<div class="foot muted">Checked by urlvet. Codes such as UV401 are explained by '
        '<span class="mono">urlvet rule CODE</span>.</div>'
        "</main></body></html>\n"
    )


def _html_rows(s: ConsentSummary) -> list[tuple[str, str]]:
    """The card's (label, HTML) rows: who asks, what opens and where it really leads."""
    url_html = "".join(_html_url_piece(kind, t) for kind, t in _display_url(s))
    rows = [
        (
            "Asked by",
            f'<div id="server">{_hv(_field(s.server_label))}</div>'
            '<div class="muted">as named in your configuration, not by the server</div>',
        ),
        ("Opens", f'<div class="url" id="url">{url_html}</div>'),
    ]
    if s.site:
        rows.append(
            ("Site", f'<strong class="site sitename" id="site">{_hv(_field(s.site))}</strong>')
        )
    host = _host_line(s)
    if host is not None:
        rows.append(("Host", f'<span class="mono" id="host">{_hv(host)}</span>'))
    if s.userinfo is not None:
        rows.append(
            (
                "Userinfo",
                f'<span class="mono userinfo">{_hv(_field(s.userinfo))}</span> '
                '<span class="muted">written before “@”: this is not the site</span>',
            )
        )
    destination = _destination_line(s)
    if destination is not None:
        rows.append(
            (
                "Really opens",
                f'<strong class="mono destination" id="destination">{_hv(destination)}</strong>',
            )
        )
    fragment = _fragment_line(s)
    if fragment is not None:
        rows.append(("Fragment", f'<span class="mono" id="fragment">{_hv(fragment)}</span>'))
    rows.append(("Relation", f'<span id="relation">{_hv(_field(s.relation_text))}</span>'))
    if s.certificate is not None:
        rows.append(("Certificate", f'<span id="certificate">{_hv(_field(s.certificate))}</span>'))
    return rows


def _html_message(s: ConsentSummary) -> list[str]:
    """The server's message as the card shows it, with what was hidden or cut (none: [])."""
    if s.message is None:
        return []
    text, note = _display_message(s)
    body = [
        "<h2>Message from the server</h2>",
        f'<div class="message" id="message">{_hv(text)}</div>',
    ]
    extra = []
    if note:
        extra.append(note)
    if s.message_hidden_characters:
        extra.append(f"{_hidden_count(s.message_hidden_characters)} shown as ⟨U+…⟩")
    if extra:
        body.append(f'<p class="muted">{_h(" · ".join(extra))}</p>')
    return body


def _html_url_piece(kind: str, text: str) -> str:
    if kind == "site":
        return f'<strong class="site">{_hv(text)}</strong>'
    if kind == "userinfo":
        return f'<span class="userinfo" title="not the site">{_hv(text)}</span>'
    if kind == "cut":
        return f'<span class="cut">{_h(text)}</span>'
    return _hv(text)


def _html_finding(w: ConsentWarning) -> str:
    sev = _SEVERITY_WORD[w.severity]
    text = "".join(
        f'<strong class="foreign">{_hv(piece)}</strong>' if em else _hv(piece)
        for em, piece in _marked_pieces(_field(w.text), w.marked)
    )
    return (
        f'<li><span class="sev sev-{sev}">{_h(sev)}</span>'
        f'<span class="code">{_h(w.code)}</span>{text}</li>'
    )


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "Action",
    "ConsentSummary",
    "ConsentWarning",
    "HrefParts",
    "MarkedName",
    "Relation",
    "json_dumps",
    "summarize",
    "visible",
]
