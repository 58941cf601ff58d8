"""Reading observed pods: ``pod_ready`` (§4.11), container statuses and exit codes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from statemachines import pods

T1 = "2026-01-01T00:00:01Z"
T2 = "2026-01-01T00:00:02Z"
ZERO = "0001-01-01T00:00:00Z"


def ready(status: str, at: str | None) -> dict[str, Any]:
    condition = {"type": "Ready", "status": status}
    return condition if at is None else {**condition, "lastTransitionTime": at}


def pod_with(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"status": {"conditions": list(conditions)}}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([ready("True", T1)], True, id="ready"),
        pytest.param([ready("False", T1)], False, id="not-ready"),
        pytest.param([ready("True", T1), ready("False", T2)], False, id="later-false-wins"),
        pytest.param([ready("False", T2), ready("True", T1)], False, id="order-does-not-matter"),
        pytest.param([ready("False", T1), ready("True", T2)], True, id="later-true-wins"),
        pytest.param([ready("True", None)], False, id="missing-time-never-counts"),
        pytest.param([ready("True", ZERO)], False, id="zero-time-never-counts"),
        pytest.param([ready("True", "yesterday")], False, id="unparsable-time"),
        pytest.param([ready("True", T1), ready("False", T1)], True, id="a-tie-keeps-the-first"),
        pytest.param([ready("True", T1), {**ready("False", T2), "type": "ContainersReady"}], True,
                     id="other-types-ignored"),
        pytest.param([], False, id="no-conditions"),
    ],
)  # fmt: skip
def test_pod_ready(conditions: list[dict[str, Any]], expected: bool) -> None:
    assert pods.pod_ready(pod_with(*conditions)) is expected


@pytest.mark.parametrize("pod", [None, {}, {"status": None}, {"status": {"conditions": "junk"}}])
def test_pod_ready_on_malformed_pods(pod: dict[str, Any] | None) -> None:
    assert pods.pod_ready(pod) is False


def test_container_statuses() -> None:
    pod = {
        "status": {
            "containerStatuses": [
                {"name": "sidecar", "state": {"running": {}}},
                {"name": "runner", "state": {"terminated": {"exitCode": 7}}},
            ],
            "initContainerStatuses": [{"name": "init", "state": {"terminated": {"exitCode": 0}}}],
        }
    }
    runner = pods.runner_container_status(pod)
    assert runner is not None and pods.exit_code(runner) == 7
    assert pods.is_running(pods.container_status(pod, "sidecar"))
    assert pods.exit_code(pods.container_status(pod, "sidecar")) is None
    assert pods.container_status(pod, "listener") is None
    assert pods.init_container_failed(pod) is False
    pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] = 1  # type: ignore[index]
    assert pods.init_container_failed(pod) is True


def test_a_terminated_container_without_an_exit_code_exited_0() -> None:
    assert pods.exit_code({"state": {"terminated": {"reason": "Completed"}}}) == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T00:00:01Z", datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)),
        ("2026-01-01T00:00:01.5+00:00", datetime(2026, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)),
        ("2026-01-01T00:00:01", datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)),
        ("", None),
        (None, None),
        ("not a time", None),
    ],
)
def test_parse_time(text: str | None, expected: datetime | None) -> None:
    assert pods.parse_time(text) == expected


def test_format_time_round_trips() -> None:
    at = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert pods.format_time(at) == "2026-05-06T07:08:09Z"
    assert pods.parse_time(pods.format_time(at)) == at


def test_format_time_remembers_an_instant_not_a_text_of_another() -> None:
    """The texts of recent times are kept: the same instant in another zone gives its UTC text, a new
    instant its own, and the one before it still its own."""
    from datetime import timedelta, timezone

    first = datetime(2026, 5, 6, 7, 8, 9, 999_999, tzinfo=UTC)
    assert pods.format_time(first) == "2026-05-06T07:08:09Z"
    assert pods.format_time(first.astimezone(timezone(timedelta(hours=5)))) == "2026-05-06T07:08:09Z"
    assert pods.format_time(first + timedelta(microseconds=1)) == "2026-05-06T07:08:10Z"
    assert pods.format_time(datetime(2026, 5, 6, 12, 8, 9, tzinfo=timezone(timedelta(hours=5)))) == (
        "2026-05-06T07:08:09Z"
    )
    assert pods.format_time(first) == "2026-05-06T07:08:09Z"
