"""``managedFields`` entries: decoding and encoding, kube-apiserver's order, the manager derived from a
user agent, and the ``Update`` operation's bookkeeping.

Inputs: entries and objects as JSON. Outputs: entries as kube-apiserver stores them.
"""

from __future__ import annotations

from typing import Any

import pytest

from sim import kinds, managedfields

CONFIGMAP = kinds.Registry().get("", "v1", "configmaps")
assert CONFIGMAP is not None


def entry(manager: str, operation: str, time: str, fields: dict[str, Any], **extra: str) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        **extra,
    }


@pytest.mark.parametrize(
    ("agent", "manager"),
    [
        ("kubectl/v1.32.0 (linux/amd64) kubernetes/abcdef", "kubectl"),
        ("OpenAPI-Generator/31.0.0/python", "OpenAPI-Generator"),
        ("", ""),
        ("tab\there/1", "tabhere"),
        ("é" * 100, "é" * 64),  # 128 bytes at most
    ],
)
def test_the_manager_of_a_user_agent(agent: str, manager: str) -> None:
    assert managedfields.manager_from_user_agent(agent) == manager


def test_entries_round_trip_in_kube_apiserver_order() -> None:
    raw = [
        entry("zed", "Update", "2024-01-01T00:00:02Z", {"f:data": {"f:b": {}}}),
        entry("bob", "Update", "2024-01-01T00:00:01Z", {"f:data": {"f:c": {}}}, subresource="status"),
        entry("amy", "Apply", "2024-01-01T00:00:09Z", {"f:data": {"f:a": {}}}),
    ]
    encoded = managedfields.encode(managedfields.decode(raw))
    assert [e["manager"] for e in encoded] == ["amy", "bob", "zed"]  # Apply first, then by time
    assert encoded[1] == raw[1]


@pytest.mark.parametrize(
    "bad",
    [
        [{"manager": "x", "fieldsType": "FieldsV2", "fieldsV1": {}}],
        [{"manager": "x", "operation": "Replace"}],
        [{"manager": "x", "fieldsV1": {"q:x": {}}}],
        ["x"],
        {"manager": "x"},
    ],
)
def test_entries_that_do_not_decode(bad: Any) -> None:
    with pytest.raises(ValueError):
        managedfields.decode(bad)


def test_an_update_moves_the_fields_it_changes_to_its_manager() -> None:
    amy = entry("amy", "Apply", "2024-01-01T00:00:00Z", {"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})
    old = {"metadata": {"name": "c", "managedFields": [amy]}, "data": {"a": "1", "b": "1", "c": "1"}}
    new = {"metadata": {"name": "c", "managedFields": [amy]}, "data": {"a": "2", "c": "1"}}
    assert CONFIGMAP is not None
    now = "2024-01-01T00:00:05Z"
    out = managedfields.after_update(CONFIGMAP, old, new, manager="bob", subresource="", now=now)
    # a changed: bob's now; b removed: nobody's; c untouched: still amy's, her time unchanged.
    assert out == [
        entry("amy", "Apply", "2024-01-01T00:00:00Z", {"f:data": {"f:c": {}}}),
        entry("bob", "Update", now, {"f:data": {"f:a": {}}}),
    ]
    # The same write again changes nothing: bob's entry keeps its time.
    again = managedfields.after_update(
        CONFIGMAP,
        {**new, "metadata": {"name": "c", "managedFields": out}},
        {**new, "metadata": {"name": "c", "managedFields": out}},
        manager="bob",
        subresource="",
        now="2024-01-01T00:09:00Z",
    )
    assert again == out
