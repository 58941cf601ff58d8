"""Effect results: the body the journal receives is the one it always received, key for key and in order,
and a body reads back as a result with one notion of failure (``effectresults``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from statemachines import pods
from statemachines.effectresults import EffectResult, Failure

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _at(seconds_ago: float) -> str:
    return pods.format_time(NOW - timedelta(seconds=seconds_ago))


# The bodies the executor and the runtime wrote before results were typed, as literals.
@pytest.mark.parametrize(
    ("result", "body"),
    [
        pytest.param(EffectResult.success(), {"ok": True}, id="ok"),
        pytest.param(
            EffectResult.success(runnerId=3, runnerName="r", alreadyExisted=True),
            {"ok": True, "runnerId": 3, "runnerName": "r", "alreadyExisted": True},
            id="facts",
        ),
        pytest.param(EffectResult.success(scaleSet=None), {"ok": True, "scaleSet": None}, id="null-fact"),
        pytest.param(
            EffectResult.failure("Invalid", "spec.containers: Required value"),
            {"ok": False, "error": "Invalid", "message": "spec.containers: Required value"},
            id="failure",
        ),
        pytest.param(
            EffectResult.failure("ServiceUnavailable", "try later", retry_after=30),
            {"ok": False, "error": "ServiceUnavailable", "message": "try later", "retryAfter": 30},
            id="retry-after-int",
        ),
        pytest.param(
            EffectResult.failure("TooManyRequests", "slow down", retry_after=1.5),
            {"ok": False, "error": "TooManyRequests", "message": "slow down", "retryAfter": 1.5},
            id="retry-after-float",
        ),
    ],
)
def test_the_journaled_body_is_unchanged(result: EffectResult, body: dict[str, object]) -> None:
    assert json.dumps(result.to_body()) == json.dumps(body)


@pytest.mark.parametrize(
    ("body", "failed", "error"),
    [
        pytest.param({"ok": True, "runnerId": 3}, False, "", id="ok"),
        pytest.param({"runnerId": 3}, False, "", id="ok-left-out"),
        pytest.param({"ok": False, "error": "Invalid", "message": "bad"}, True, "Invalid", id="classed"),
        pytest.param({"ok": False}, True, "Failed", id="unclassed"),
        pytest.param({"error": "Conflict"}, True, "Conflict", id="class-without-ok"),
        pytest.param({"ok": True, "error": "Conflict"}, True, "Conflict", id="class-wins-over-ok"),
        pytest.param({"ok": "yes"}, False, "", id="ok-not-a-bool"),
    ],
)
def test_one_notion_of_failure(body: dict[str, object], failed: bool, error: str) -> None:
    result = EffectResult.from_body(body)
    assert (result.failed, result.ok, result.error) == (failed, not failed, error)


def test_a_journaled_body_reads_back_as_the_result_written() -> None:
    written = EffectResult.failure("ServiceUnavailable", "try later", retry_after=30)
    journaled = {**written.to_body(), "key": "actions:x", "effectSeq": 7, "at": _at(0)}
    read = EffectResult.from_body(journaled)
    assert (read.error, read.message, read.retry_after, read.at) == (
        "ServiceUnavailable",
        "try later",
        30,
        NOW,
    )
    assert read.facts == {"key": "actions:x", "effectSeq": 7}, "the runtime's keys read as facts"
    assert read.to_body() == {**written.to_body(), "key": "actions:x", "effectSeq": 7}


@pytest.mark.parametrize("value", ["30", True, None, [1]])
def test_a_retry_after_that_is_not_a_number_is_dropped(value: object) -> None:
    assert EffectResult.from_body({"ok": False, "error": "X", "retryAfter": value}).retry_after is None


def test_a_failure_always_has_a_class() -> None:
    assert EffectResult.failure("", "no class given").failed_with(Failure.UNCLASSIFIED)


def test_windows_are_measured_from_the_result() -> None:
    out = EffectResult.from_body({"ok": False, "error": "Forbidden", "at": _at(10)})
    assert out.remaining(30, NOW) == 20.0
    assert out.remaining(5, NOW) == 0.0
    assert EffectResult.from_body({"ok": False}).remaining(30, NOW) == 0.0, "undated: always elapsed"


def test_newer_than_compares_journal_times_and_treats_undated_as_newer() -> None:
    older = EffectResult.from_body({"ok": True, "at": _at(10)})
    newer = EffectResult.from_body({"ok": False, "error": "X", "at": _at(1)})
    assert newer.newer_than(older) and not older.newer_than(newer)
    assert older.newer_than(None) and EffectResult().newer_than(newer)
