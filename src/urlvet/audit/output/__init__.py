"""Writers for ``urlvet audit``: text, json, jsonl, SARIF, GitHub annotations and HTML.

Every writer is a rendering of records (verdicts reduced for reports, see ``record``) with
the location of each occurrence; none decides anything. Writers stream: only the text writer
keeps findings until the end, grouped and capped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from urlvet.audit.output.base import RunInfo

if TYPE_CHECKING:
    from urlvet.audit.report import Writer

FORMATS = ("text", "json", "jsonl", "sarif", "github", "html")


def make_writer(fmt: str, stream: TextIO, info: RunInfo) -> Writer:
    """The writer for an output format."""
    if fmt == "text":
        from urlvet.audit.output.text import TextWriter

        return TextWriter(stream, info)
    if fmt in ("json", "jsonl"):
        from urlvet.audit.output.jsonl import JsonWriter

        return JsonWriter(stream, info, array=fmt == "json")
    if fmt == "sarif":
        from urlvet.audit.output.sarif import SarifWriter

        return SarifWriter(stream, info)
    if fmt == "github":
        from urlvet.audit.output.github import GithubWriter

        return GithubWriter(stream, info)
    if fmt == "html":
        from urlvet.audit.output.html import HtmlWriter

        return HtmlWriter(stream, info)
    raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "RunInfo", "make_writer"]
