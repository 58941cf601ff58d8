"""``decoding.loads`` against ``json.loads``: the same value and the same JSON text again for every line of
the recorded journals (so what the watchers journal does not change), repeated keys and non-object
values included; the strings of separately decoded objects are shared; the table stays bounded."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from watchers import decoding

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))


def test_every_recorded_line_decodes_as_json_loads_decodes_it_and_encodes_to_the_same_text() -> None:
    lines = [
        line for path in JOURNALS for line in gzip.decompress(path.read_bytes()).splitlines() if line.strip()
    ]
    assert len(lines) > 1000
    for line in lines:
        ours, theirs = decoding.loads(line), json.loads(line)
        assert ours == theirs
        assert json.dumps(ours) == json.dumps(theirs)  # key order too


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": 2, "a": 3}',  # a repeated key: its first place, its last value
        '{"z": {"y": [1, "x", {"w": null}]}, "": ""}',
        '[{"k": "v"}, "s", 1.5, true]',
        '"just a string"',
        '{"long": "' + "x" * 200 + '"}',
    ],
)
def test_odd_documents_decode_as_json_loads_decodes_them(text: str) -> None:
    ours = decoding.loads(text)
    assert ours == json.loads(text)
    assert json.dumps(ours) == json.dumps(json.loads(text))


def test_separately_decoded_objects_share_keys_and_short_values_but_not_long_ones() -> None:
    long = "c" * (decoding.SHARED_VALUE_LENGTH + 1)
    text = json.dumps({"metadata": {"namespace": "default", "command": long}})
    first, second = decoding.loads(text), decoding.loads(text.encode())
    assert next(iter(first)) is next(iter(second))
    assert first["metadata"]["namespace"] is second["metadata"]["namespace"]
    assert first["metadata"]["command"] is not second["metadata"]["command"]


def test_the_table_of_shared_strings_stays_bounded() -> None:
    for n in range(3 * decoding.SHARED_STRINGS):
        decoding.loads(json.dumps({f"key-{n}": f"value-{n}"}))
    assert len(decoding._table) <= decoding.SHARED_STRINGS + 2
