"""The MCP protocol's example messages and JSON Schemas, kept as test data in tests/data/mcp/.

The spec text is the tests' source of truth: each page's code blocks are stored verbatim, one
file a block in page order (``tests/data/mcp/extract.py`` refreshes them from the spec), and
the 2026-07-28 ``examples/`` files and both revisions' ``schema.json`` as published; never
retyped here. Source and licence: tests/data/README.md.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator

MCP_DATA = Path(__file__).resolve().parents[1] / "data" / "mcp"
DRAFT_TEXT = "draft/user_interaction.mdx"
"""The draft "User Interaction" page (the proposal's docs/.../client/user_interaction.mdx)."""


def strip_jsonc(text: str) -> str:
    """JSON text from JSONC: ``//`` comments and trailing commas removed, strings untouched."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\":
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


@cache
def code_blocks(page: str) -> tuple[Any, ...]:
    """Every ``json``/``jsonc`` code block of a spec page (``2025-11-25/elicitation.mdx``),
    decoded, in page order."""
    folder = MCP_DATA / page.removesuffix(".mdx")
    files = sorted(folder.glob("*.json*"))
    if not files:
        raise FileNotFoundError(f"no code blocks of {page} in {folder}")
    return tuple(json.loads(strip_jsonc(f.read_text("utf-8"))) for f in files)


@cache
def example_files() -> dict[str, Any]:
    """The 2026-07-28 examples/ files, decoded, by file name."""
    folder = MCP_DATA / "2026-07-28" / "examples"
    return {p.name: json.loads(p.read_text("utf-8")) for p in sorted(folder.glob("*.json"))}


@cache
def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((MCP_DATA / version / "schema.json").read_text("utf-8"))
    return loaded


def validator(version: str, definition: str) -> Draft202012Validator:
    """A validator for one definition of an official schema (``2025-11-25`` or ``2026-07-28``)."""
    schema = _schema(version)
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})


# The draft's additions, written from its text (the draft has no schema.json of its own here).
# Its diff adds to schema/draft/schema.json: CreateUserInteractionRequest, UAInteraction
# ("message": {"$ref": "#/definitions/TextContent"}) and CreateUserInteractionResult; the -32003
# error and the -32099 decline are in user_interaction.mdx, "Requiring Interaction as an Error
# Response" and "Client Response". JSON-RPC and TextContent are as in the draft's base schema.
_DRAFT_DEFS: dict[str, Any] = {
    "RequestId": {"type": ["string", "integer"]},
    "TextContent": {
        "type": "object",
        "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
        "required": ["type", "text"],
    },
    "UAInteraction": {
        "type": "object",
        "properties": {
            "url": {"type": "string"},
            "message": {"$ref": "#/definitions/TextContent"},
        },
        "required": ["url"],
    },
    "CreateUserInteractionRequest": {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"$ref": "#/definitions/RequestId"},
            "method": {"const": "interaction/create"},
            "params": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "type": {"type": "string"},
                    "interaction": {"$ref": "#/definitions/UAInteraction"},
                },
                "required": ["id", "interaction", "type"],
            },
        },
        "required": ["jsonrpc", "id", "method", "params"],
    },
    "CreateUserInteractionResponse": {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"$ref": "#/definitions/RequestId"},
            "result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
        },
        "required": ["jsonrpc", "id", "result"],
    },
    "JSONRPCError": {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"$ref": "#/definitions/RequestId"},
            "error": {
                "type": "object",
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
                "required": ["code", "message"],
            },
        },
        "required": ["jsonrpc", "id", "error"],
    },
    "InteractionDeclined": {
        "allOf": [
            {"$ref": "#/definitions/JSONRPCError"},
            {
                "properties": {
                    "error": {
                        "properties": {
                            "code": {"const": -32099},
                            "message": {"const": "User did not consent to the interaction."},
                        }
                    }
                }
            },
        ]
    },
    "InteractionRequiredError": {
        "allOf": [
            {"$ref": "#/definitions/JSONRPCError"},
            {
                "properties": {
                    "error": {
                        "properties": {
                            "code": {"const": -32003},
                            "message": {"const": "interaction_required"},
                            "data": {
                                "allOf": [
                                    {"$ref": "#/definitions/UAInteraction"},
                                    {
                                        "properties": {
                                            "id": {"type": "string"},
                                            "type": {"const": "ua"},
                                        },
                                        "required": ["id", "type"],
                                    },
                                ]
                            },
                        },
                        "required": ["data"],
                    }
                }
            },
        ]
    },
}


def draft_validator(definition: str) -> Draft7Validator:
    """A validator for one of the draft's messages, from the schema written above."""
    return Draft7Validator({"$ref": f"#/definitions/{definition}", "definitions": _DRAFT_DEFS})
