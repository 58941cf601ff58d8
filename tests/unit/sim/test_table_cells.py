"""sim.tables' pure parts: apimachinery's human durations, printer-column JSONPath and cell typing.

Inputs: durations, objects and column types. Outputs: the strings and cells kube-apiserver sends.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sim import errors, tables

NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (49 * 3600, "2d1h"),
        (10 * 86400, "10d"),
        (3 * 365 * 86400 + 86400, "3y1d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert tables.human_duration(seconds) == text


def test_json_path_fields_indexes_and_filters() -> None:
    obj = {"status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    assert tables.json_path('.status.conditions[?(@.type=="Ready")].status', obj) == ["True"]
    assert tables.json_path(".status.conditions[0].type", obj) == ["A"]
    assert tables.json_path(".status.missing.deeper", obj) == []


def test_cells_by_column_type() -> None:
    assert tables.crd_cell("integer", 3.0, NOW) == 3
    assert tables.crd_cell("number", 3, NOW) == 3.0
    assert tables.crd_cell("integer", True, NOW) is None
    assert tables.crd_cell("string", {"a": 1}, NOW) == '{"a":1}'
    assert tables.crd_cell("date", "2026-01-01T23:59:00Z", NOW) == "60s"
    assert tables.crd_cell("date", "yesterday", NOW) == "<invalid>"


def test_negotiation() -> None:
    assert tables.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json") == "v1"
    assert tables.negotiate("application/json,application/json;as=Table;v=v1;g=meta.k8s.io") is None
    assert tables.negotiate("") is None
    with pytest.raises(errors.ApiError) as caught:
        tables.negotiate("text/html")
    assert caught.value.code == 406
