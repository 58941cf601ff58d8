"""Semantic equality (spec §4.12): empties and quantity spellings do not count as drift; real changes do."""

from __future__ import annotations

from decimal import Decimal

import pytest

from statemachines import semantics


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("1", Decimal(1), id="plain"),
        pytest.param("1000m", Decimal(1), id="milli"),
        pytest.param("1.5", Decimal("1.5"), id="fraction"),
        pytest.param("1Gi", Decimal(1073741824), id="gibi"),
        pytest.param("512Mi", Decimal(536870912), id="mebi"),
        pytest.param("1G", Decimal(10**9), id="giga"),
        pytest.param("1e3", Decimal(1000), id="exponent"),
        pytest.param("1E", Decimal(10**18), id="exa-not-exponent"),
        pytest.param("100n", Decimal("1E-7"), id="nano"),
        pytest.param(".5", Decimal("0.5"), id="leading-dot"),
        pytest.param(2, Decimal(2), id="json-number"),
        pytest.param("1Zi", None, id="bad-suffix"),
        pytest.param("lots", None, id="not-a-number"),
        pytest.param(True, None, id="bool"),
    ],
)
def test_parse_quantity(text: object, value: Decimal | None) -> None:
    assert semantics.parse_quantity(text) == value


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"env": []}, {}, id="empty-list"),
        pytest.param({"nodeSelector": {}}, {}, id="empty-map"),
        pytest.param({"image": ""}, {}, id="empty-string"),
        pytest.param({"x": None}, {}, id="null"),
        pytest.param({"resources": {"limits": {}}}, {}, id="nested-empties"),
        pytest.param(
            {"resources": {"limits": {"cpu": "1000m"}}}, {"resources": {"limits": {"cpu": "1"}}}, id="cpu"
        ),
        pytest.param({"requests": {"memory": "1Gi"}}, {"requests": {"memory": 1073741824}}, id="memory"),
        pytest.param({"overhead": {"cpu": "250m"}}, {"overhead": {"cpu": "0.25"}}, id="overhead"),
        pytest.param(
            {"emptyDir": {"sizeLimit": "1Ki"}}, {"emptyDir": {"sizeLimit": "1024"}}, id="size-limit"
        ),
        pytest.param({"n": 1.0}, {"n": 1}, id="integral-float"),
        pytest.param({"labels": {}}, None, id="empty-is-absent"),
        pytest.param(
            {"metadata": {"creationTimestamp": None}, "spec": {"containers": [{"name": "r", "env": []}]}},
            {"spec": {"containers": [{"name": "r"}]}},
            id="go-template",
        ),
    ],
)
def test_semantically_equal(a: object, b: object) -> None:
    assert semantics.semantic_equal(a, b)
    assert semantics.semantic_equal(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"replicas": 0}, {}, id="zero-is-not-absent"),
        pytest.param({"privileged": False}, {}, id="false-is-not-absent"),
        pytest.param({"privileged": False}, {"privileged": 0}, id="bool-is-not-number"),
        pytest.param({"image": "a"}, {"image": "b"}, id="value"),
        pytest.param({"args": ["a", "b"]}, {"args": ["b", "a"]}, id="list-order"),
        pytest.param(
            {"resources": {"limits": {"cpu": "1"}}}, {"resources": {"limits": {"cpu": "2"}}}, id="cpu"
        ),
        pytest.param({"cpu": "1000m"}, {"cpu": "1"}, id="not-a-quantity-position"),
        pytest.param({"volumes": [{"name": "w"}]}, {}, id="added-volume"),
    ],
)
def test_semantically_different(a: object, b: object) -> None:
    assert not semantics.semantic_equal(a, b)
