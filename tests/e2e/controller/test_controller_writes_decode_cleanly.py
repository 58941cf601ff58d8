"""arcsm's own writes decode cleanly on a server that decodes built-ins as kube-apiserver does.

Inputs: the emulated cluster with the fake GitHub and the real controller in-process (``jobflow.run``: a
scale set, a job run by a runner, every runner gone at the end). Outputs checked: the request log
(``world.requests``): no write of the run drew a ``Warning`` (an unknown field the server would drop) or a
400 (a body the server cannot decode). Nothing is mocked.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.controller import harness, jobflow

WRITES = ("create", "update", "patch")


async def test_a_scale_set_running_a_job_draws_no_warning_and_no_decoding_error(tmp_path: Path) -> None:
    async with harness.github_world() as world:
        await jobflow.run(world, tmp_path, scale_sets=1, jobs_per_set=1, slim=True)
        writes = [r for r in world.requests if r.verb in WRITES]
    kinds = {r.path.split("/")[-1] if r.verb == "create" else r.path.split("/")[-2] for r in writes}
    assert {"pods", "secrets", "serviceaccounts", "roles", "rolebindings"} <= kinds, kinds
    assert [(r.method, r.path, r.warnings) for r in writes if r.warnings] == []
    assert [(r.method, r.path) for r in writes if r.status == 400] == []
