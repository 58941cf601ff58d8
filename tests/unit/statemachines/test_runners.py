"""An EphemeralRunnerSet's runners: classification against the applied revision (C4), the patch-id and
revision annotations, ``terminated()`` without aliasing, deterministic names and the new runner's body."""

from __future__ import annotations

from typing import Any

import pytest

from statemachines import kinds, naming, runners
from tests.unit.statemachines.ersworld import make_ers, make_runner


def names(group: Any) -> list[str]:
    return [runners.name_of(r) for r in group]


# -- classification --------------------------------------------------------------------------------------


def test_scenario_4_4_a_classification_against_the_applied_revision() -> None:
    children = [
        make_runner("r1", phase="Outdated", revision=2),
        make_runner("r2", phase="Outdated", revision=3),
        make_runner("r3", phase="Outdated", revision=None),
        make_runner("r4", phase="Outdated", revision=3, deleting=True),
    ]
    by_state = runners.classify(children, applied_revision=3)
    assert names(by_state.stale_outdated) == ["r1", "r3"]
    assert names(by_state.outdated) == ["r2"]
    assert names(by_state.deleting) == ["r4"]


@pytest.mark.parametrize(
    ("phase", "group"),
    [
        pytest.param("", "pending", id="empty"),
        pytest.param("Pending", "pending", id="pending"),
        pytest.param("Unknown", "pending", id="unknown-pod-phase"),
        pytest.param("Running", "running", id="running"),
        pytest.param("Succeeded", "finished", id="succeeded"),
        pytest.param("Failed", "failed", id="failed"),
        pytest.param("Outdated", "outdated", id="outdated-current"),
    ],
)
def test_every_phase_has_one_group(phase: str, group: str) -> None:
    by_state = runners.classify([make_runner("r", phase=phase, revision=1)], applied_revision=1)
    for other in ("pending", "running", "finished", "failed", "outdated", "stale_outdated", "deleting"):
        assert names(getattr(by_state, other)) == (["r"] if other == group else []), other


@pytest.mark.parametrize("phase", ["", "Running", "Succeeded", "Failed", "Outdated"])
def test_deleting_is_checked_first(phase: str) -> None:
    by_state = runners.classify([make_runner("r", phase=phase, deleting=True)], applied_revision=0)
    assert names(by_state.deleting) == ["r"]
    assert by_state.scale_total == 0 and by_state.terminated() == []


def test_released_runners_count_as_deleting() -> None:
    children = [
        make_runner("a", phase="Running", runner_id=1),
        make_runner("b", phase="Running", runner_id=2),
    ]
    by_state = runners.classify(children, 1, released={"a"})
    assert names(by_state.deleting) == ["a"] and names(by_state.running) == ["b"]


def test_scale_total_counts_pending_running_and_failed_only() -> None:
    children = [
        make_runner("p", phase="Pending"),
        make_runner("r", phase="Running"),
        make_runner("f", phase="Failed"),
        make_runner("s", phase="Succeeded"),
        make_runner("o", phase="Outdated", revision=5),
        make_runner("so", phase="Outdated", revision=1),
        make_runner("d", phase="Running", deleting=True),
    ]
    assert runners.classify(children, applied_revision=5).scale_total == 3


def test_latest_patch_id_spans_every_child_and_ignores_bad_annotations() -> None:
    children = [
        make_runner("a", patch_id=3),
        make_runner("b", patch_id=9, deleting=True),
        make_runner("c", patch_id=None),
        make_runner("d"),
    ]
    children[3]["metadata"]["annotations"][naming.ANNOTATION_PATCH_ID] = "12x"
    assert runners.classify(children, 0).latest_patch_id == 9
    assert runners.classify([], 0).latest_patch_id == 0


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("3", 3),
        ("+4", 4),
        ("007", 7),
        ("-2", -2),
        ("", 0),
        (" 3", 0),
        ("3_000", 0),
        ("1.0", 0),
        ("9223372036854775808", 0),
        (None, 0),
    ],
)
def test_revision_annotation_parses_like_go(value: str | None, parsed: int) -> None:
    runner = make_runner("r", revision=None)
    if value is not None:
        runner["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] = value
    assert runners.revision(runner) == parsed


def test_groups_are_oldest_first_whatever_the_input_order() -> None:
    children = [make_runner(f"r{i}", phase="Running", created=60 - i) for i in range(6)]
    shuffled = [children[i] for i in (3, 0, 5, 1, 4, 2)]
    by_state = runners.classify(shuffled, 0)
    assert names(by_state.running) == [f"r{i}" for i in reversed(range(6))]
    assert runners.classify(children, 0) == by_state


def test_i4_5_terminated_is_a_new_list_and_the_groups_are_unchanged() -> None:
    """I4.5 and scenario 4.4-E: the groups are unchanged after terminated() and after mutating its result."""
    children = [
        make_runner("s1", phase="Succeeded"),
        make_runner("s2", phase="Succeeded"),
        make_runner("f1", phase="Failed"),
        make_runner("o1", phase="Outdated", revision=2),
        make_runner("so", phase="Outdated", revision=1),
    ]
    by_state = runners.classify(children, applied_revision=2)
    before = (by_state.finished, by_state.failed, by_state.outdated, by_state.stale_outdated)
    result = by_state.terminated()
    assert names(result) == ["s1", "s2", "f1", "o1", "so"]
    result.append(make_runner("extra"))
    result[0] = make_runner("replaced")
    assert (by_state.finished, by_state.failed, by_state.outdated, by_state.stale_outdated) == before
    assert names(by_state.finished) == ["s1", "s2"] and names(by_state.failed) == ["f1"]
    assert names(by_state.outdated) == ["o1"] and names(by_state.stale_outdated) == ["so"]
    assert by_state.terminated() is not by_state.terminated()


# -- names -----------------------------------------------------------------------------------------------


def test_names_are_deterministic_and_look_like_generate_name() -> None:
    ers = make_ers()
    first = runners.runner_names(ers, 3, taken=())
    assert first == runners.runner_names(ers, 3, taken=())
    assert len(set(first)) == 3
    for name in first:
        assert name.startswith("arc-runner-")
        assert len(name) == len("arc-runner-") + 5
        assert set(name.removeprefix("arc-runner-")) <= set(naming.SAFE_ALPHABET)


def test_names_skip_taken_ones_and_keep_the_order_of_the_rest() -> None:
    ers = make_ers()
    first = runners.runner_names(ers, 3, taken=())
    # A decision taken again after one creation was observed asks for the same remaining runners.
    assert runners.runner_names(ers, 2, taken={first[1]}) == [first[0], first[2]]
    assert first[0] not in runners.runner_names(ers, 3, taken={first[0]})


def test_names_move_with_the_generation_and_the_uid() -> None:
    base = runners.runner_names(make_ers(generation=1), 2, taken=())
    assert runners.runner_names(make_ers(generation=2), 2, taken=()) != base
    other = make_ers(generation=1)
    other["metadata"]["uid"] = "another"
    assert runners.runner_names(other, 2, taken=()) != base


def test_long_set_names_are_cut_like_generate_name() -> None:
    ers = make_ers()
    ers["metadata"]["name"] = "x" * 60
    (name,) = runners.runner_names(ers, 1, taken=())
    assert len(name) == 63 and name.startswith("x" * 58)


# -- the new runner --------------------------------------------------------------------------------------


def test_new_runner_metadata_follows_section_1_3() -> None:
    ers = make_ers(rev=4, patch_id=12)
    ers["metadata"]["annotations"]["keep"] = "ers"
    ers["spec"]["ephemeralRunnerMetadata"] = {
        "labels": {"team": "a", naming.LABEL_COMPONENT: "ignored"},
        "annotations": {"note": "x", naming.ANNOTATION_PATCH_ID: "ignored", "keep": "template"},
    }
    body = runners.new_runner(ers, "arc-runner-bcdfg")
    meta = body["metadata"]
    assert body["apiVersion"] == kinds.API_VERSION and body["kind"] == "EphemeralRunner"
    assert meta["name"] == "arc-runner-bcdfg" and meta["namespace"] == "default"
    assert meta["labels"] == {
        "team": "a",
        naming.LABEL_SCALE_SET_NAME: "arc",
        naming.LABEL_SCALE_SET_NAMESPACE: "default",
        naming.LABEL_COMPONENT: "runner",
    }
    assert meta["annotations"] == {
        "note": "x",
        "keep": "ers",
        naming.ANNOTATION_RUNNER_GROUP_NAME: "default",
        naming.ANNOTATION_PATCH_ID: "12",
        naming.ANNOTATION_ACTIONABLE_REVISION: "4",
    }
    assert meta["ownerReferences"] == [
        {
            "apiVersion": kinds.API_VERSION,
            "kind": "EphemeralRunnerSet",
            "name": "arc",
            "uid": "ers-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert meta["finalizers"] == [naming.FINALIZER_EPHEMERAL_RUNNER, naming.FINALIZER_RUNNER_REGISTRATION]
    assert body["spec"] == ers["spec"]["ephemeralRunnerSpec"]
    assert "proxySecretRef" not in body["spec"]


def test_new_runner_drops_excluded_label_prefixes_from_the_runner_metadata_too() -> None:
    ers = make_ers()
    ers["metadata"]["labels"]["internal.example.com/owner"] = "ers"  # as the ARS filter left it, not here
    ers["spec"]["ephemeralRunnerMetadata"] = {
        "labels": {"team": "a", "internal.example.com/cost-center": "42"},
        "annotations": {"internal.example.com/note": "kept"},
    }
    body = runners.new_runner(ers, "arc-runner-bcdfg", exclude_label_prefixes=("internal.example.com/",))
    labels, annotations = body["metadata"]["labels"], body["metadata"]["annotations"]
    assert labels["team"] == "a"
    assert not [key for key in labels if key.startswith("internal.example.com/")], labels
    assert annotations["internal.example.com/note"] == "kept"  # upstream filters labels only


def test_new_runner_references_the_proxy_secret_without_touching_the_set() -> None:
    ers = make_ers(proxy=True)
    body = runners.new_runner(ers, "arc-runner-bcdfg", proxy_secret_name="arc-xyz-runner-proxy")
    assert body["spec"]["proxySecretRef"] == "arc-xyz-runner-proxy"
    assert "proxySecretRef" not in ers["spec"]["ephemeralRunnerSpec"]


@pytest.mark.parametrize(
    ("status", "job"),
    [
        pytest.param({"runnerId": 3, "jobId": "j", "jobRunnerId": 3}, "j", id="its-own"),
        pytest.param({"runnerId": 3, "jobId": "j", "jobRunnerId": 2}, "", id="another-runners"),
        pytest.param({"jobId": "j", "jobRunnerId": 2}, "", id="unregistered"),
        pytest.param({"runnerId": 3, "jobId": "j"}, "j", id="no-runner-id-recorded"),
        pytest.param({"runnerId": 3, "jobRunnerId": 3}, "", id="no-job"),
    ],
)
def test_a_job_is_the_runners_only_when_recorded_for_its_runner_id(status: dict[str, Any], job: str) -> None:
    runner = {"metadata": {"name": "r"}, "status": status}
    assert runners.job_id(runner) == job
    assert runners.has_job(runner) is bool(job)
    assert runners.has_foreign_job(runner) is (status.get("jobRunnerId", 3) != status.get("runnerId", 0))
