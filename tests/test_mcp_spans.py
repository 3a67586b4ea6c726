"""The JSON span scanner: where batch items and members lie, as every JSON parser reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urlvet.mcp.spans import array_items, id_text, member_text, object_members, scan_object

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
layouts = st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\r\n")])


@given(st.lists(values, max_size=6), layouts, st.booleans())
def test_array_items_are_the_items_a_parser_reads(
    items: list[Any], separators: tuple[str, str], ascii_only: bool
) -> None:
    text = json.dumps(items, separators=separators, ensure_ascii=ascii_only).encode()
    spans = array_items(b" \n" + text + b"\r\n")
    assert spans is not None
    assert [json.loads((b" \n" + text)[a:b]) for a, b in spans] == items


@given(st.dictionaries(st.text(), values, max_size=6), layouts)
def test_object_members_are_the_members_a_parser_reads(
    obj: dict[str, Any], separators: tuple[str, str]
) -> None:
    text = json.dumps(obj, separators=separators).encode()
    members = object_members(text)
    assert {k: json.loads(text[a:b]) for k, (a, b) in members.items()} == obj


@given(st.dictionaries(st.text(), values, max_size=6), st.data())
def test_a_cut_off_object_gives_only_members_read_to_their_end(
    obj: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(obj).encode()
    cut = data.draw(st.integers(0, len(text)))
    members, open_member = scan_object(text[:cut])
    for name, (a, b) in members.items():
        assert json.loads(text[a:b]) == obj[name]
    if open_member is not None:
        assert open_member[0] in obj


def test_items_keep_their_bytes() -> None:
    text = b'[1.0E+2, {"a" : -0.0}, "\\u00e9"]'
    spans = array_items(text)
    assert spans is not None
    assert [text[a:b] for a, b in spans] == [b"1.0E+2", b'{"a" : -0.0}', b'"\\u00e9"']


@pytest.mark.parametrize(
    "text",
    [b"", b"{}", b"[1,]", b"[1 2]", b"[1] x", b"[{]}", b'["a]', b"[1", b"[tru]", b"[,1]"],
)
def test_what_is_no_array_has_no_items(text: bytes) -> None:
    assert array_items(text) is None


def test_escaped_and_repeated_names_are_read_as_parsers_read_them() -> None:
    text = b'{"id": 1, "\\u0069d": 2.50, "method": "m"}'
    members = object_members(text)
    assert list(members) == ["id", "method"]
    assert text[slice(*members["id"])] == b"2.50"
    assert json.loads(text)["id"] == 2.5


def test_member_text_reads_into_a_cut_off_value() -> None:
    text = b'{"result":{"resultType":"input_required","inputRequests":{"a":{"x":1},"b":{"y"'
    assert member_text(text, ["result", "resultType"]) == b'"input_required"'
    requests = member_text(text, ["result", "inputRequests"])
    assert requests is not None
    assert scan_object(requests) == ({"a": (5, 12)}, ("b", 17))
    assert member_text(text, ["error"]) is None


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (b'{"id":1.0}', "1.0"),
        (b'{"id":-12e+3}', "-12e+3"),
        (b'{"id":"a\\"b"}', '"a\\"b"'),
        (b'{"id":null}', None),
        (b'{"id":[1]}', None),
        (b'{"id":"\xff"}', None),
        (b'{"id":' + b"9" * 300 + b"}", None),
    ],
)
def test_id_text_is_an_id_as_written_or_nothing(text: bytes, written: str | None) -> None:
    span = object_members(text)["id"]
    assert id_text(text, span) == written
