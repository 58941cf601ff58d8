"""Reading JSON back (``store.jsontext``): the values ``json.loads`` gives, type for type, for every text."""

from __future__ import annotations

import contextlib
import io
import json
import math
import pathlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import exporting, jsontext
from store.journal import OFFLINE, Journal
from store.records import Record, RecordType
from tests.unit.store.factories import OpenJournal

# What a body can hold that a strict parser reads differently or refuses: an integer past 64 bits
# (orjson would give a float), the largest 64-bit ones, floats at the edges, text beyond ASCII.
AWKWARD = {
    "big": 2**70,
    "negative big": -(2**70),
    "u64": 2**64 - 1,
    "i64": -(2**63),
    "digits in text": "1234567890123456789012",
    "float": 0.1,
    "tiny": 5e-324,
    "huge": 1.7976931348623157e308,
    "minus zero": -0.0,
    "unicode": "é ✓ 𝄞",
    "nested": [{"a": [1, 2.5, None, True, {"b": 2**65}]}],
}


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (so 1 and 1.0 differ, and NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b) and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(AWKWARD),
        json.dumps(AWKWARD, ensure_ascii=False),
        '{"n": NaN, "i": Infinity, "m": -Infinity}',  # json reads these; orjson refuses them
        '{"over": 1e400}',  # a float past the largest double: json gives inf
        '{"lone": "\\ud800"}',  # a lone surrogate escape
        '{"a": 1, "a": 2}',  # the last of a repeated key wins
        "[1, 2,]",
        '{"a": 1} x',
        "",
    ],
)
def test_loads_reads_as_json_does(text: str) -> None:
    for given_text in (text, text.encode("utf-8", "surrogatepass")):
        try:
            expected: Any = json.loads(given_text)
        except ValueError as exc:
            with pytest.raises(ValueError) as raised:
                jsontext.loads(given_text)
            assert str(raised.value) == str(exc)
            continue
        assert same(jsontext.loads(given_text), expected)


@pytest.mark.parametrize(
    "data",
    [
        json.dumps(AWKWARD).encode(),
        json.dumps(AWKWARD, ensure_ascii=False).encode(),
        b'{"n": NaN}',
        b'{"lone": "\\ud800"}',
        b'{"a": 1, "a": 2}',
        b'{"a": "caf\xe9"}',  # Latin-1, not UTF-8
        '{"a": "é"}'.encode("utf-16"),
        b"\xef\xbb\xbf{}",  # a byte order mark
        b"",
        b"  \n",
    ],
)
def test_loads_utf8_reads_as_json_reads_the_decoded_text_or_refuses(data: bytes) -> None:
    """Where ``loads_utf8`` answers, it is ``json.loads`` of the bytes decoded as UTF-8; the rest it
    leaves to the caller (``Refused``), never a different value."""
    try:
        found = jsontext.loads_utf8(data)
    except jsontext.Refused:
        return
    assert same(found, json.loads(data.decode("utf-8")))


def test_loads_utf8_refuses_what_is_not_utf8_and_a_long_integer() -> None:
    for data in (b'{"a": "caf\xe9"}', '{"a": 1}'.encode("utf-16"), b'{"big": 12345678901234567890}'):
        with pytest.raises(jsontext.Refused):
            jsontext.loads_utf8(data)
    assert jsontext.loads_utf8(b'{"fits": 123456789012345678}') == {"fits": 123456789012345678}


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None, derandomize=True)  # the same examples every run, however busy the machine
@given(JSON, st.booleans())
def test_loads_agrees_with_json_on_any_value(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert same(jsontext.loads(text), json.loads(text))
    with contextlib.suppress(jsontext.Refused):
        assert same(jsontext.loads_utf8(text.encode("utf-8", "surrogatepass")), json.loads(text))


async def test_a_journal_and_its_export_read_back_the_values_appended(
    open_journal: OpenJournal, path: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    journal: Journal = await open_journal()
    await journal.append([Record(type=RecordType.EFFECT_RESULT, kind="Pod", name="a", body=AWKWARD)])
    await journal.close()
    # Offline settings: with the defaults, a retention pass (the record is old by the real clock) may run
    # while it is open on a busy machine and journal a snapshot marker first, which the export would hold.
    async with await Journal.open(path, settings=OFFLINE) as reopened:
        [read] = await reopened.read()
    assert same(dict(read.body), json.loads(json.dumps(AWKWARD)))
    out = io.StringIO()
    await exporting.export(path, out)
    [imported] = list(exporting.parse_lines(out.getvalue().splitlines()))
    assert same(dict(imported.body), dict(read.body))
