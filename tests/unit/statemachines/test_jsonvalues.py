"""The coercions of observed JSON: what each gives for a field of the expected shape, and the neutral value
for one that is absent, null or of another shape (observed objects come from the API server or from a
recorded journal, and a decision must not raise on them)."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from statemachines import jsonvalues

OTHER_SHAPES: list[Any] = [None, True, 0, 1.5, "text", [1], ["a", {"b": 1}], {"k": "v"}]


@pytest.mark.parametrize("value", [{}, {"a": 1}, OrderedDict(a=1), MappingProxyType({"a": 1})])
def test_as_mapping_gives_the_mapping_itself(value: Any) -> None:
    assert jsonvalues.as_mapping(value) is value


@pytest.mark.parametrize("value", [v for v in OTHER_SHAPES if not isinstance(v, dict)])
def test_as_mapping_of_anything_else_is_empty(value: Any) -> None:
    assert jsonvalues.as_mapping(value) == {}


def test_section_reads_a_nested_mapping_and_tolerates_a_missing_object() -> None:
    meta = {"name": "a"}
    assert jsonvalues.section({"metadata": meta}, "metadata") is meta
    assert jsonvalues.section({"metadata": ["not", "a", "mapping"]}, "metadata") == {}
    assert jsonvalues.section({}, "metadata") == {}
    assert jsonvalues.section(None, "metadata") == {}


def test_as_strings_stringifies_keys_and_values() -> None:
    assert jsonvalues.as_strings({"a": 1, 2: True, "c": None}) == {"a": "1", "2": "True", "c": "None"}
    assert jsonvalues.as_strings(["a", "b"]) == {}
    assert jsonvalues.as_strings(None) == {}


def test_as_list_copies_a_list_only() -> None:
    items = [1, "a", {"b": 2}]
    copied = jsonvalues.as_list(items)
    assert copied == items and copied is not items
    assert jsonvalues.as_list((1, 2)) == []
    assert jsonvalues.as_list({"a": 1}) == []


def test_as_mappings_keeps_the_mappings_of_a_list() -> None:
    ready = {"type": "Ready"}
    assert jsonvalues.as_mappings([ready, "junk", None, 3]) == [ready]
    assert jsonvalues.as_mappings(ready) == []


@pytest.mark.parametrize(
    ("value", "strict", "parsed", "optional"),
    [
        (3, 3, 3, 3),
        (0, 0, 0, 0),
        (-2, -2, -2, -2),
        ("3", 0, 3, None),
        (" 7 ", 0, 7, None),
        ("3.0", 0, 0, None),
        ("", 0, 0, None),
        (True, 0, 0, None),
        (False, 0, 0, None),
        (2.0, 0, 0, None),
        (None, 0, 0, None),
        ([1], 0, 0, None),
        ({"a": 1}, 0, 0, None),
    ],
)
def test_integers(value: Any, strict: int, parsed: int, optional: int | None) -> None:
    assert jsonvalues.as_int(value) == strict
    assert jsonvalues.parse_int(value) == parsed
    assert jsonvalues.int_or_none(value) == optional


@pytest.mark.parametrize(("value", "expected"), [("Running", "Running"), ("", ""), (None, None), (3, None)])
def test_str_or_none(value: Any, expected: str | None) -> None:
    assert jsonvalues.str_or_none(value) == expected
