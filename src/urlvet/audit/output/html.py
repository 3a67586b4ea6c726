"""HTML: one self-contained page to look at an audit: the decisions by rule and by host, the
top sites, a chart of findings over the input, and a table of the URLs that warn or block
that filters by decision and by rule.

The page loads nothing and runs nothing. Its Content-Security-Policy (a meta tag, as the
consent card's) allows no script, no image, no font, no connection, and only the page's own
style sheet, by its hash; the chart is inline SVG drawn with presentation attributes; the
table filters with radio buttons and CSS alone. Every piece of the input (URLs, messages,
file names) is escaped, with hidden characters made visible, so a URL that carries markup is
shown as text. The writer streams: it keeps counts, and the first
:data:`DISPLAY_LIMIT` flagged occurrences for the table, never the whole input.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from urlvet.audit.output.base import RunInfo
from urlvet.audit.output.record import Record
from urlvet.text import printable
from urlvet.url import site_of

if TYPE_CHECKING:
    from urlvet.audit.report import Summary
    from urlvet.audit.sources import Diagnostic, Occurrence

_BASELINE_MARK = '<div class="muted">baseline</div>'
ACCEPTED_NOTE = " (accepted by the baseline)"
"""Said after a finding in the table that the baseline accepts where it stands."""
DISPLAY_LIMIT = 2000
"""Flagged occurrences (warn and block) listed in the table; the counts cover them all."""
TOP_ROWS = 15
"""Rows in the tables of hosts and sites."""
CHART_BINS = 60
"""Bars in the chart of findings over the input."""
HOSTS_KEPT = 100_000
"""Distinct hosts (and distinct URLs a rule) counted one by one; further hosts are counted
together as (other hosts), further URLs of a rule not at all."""
DIAGNOSTICS_SHOWN = 200
"""Input problems listed on the page."""
_URL_CHARS = 300

_DECISIONS = ("block", "warn", "allow")
_SAFE_CLASS = re.compile(r"[^A-Za-z0-9_-]")

_CSS = """
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;padding:24px;background:#eef1f5;font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Noto Sans","DejaVu Sans",sans-serif;color:#1c2330}
main{max-width:1100px;margin:0 auto}
section{background:#fff;border:1px solid #d8dde6;border-radius:10px;padding:16px 20px;margin:0 0 16px;
box-shadow:0 1px 3px rgba(16,24,40,.08)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:15px;margin:0 0 10px;color:#344054;
text-transform:uppercase;letter-spacing:.04em}
.muted{color:#667085}
.tiles{display:flex;gap:12px;flex-wrap:wrap;margin-top:12px}
.tile{flex:1 1 120px;border-radius:8px;padding:10px 14px;background:#f2f4f7}
.tile b{display:block;font-size:22px}
.tile.block{background:#fef3f2;color:#912018}.tile.warn{background:#fffaeb;color:#93370d}
.tile.allow{background:#ecfdf3;color:#05603a}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.cols section{margin:0 0 16px}
@media (max-width:960px){.cols{grid-template-columns:1fr;gap:0}}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eaecf0;vertical-align:top}
th{font-size:12px;color:#475467;text-transform:uppercase;letter-spacing:.03em}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.url{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px;overflow-wrap:anywhere;
word-break:break-all;unicode-bidi:isolate;direction:ltr}
.tag{display:inline-block;font-size:11px;font-weight:700;padding:1px 8px;border-radius:999px;color:#fff}
.tag.block{background:#b42318}.tag.warn{background:#dc6803}.tag.allow{background:#039855}
.code{font-weight:700}
.filters{display:flex;flex-wrap:wrap;gap:6px;margin:0 0 10px;align-items:center}
.filters input{position:absolute;opacity:0;pointer-events:none}
.filters label{border:1px solid #d0d5dd;border-radius:999px;padding:2px 10px;cursor:pointer;
background:#fff;font-size:12.5px}
.filters input:checked+label{background:#155eef;border-color:#155eef;color:#fff}
.filters .sep{width:12px}
.rows{flex:1 1 100%}
.rows table{table-layout:fixed}
.rows th:nth-child(1){width:72px}.rows th:nth-child(2){width:160px}.rows th:nth-child(3){width:42%}
.note{margin:8px 0 0}
svg text{font:11px system-ui,sans-serif}
"""


def _stylesheet(codes: list[str]) -> str:
    """The page's CSS: the fixed rules and one filter rule a rule code (radio buttons, no
    script: a checked filter hides the rows without its class)."""
    rules = [
        "#d-block:checked~.rows tr.row:not(.block),#d-warn:checked~.rows tr.row:not(.warn)"
        "{display:none}"
    ]
    rules += [f"#r-{c}:checked~.rows tr.row:not(.{c}){{display:none}}" for c in codes]
    return _CSS + "\n".join(rules) + "\n"


def content_security_policy(css: str) -> str:
    """The page's policy: nothing loads, nothing runs, only this style sheet applies."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; "
        f"form-action 'none'; img-src 'none'; font-src 'none'; style-src 'sha256-{digest}'"
    )


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _shown(text: str) -> str:
    """Input text as the page shows it: hidden characters visible, cut, escaped."""
    return _h(printable(text, _URL_CHARS))


def host_of(href: str | None, url: str) -> str:
    """The host of a URL as a browser opens it (the WHATWG href), without userinfo and port;
    '' when it has none (javascript:, data:, a URL that does not parse)."""
    text = href if href is not None else url
    start = text.find("://")
    if start < 0:
        return ""
    authority = re.split(r"[/?#\\]", text[start + 3 :], maxsplit=1)[0]
    host = authority.rsplit("@", 1)[-1]
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if ":" in host else host


@dataclass
class _Row:
    decision: str
    codes: tuple[str, ...]
    where: str
    url: str
    findings: tuple[str, ...]
    accepted: bool = False
    """Every finding of the row is accepted by the baseline (it does not fail the run)."""


@dataclass
class _Chart:
    """Findings over the input: occurrences in order, in bins that double in width as the
    input grows, so that there are never more than ``2 * CHART_BINS`` of them."""

    width: int = 1
    bins: list[list[int]] = field(default_factory=list)  # [block, warn, allow] per bin
    seen: int = 0

    def add(self, decision: int) -> None:
        index = self.seen // self.width
        self.seen += 1
        if index == len(self.bins):
            self.bins.append([0, 0, 0])
        self.bins[index][decision] += 1
        if len(self.bins) > 2 * CHART_BINS:
            self.bins = [
                [a + b for a, b in zip(*self.bins[i : i + 2], strict=False)]
                if i + 1 < len(self.bins)
                else self.bins[i]
                for i in range(0, len(self.bins), 2)
            ]
            self.width *= 2


class HtmlWriter:
    """Writes the audit as one self-contained HTML page (see the module's docstring)."""

    def __init__(self, stream: TextIO, info: RunInfo) -> None:
        self.stream = stream
        self.info = info
        self._by_rule: Counter[str] = Counter()
        self._rule_urls: dict[str, set[int]] = {}
        self._names: dict[str, str] = {}
        self._hosts: dict[str, list[int]] = {}
        self._sites: dict[str, list[int]] = {}
        self._rows: list[_Row] = []
        self._flagged = 0
        self._chart = _Chart()
        self._diagnostics: list[Diagnostic] = []
        self._diagnostic_count = 0
        self._site_cache: dict[str, str] = {}

    def start(self) -> None:
        """Nothing is written before the end: the page opens with the totals."""

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """Count one occurrence; keep it for the table when it warns or blocks."""
        decision = record.decision.value
        index = _DECISIONS.index(decision)
        self._chart.add(index)
        host = host_of(record.href, record.url)
        self._count(self._hosts, host or "(no host)", index)
        self._count(self._sites, self._site(host) or "(no site)", index)
        for f in record.findings:
            self._by_rule[f.code] += 1
            self._names[f.code] = f.name
            urls = self._rule_urls.setdefault(f.code, set())
            if len(urls) < HOSTS_KEPT:
                urls.add(hash(record.normalised_url))  # a number, not the URL: bounded memory
        if index == 2:
            return
        self._flagged += 1
        if len(self._rows) < DISPLAY_LIMIT:
            findings = tuple(
                f"{f.code} {f.name} [{f.severity.value}]: {f.message}"
                + (ACCEPTED_NOTE if f.code in accepted else "")
                for f in record.findings
            )
            where = f"{occ.path}:{occ.line}:{occ.column}"
            whole = bool(accepted) and all(f.code in accepted for f in record.findings)
            self._rows.append(_Row(decision, record.codes, where, record.url, findings, whole))

    def diagnostic(self, diag: Diagnostic) -> None:
        """Keep an input problem for the page (the first :data:`DIAGNOSTICS_SHOWN`)."""
        self._diagnostic_count += 1
        if len(self._diagnostics) < DIAGNOSTICS_SHOWN:
            self._diagnostics.append(diag)

    def _count(self, table: dict[str, list[int]], key: str, index: int) -> None:
        counts = table.get(key)
        if counts is None:
            if len(table) >= HOSTS_KEPT:
                key = "(other hosts)"
                counts = table.setdefault(key, [0, 0, 0])
            else:
                counts = table[key] = [0, 0, 0]
        counts[index] += 1

    def _site(self, host: str) -> str:
        if not host or host.startswith("[") or host.replace(".", "").isdigit():
            return host
        site = self._site_cache.get(host)
        if site is None:
            site = site_of(host)[0] or host
            if len(self._site_cache) < HOSTS_KEPT:
                self._site_cache[host] = site
        return site

    def finish(self, summary: Summary) -> None:
        """Write the page."""
        codes = sorted(self._by_rule)
        css = _stylesheet([_SAFE_CLASS.sub("", c) for c in codes])
        parts = [
            _head(css),
            self._overview(summary),
            self._chart_section(),
            '<div class="cols">',
            self._rule_section(codes),
            self._top_section("Top hosts", "host", self._hosts),
            "</div>",
            self._top_section("Top sites", "site", self._sites),
            self._table_section(codes),
            self._diagnostic_section(),
            "</main></body></html>\n",
        ]
        self.stream.write("\n".join(p for p in parts if p))

    def _overview(self, s: Summary) -> str:
        tiles = "".join(
            f'<div class="tile {d}"><b>{s.by_decision.get(d, 0):,}</b>{d}</div>' for d in _DECISIONS
        )
        redacted = " Secrets in URLs are redacted." if self.info.redacted else ""
        if s.accepted:
            redacted += (
                f" {s.accepted:,} URL occurrences with findings are accepted by the baseline:"
                " the table marks them, and they do not fail the run."
            )
        return (
            '<main><section id="overview"><h1>urlvet audit</h1>'
            f'<p class="muted">{s.sources:,} files, {s.lines:,} lines, {s.urls:,} URL '
            f"occurrences ({s.vetted:,} distinct vetted), {s.failing:,} failing the run; "
            f"urlvet {_h(self.info.version)}.{redacted}</p>"
            f'<div class="tiles">{tiles}</div></section>'
        )

    def _chart_section(self) -> str:
        bins = self._chart.bins
        if not bins:
            return ""
        return (
            '<section id="chart"><h2>Findings over the input</h2>'
            + chart_svg(bins, self._chart.width)
            + '<p class="muted note">Each bar is '
            f"{self._chart.width:,} URL occurrences in input order: blocked (red) and warned "
            "(amber).</p></section>"
        )

    def _rule_section(self, codes: list[str]) -> str:
        rows = "".join(
            f'<tr><td class="code">{_h(c)}</td><td>{_h(self._names[c])}</td>'
            f'<td class="n">{self._by_rule[c]:,}</td>'
            f'<td class="n">{len(self._rule_urls[c]):,}</td></tr>'
            for c in sorted(codes, key=lambda c: (-self._by_rule[c], c))
        )
        return (
            '<section id="rules"><h2>Decisions by rule</h2><table><thead><tr><th>Rule</th>'
            '<th>Name</th><th class="n">Occurrences</th><th class="n">URLs</th></tr></thead>'
            f"<tbody>{rows or '<tr><td colspan=4>No findings.</td></tr>'}</tbody></table></section>"
        )

    def _top_section(self, title: str, ident: str, table: dict[str, list[int]]) -> str:
        # Most flagged first (block and warn), then most blocked, then most seen.
        ranked = sorted(
            table.items(),
            key=lambda kv: (-(kv[1][0] + kv[1][1]), -kv[1][0], -kv[1][2], kv[0]),
        )
        rows = "".join(
            f'<tr><td class="url">{_shown(name)}</td><td class="n">{c[0]:,}</td>'
            f'<td class="n">{c[1]:,}</td><td class="n">{c[2]:,}</td></tr>'
            for name, c in ranked[:TOP_ROWS]
        )
        return (
            f'<section id="{ident}s"><h2>{title}</h2><table><thead><tr><th>{ident}</th>'
            '<th class="n">block</th><th class="n">warn</th><th class="n">allow</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></section>"
        )

    def _table_section(self, codes: list[str]) -> str:
        filters = [
            '<input type="radio" name="d" id="d-all" checked><label for="d-all">all</label>',
            '<input type="radio" name="d" id="d-block"><label for="d-block">block</label>',
            '<input type="radio" name="d" id="d-warn"><label for="d-warn">warn</label>',
            '<span class="sep"></span>',
            '<input type="radio" name="r" id="r-all" checked><label for="r-all">every rule</label>',
        ]
        for c in codes:
            safe = _SAFE_CLASS.sub("", c)
            filters.append(
                f'<input type="radio" name="r" id="r-{safe}"><label for="r-{safe}">{_h(c)}</label>'
            )
        rows = "".join(
            f'<tr class="row {r.decision} {" ".join(_SAFE_CLASS.sub("", c) for c in r.codes)}">'
            f'<td><span class="tag {r.decision}">{r.decision}</span>'
            f"{_BASELINE_MARK if r.accepted else ''}</td>"
            f'<td class="url">{_shown(r.where)}</td><td class="url">{_shown(r.url)}</td>'
            f"<td>{''.join(f'<div>{_h(printable(f, 1000))}</div>' for f in r.findings)}</td></tr>"
            for r in self._rows
        )
        more = ""
        if self._flagged > len(self._rows):
            more = (
                f'<p class="muted note">The first {len(self._rows):,} of {self._flagged:,} '
                "flagged occurrences; the JSON Lines report lists them all.</p>"
            )
        return (
            '<section id="flagged"><h2>URLs that warn or block</h2><div class="filters">'
            + "".join(filters)
            + '<div class="rows"><table><thead><tr><th>Decision</th>'
            "<th>Where</th><th>URL</th><th>Findings</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div></div>{more}</section>"
        )

    def _diagnostic_section(self) -> str:
        if not self._diagnostic_count:
            return ""
        items = "".join(
            f'<li><span class="code">{_h(d.level)}</span> <span class="url">{_shown(str(d))}'
            "</span></li>"
            for d in self._diagnostics
        )
        return (
            f'<section id="input"><h2>Input not audited ({self._diagnostic_count:,})</h2>'
            f"<ul>{items}</ul></section>"
        )


def _head(css: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_h(content_security_policy(css))}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>urlvet audit</title><style>{css}</style></head><body>"
    )


def chart_svg(bins: list[list[int]], width: int) -> str:
    """Stacked bars of blocked and warned occurrences per bin, as inline SVG."""
    w, h, left, bottom = 1040, 180, 40, 22
    top = max((b[0] + b[1] for b in bins), default=0) or 1
    step = (w - left) / len(bins)
    bars = []
    for i, (block, warn, _allow) in enumerate(bins):
        x = left + i * step
        hb = (h - bottom - 10) * block / top
        hw = (h - bottom - 10) * warn / top
        y = h - bottom
        bars.append(
            f'<rect x="{x:.1f}" y="{y - hb:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{hb:.1f}" fill="#d92d20"/>'
            f'<rect x="{x:.1f}" y="{y - hb - hw:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{hw:.1f}" fill="#f79009"/>'
        )
    axis = (
        f'<line x1="{left}" y1="{h - bottom}" x2="{w}" y2="{h - bottom}" stroke="#98a2b3"/>'
        f'<text x="{left - 6}" y="16" text-anchor="end" fill="#475467">{top:,}</text>'
        f'<text x="{left - 6}" y="{h - bottom}" text-anchor="end" fill="#475467">0</text>'
        f'<text x="{left}" y="{h - 6}" fill="#475467">start of input</text>'
        f'<text x="{w}" y="{h - 6}" text-anchor="end" fill="#475467">'
        f"end ({len(bins) * width:,} occurrences at most)</text>"
    )
    return (
        f'<svg id="chart-svg" role="img" aria-label="Findings over the input" '
        f'viewBox="0 0 {w} {h}" width="100%" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(bars)}{axis}</svg>"
    )
