"""The listener's scaler (spec §5.4): from assigned jobs to the EphemeralRunnerSet's replicas and patch id.

A pure state machine, no I/O: the listener feeds it the job events and the assigned-job counts it reads
from the message queue, and sends the patch bodies it returns.

State: ``target`` (-1 before the first patch), ``patch_seq`` (-1 before the first patch) and ``dirty``
(a job started or completed since the last patch).

* ``job_started`` / ``job_completed`` set ``dirty``.
* ``desired(count)``: the sequence advances (wrapping to 0 at MaxInt32 before the increment, so the first
  id is 0 and ids after a wrap restart at 1); ``target = min(min_runners + count, max_runners)``; the
  patch id is the sequence, except **0** when nothing happened (not dirty), the target did not change and
  it is the minimum: idle at the minimum, the EphemeralRunnerSet may "force" its state and scale down
  idle runners. Then ``dirty`` is cleared and the target remembered.

How the EphemeralRunnerSet reads the patch (§2.2 step 9): it scales only when ``patchID == 0`` or the id
differs from the newest ``patch-id`` annotation on its runners, and a positive id only ever scales up;
scale-down happens under id 0 alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from actions.messages import JobStarted

MAX_INT32: Final = 2**31 - 1


@dataclass(frozen=True)
class ScalePatch:
    """One merge patch of the EphemeralRunnerSet's spec."""

    patch_id: int
    replicas: int

    def as_body(self) -> dict[str, object]:
        """``{"spec": {"patchID": id, "replicas": n}}``; ``"replicas": null`` at 0, as upstream's
        ``omitempty`` leaves the field out of its typed patch and the merge clears it."""
        return {"spec": {"patchID": self.patch_id, "replicas": self.replicas or None}}


class Scaler:
    def __init__(self, *, min_runners: int, max_runners: int) -> None:
        if min_runners < 0 or max_runners < min_runners:
            raise ValueError("need 0 <= min_runners <= max_runners")
        self.min_runners = min_runners
        self.max_runners = max_runners
        self.target = -1
        self.patch_seq = -1
        self.dirty = False

    def job_started(self) -> None:
        self.dirty = True

    def job_completed(self) -> None:
        self.dirty = True

    def desired(self, assigned_jobs: int) -> ScalePatch:
        """The patch for ``assigned_jobs`` (``statistics.totalAssignedJobs``), advancing the state."""
        if self.patch_seq == MAX_INT32:
            self.patch_seq = 0
        self.patch_seq += 1
        target = min(self.min_runners + max(assigned_jobs, 0), self.max_runners)
        patch_id = self.patch_seq
        if not self.dirty and target == self.target and target == self.min_runners:
            patch_id = 0
        self.dirty = False
        self.target = target
        return ScalePatch(patch_id=patch_id, replicas=target)


def job_fields(job: JobStarted) -> dict[str, object]:
    """The EphemeralRunner status fields of a started job; zero values are left out (omitempty)."""
    repository = f"{job.owner_name}/{job.repository_name}" if job.owner_name or job.repository_name else ""
    fields: dict[str, object] = {
        "jobRunnerId": job.runner_id,  # arcsm's: whose job it is, whatever the runner's name
        "jobRequestId": job.runner_request_id,
        "jobRepositoryName": repository,
        "jobId": job.job_id,
        "workflowRunId": job.workflow_run_id,
        "jobWorkflowRef": job.job_workflow_ref,
        "jobDisplayName": job.job_display_name,
    }
    return {key: value for key, value in fields.items() if value}
