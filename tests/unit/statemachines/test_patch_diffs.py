"""Merge patches built from the fields a decision changes (RFC 7386)."""

from __future__ import annotations

from typing import Any

import pytest

from statemachines import patches


@pytest.mark.parametrize(
    ("before", "after", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, {}, id="equal"),
        pytest.param({"a": 1}, {"a": 2}, {"a": 2}, id="changed"),
        pytest.param({"a": 1, "b": 2}, {"a": 1}, {"b": None}, id="removed"),
        pytest.param({}, {"a": {"b": 1}}, {"a": {"b": 1}}, id="added"),
        pytest.param({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}, {"a": {"c": 3}}, id="nested"),
        pytest.param({"a": [1, 2]}, {"a": [1]}, {"a": [1]}, id="list-replaced"),
        pytest.param({"a": 1}, {"a": True}, {"a": True}, id="bool-is-not-int"),
        pytest.param(None, {"a": 1}, {"a": 1}, id="from-nothing"),
    ],
)
def test_diff(before: dict[str, Any] | None, after: dict[str, Any], patch: dict[str, Any]) -> None:
    assert patches.diff(before, after) == patch
    assert patches.apply(before, patch) == after


def test_apply_does_not_modify_its_arguments() -> None:
    target = {"a": {"b": 1}}
    patch = {"a": {"c": 2}}
    assert patches.apply(target, patch) == {"a": {"b": 1, "c": 2}}
    assert target == {"a": {"b": 1}} and patch == {"a": {"c": 2}}
