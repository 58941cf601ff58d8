"""The emulator's JSON bodies (``sim.wirejson``) are written as kube-apiserver writes them."""

from __future__ import annotations

import json

from sim import wirejson


def test_bodies_are_compact_with_text_in_utf8() -> None:
    body = {"kind": "ConfigMap", "data": {"greeting": "héllo → wörld"}, "list": [1, 2.5, True, None]}
    text = wirejson.dumps(body)
    expected = '{"kind":"ConfigMap","data":{"greeting":"héllo → wörld"},"list":[1,2.5,true,null]}'
    assert text == expected.encode()
    assert json.loads(text) == body


def test_an_integer_past_64_bits_is_written_exactly() -> None:
    body = {"spec": {"count": 2**70, "small": 3}}
    assert json.loads(wirejson.dumps(body)) == body
