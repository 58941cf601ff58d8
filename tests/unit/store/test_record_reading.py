"""``Record.from_parsed``: the record ``Record.from_json`` makes of the same parsed line, every time."""

from __future__ import annotations

from typing import Any

import pytest

from store.records import Record

LINE: dict[str, Any] = {
    "seq": 7,
    "at": "2026-01-01T00:00:00.000000Z",
    "type": "effect",
    "kind": "Pod",
    "namespace": "team",
    "name": "p",
    "uid": "u",
    "resourceVersion": "12",
    "body": {"key": "k", "nested": {"a": [1, 2]}},
}


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"body": None},
        {"body": {}},
        {"body": [("a", 1)]},
        {"kind": 3, "resourceVersion": 12},
        {"namespace": None},
        {"seq": None},
        {"seq": "8"},
        {"type": "observed"},
    ],
)
def test_from_parsed_makes_the_record_from_json_makes(change: dict[str, Any]) -> None:
    data = {**LINE, **change}
    assert Record.from_parsed(dict(data)) == Record.from_json(data)


@pytest.mark.parametrize("missing", ["at", "kind", "namespace", "name", "uid", "resourceVersion", "body"])
def test_from_parsed_reads_a_missing_field_as_from_json_does(missing: str) -> None:
    data = {k: v for k, v in LINE.items() if k != missing}
    assert Record.from_parsed(dict(data)) == Record.from_json(data)


def test_from_parsed_refuses_what_from_json_refuses() -> None:
    for data in ({"kind": "Pod"}, {**LINE, "type": "nonsense"}, {**LINE, "body": [1]}):
        with pytest.raises((KeyError, ValueError, TypeError)) as expected:
            Record.from_json(data)
        with pytest.raises(type(expected.value)):
            Record.from_parsed(dict(data))
