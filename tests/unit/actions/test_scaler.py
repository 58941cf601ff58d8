"""The listener's scaler (spec §5.4), table-driven: patch ids, targets, the idle-at-minimum force patch, the
patch bodies, and what the EphemeralRunnerSet makes of them under its §2.2 step 9 rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from actions.messages import JobStarted
from actions.scaler import MAX_INT32, ScalePatch, Scaler, job_fields

# A step: ("desired", assigned jobs), ("started",) or ("completed",).
Step = tuple[str, int] | tuple[str]


@dataclass(frozen=True)
class Case:
    min_runners: int
    max_runners: int
    steps: tuple[Step, ...]
    patches: tuple[tuple[int, int], ...]  # (patch id, replicas) of each "desired" step


def d(count: int) -> Step:
    return ("desired", count)


STARTED: Step = ("started",)
COMPLETED: Step = ("completed",)

CASES = {
    "the first patch id is 0": Case(1, 3, (d(0),), ((0, 1),)),
    "the first patch id is 0 even with jobs assigned": Case(1, 3, (d(2),), ((0, 3),)),
    "later ids increment": Case(1, 5, (d(0), d(2), d(3), d(1)), ((0, 1), (1, 3), (2, 4), (3, 2))),
    "idle at the minimum is patch id 0": Case(1, 3, (d(0), d(0), d(0)), ((0, 1), (0, 1), (0, 1))),
    "idle at zero is patch id 0": Case(0, 3, (d(0), d(0)), ((0, 0), (0, 0))),
    "a job started at the minimum takes a sequence id": Case(
        1, 3, (d(0), STARTED, d(0), d(0)), ((0, 1), (1, 1), (0, 1))
    ),
    "a job completed at the minimum takes a sequence id": Case(
        1, 3, (d(1), COMPLETED, d(0), d(0)), ((0, 2), (1, 1), (0, 1))
    ),
    "back at the minimum after a change takes a sequence id first": Case(
        1, 3, (d(2), d(0), d(0)), ((0, 3), (1, 1), (0, 1))
    ),
    "steady above the minimum keeps counting": Case(1, 3, (d(2), d(2), d(2)), ((0, 3), (1, 3), (2, 3))),
    "the target is capped at maxRunners": Case(1, 3, (d(0), d(5), d(50)), ((0, 1), (1, 3), (2, 3))),
    "minRunners plus the assigned jobs": Case(2, 10, (d(0), d(3)), ((0, 2), (1, 5))),
    "min equal to max is always idle at the minimum": Case(
        2, 2, (d(0), d(9), d(0)), ((0, 2), (0, 2), (0, 2))
    ),
}


def run(case: Case) -> list[tuple[int, int]]:
    scaler = Scaler(min_runners=case.min_runners, max_runners=case.max_runners)
    patches = []
    for step in case.steps:
        if step[0] == "started":
            scaler.job_started()
        elif step[0] == "completed":
            scaler.job_completed()
        else:
            patch = scaler.desired(step[1])  # type: ignore[misc]
            patches.append((patch.patch_id, patch.replicas))
    return patches


@pytest.mark.parametrize("name", list(CASES))
def test_scaler(name: str) -> None:
    case = CASES[name]
    assert tuple(run(case)) == case.patches


def test_the_patch_body() -> None:
    assert ScalePatch(patch_id=4, replicas=3).as_body() == {"spec": {"patchID": 4, "replicas": 3}}
    # At 0 the body carries "replicas": null (omitempty upstream), which a merge patch turns into 0.
    assert ScalePatch(patch_id=0, replicas=0).as_body() == {"spec": {"patchID": 0, "replicas": None}}


def test_the_sequence_wraps_at_max_int32_and_skips_0() -> None:
    scaler = Scaler(min_runners=0, max_runners=5)
    scaler.desired(0)
    scaler.patch_seq = MAX_INT32 - 1
    assert scaler.desired(3).patch_id == MAX_INT32
    assert scaler.desired(2).patch_id == 1


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        Scaler(min_runners=3, max_runners=2)
    with pytest.raises(ValueError):
        Scaler(min_runners=-1, max_runners=2)


def test_job_status_fields_leave_out_zero_values() -> None:
    job = JobStarted(
        message_type="JobStarted",
        runner_request_id=7,
        owner_name="my-org",
        repository_name="app",
        job_id="job-uuid",
        workflow_run_id=99,
        job_workflow_ref="my-org/app/.github/workflows/ci.yaml@refs/heads/main",
        job_display_name="",
        runner_name="arc-runner-1",
        runner_id=12,
    )
    assert job_fields(job) == {
        "jobRunnerId": 12,
        "jobRequestId": 7,
        "jobRepositoryName": "my-org/app",
        "jobId": "job-uuid",
        "workflowRunId": 99,
        "jobWorkflowRef": "my-org/app/.github/workflows/ci.yaml@refs/heads/main",
    }
    assert job_fields(JobStarted(message_type="JobStarted", runner_request_id=0)) == {}


# -- what the EphemeralRunnerSet does with the patches (§2.2 step 9) ------------------------------------


@dataclass
class RunnerSet:
    """§2.2 step 9, reduced to counts: runners carry the patch id that created them; scaling happens only
    under patch id 0 or a new id; a positive id only creates; id 0 also removes idle runners."""

    busy: int = 0
    idle: int = 0
    latest_patch_id: int = -1

    @property
    def total(self) -> int:
        return self.busy + self.idle

    def apply(self, patch: ScalePatch) -> None:
        if patch.patch_id != 0 and patch.patch_id == self.latest_patch_id:
            return
        if self.total < patch.replicas:
            self.idle += patch.replicas - self.total
            self.latest_patch_id = patch.patch_id
        elif patch.patch_id == 0 and self.total > patch.replicas:
            self.idle -= min(self.idle, self.total - patch.replicas)

    def start_job(self) -> None:
        self.idle -= 1
        self.busy += 1

    def finish_job(self) -> None:
        self.busy -= 1  # ephemeral: the runner is gone after its job


def test_a_positive_patch_id_never_scales_down_and_idle_returns_to_the_minimum() -> None:
    scaler = Scaler(min_runners=1, max_runners=3)
    ers = RunnerSet()
    totals: list[tuple[int, int]] = []  # (patch id, runner total after applying it)

    def patch(assigned: int) -> None:
        before = ers.total
        p = scaler.desired(assigned)
        ers.apply(p)
        if p.patch_id > 0:
            assert ers.total >= before, f"patch {p} scaled down from {before}"
        totals.append((p.patch_id, ers.total))

    patch(0)  # session statistics: nothing assigned
    assert ers.total == 1
    patch(3)  # five jobs queued, three acquired (capacity 3)
    assert ers.total == 3
    for _ in range(3):
        ers.start_job()
        scaler.job_started()
    patch(3)
    # Jobs finish one by one; the remaining two get acquired as room frees up.
    for assigned in (3, 3, 2, 1, 0):
        ers.finish_job()
        scaler.job_completed()
        patch(assigned)
        while ers.idle and ers.busy < assigned:
            ers.start_job()
            scaler.job_started()
    patch(0)
    patch(0)
    assert ers.total == 1 and totals[-1] == (0, 1)
    assert all(total <= 3 for _, total in totals)


def test_only_patch_id_0_removes_surplus_idle_runners() -> None:
    scaler = Scaler(min_runners=1, max_runners=5)
    ers = RunnerSet()
    ers.apply(scaler.desired(4))  # first patch (id 0) creates 5
    assert ers.total == 5
    ers.apply(scaler.desired(0))  # target 1 under a positive id: nothing is removed
    assert ers.total == 5
    ers.apply(scaler.desired(0))  # idle at the minimum: id 0 forces the state
    assert ers.total == 1
