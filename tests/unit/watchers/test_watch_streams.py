"""Watch streams: a batch of lines becomes records (pure), and a batch is every complete line received.

``translate`` is table-driven over what a stream can say: changes, bookmarks, ERROR events, and events
the journal already holds (which it must not journal twice).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest import mock

import aiohttp
import pytest

from watchers import errors, kinds, objects, streams

ER = kinds.BY_NAME["EphemeralRunner"]


def obj(name: str, uid: str, rv: str) -> dict[str, Any]:
    return {
        "apiVersion": ER.api_version,
        "kind": ER.kind,
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv},
    }


def line(etype: str, o: dict[str, Any]) -> bytes:
    return json.dumps({"type": etype, "object": o}).encode()


def bookmark(rv: str) -> bytes:
    return line(
        "BOOKMARK", {"kind": ER.kind, "apiVersion": ER.api_version, "metadata": {"resourceVersion": rv}}
    )


def expired() -> bytes:
    status = {"kind": "Status", "status": "Failure", "reason": "Expired", "message": "too old", "code": 410}
    return line("ERROR", status)


KNOWN = [obj("a", "uid-a", "5")]

CASES = [
    # (id, lines, expected (event, uid, rv), resume resourceVersion)
    ("nothing", [], [], ""),
    ("an add", [line("ADDED", obj("b", "uid-b", "6"))], [("ADDED", "uid-b", "6")], "6"),
    (
        "a sequence on one object",
        [
            line("ADDED", obj("b", "uid-b", "6")),
            line("MODIFIED", obj("b", "uid-b", "7")),
            line("DELETED", obj("b", "uid-b", "8")),
        ],
        [("ADDED", "uid-b", "6"), ("MODIFIED", "uid-b", "7"), ("DELETED", "uid-b", "8")],
        "8",
    ),
    ("a bookmark moves the resume point only", [bookmark("9")], [], "9"),
    (
        "an event after a bookmark",
        [bookmark("9"), line("MODIFIED", obj("a", "uid-a", "10"))],
        [("MODIFIED", "uid-a", "10")],
        "10",
    ),
    (
        "the version the journal holds is not journaled again",
        [line("MODIFIED", obj("a", "uid-a", "5"))],
        [],
        "5",
    ),
    (
        "nor twice in one batch",
        [line("ADDED", obj("b", "uid-b", "6")), line("ADDED", obj("b", "uid-b", "6"))],
        [("ADDED", "uid-b", "6")],
        "6",
    ),
    ("a DELETED of an object the journal does not hold", [line("DELETED", obj("z", "uid-z", "6"))], [], "6"),
    ("unknown event types are ignored", [line("SOMETHING", obj("b", "uid-b", "6"))], [], ""),
]


@pytest.mark.parametrize(("lines", "expected", "resume"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_translate(lines: list[bytes], expected: list[tuple[str, str, str]], resume: str) -> None:
    batch = streams.translate(ER, objects.seed(KNOWN), lines)
    assert [(r.body["event"], r.uid, r.resource_version) for r in batch.records] == expected
    assert batch.resource_version == resume
    assert batch.error is None


def test_an_error_event_ends_the_batch_after_what_came_before() -> None:
    lines = [line("ADDED", obj("b", "uid-b", "6")), expired(), line("ADDED", obj("c", "uid-c", "7"))]
    batch = streams.translate(ER, {}, lines)
    assert [r.uid for r in batch.records] == ["uid-b"]
    assert batch.resource_version == "6"
    assert isinstance(batch.error, errors.Expired)
    assert batch.error.status == 410


@pytest.mark.parametrize("bad", [b"{not json", b'"a string"', b'{"type": "ADDED"}'])
def test_a_malformed_line_is_a_broken_stream(bad: bytes) -> None:
    with pytest.raises(errors.TransportError):
        streams.translate(ER, {}, [bad])


# -- batching -------------------------------------------------------------------------------------------


def reader() -> aiohttp.StreamReader:
    protocol = mock.Mock(_reading_paused=False)
    return aiohttp.StreamReader(protocol, 2**16, loop=asyncio.get_running_loop())


async def test_a_batch_is_every_complete_line_received_so_far() -> None:
    content = reader()
    lines = streams.Lines(mock.Mock(content=content))
    content.feed_data(b'{"a":1}\n{"b":')
    content.feed_data(b'2}\n{"c"')
    assert await lines.batch() == [b'{"a":1}', b'{"b":2}']
    content.feed_data(b":3}\n")
    content.feed_eof()
    assert await lines.batch() == [b'{"c":3}']
    assert await lines.batch() == []


async def test_a_batch_waits_for_a_complete_line() -> None:
    content = reader()
    lines = streams.Lines(mock.Mock(content=content))
    pending = asyncio.create_task(lines.batch())
    content.feed_data(b'{"a":')
    await asyncio.sleep(0)
    assert not pending.done()
    content.feed_data(b"1}\n")
    assert await pending == [b'{"a":1}']


async def test_a_stream_that_ends_inside_an_event_is_broken() -> None:
    content = reader()
    lines = streams.Lines(mock.Mock(content=content))
    content.feed_data(b'{"a":')
    content.feed_eof()
    with pytest.raises(errors.TransportError):
        await lines.batch()


async def test_a_reset_connection_is_a_transport_error() -> None:
    content = reader()
    lines = streams.Lines(mock.Mock(content=content))
    content.set_exception(aiohttp.ClientPayloadError("Response payload is not completed"))
    with pytest.raises(errors.TransportError):
        await lines.batch()
