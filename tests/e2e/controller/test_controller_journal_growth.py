"""A journal with slim Pods decides as one with whole Pods, and holds less per job.

Inputs: the emulated cluster with the fake GitHub and the real controller in-process (``jobflow.run``:
two scale sets, a job each, every runner gone at the end), once with the watchers journaling whole
objects and once slim (the default). Outputs checked: the whole journal, slimmed record by record
afterwards (same seqs), replays to the decisions recorded from whole objects; the slim run's own journal
replays to its decisions and passes ``arcsm journal verify``; it holds no Pod spec and no managedFields;
its Pod records hold fewer bytes per job than the whole run's. Nothing is mocked.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from controller.loop import replaying
from store import verifying
from store.records import Record, RecordType
from tests.e2e.controller import harness, jobflow
from watchers import slimming


def _slimmed(records: list[Record]) -> list[Record]:
    out = []
    for record in records:
        obj = record.body.get("object")
        if record.type is RecordType.OBSERVED and isinstance(obj, dict):
            record = dataclasses.replace(
                record, body={**record.body, "object": slimming.slim(record.kind, obj)}
            )
        out.append(record)
    return out


def _pod_bytes(run: jobflow.JobRun) -> int:
    return run.by_kind.get(("observed", "Pod"), (0, 0))[1]


async def test_slim_pods_decide_as_whole_ones_with_fewer_bytes_per_job(tmp_path: Path) -> None:
    async with harness.github_world() as world:
        whole = await jobflow.run(world, tmp_path / "whole", scale_sets=2, jobs_per_set=1, slim=False)
    async with harness.github_world() as world:
        slim = await jobflow.run(world, tmp_path / "slim", scale_sets=2, jobs_per_set=1, slim=True)

    recorded = await harness.journaled(whole.journal)
    assert any(
        r.type is RecordType.OBSERVED and "spec" in r.body["object"] for r in recorded if r.kind == "Pod"
    )
    again = replaying.replay(_slimmed(recorded))
    assert again.mismatch is None, again.mismatch.line()
    assert again.decisions == sum(r.type is RecordType.DECISION for r in recorded) > 0

    journaled = await harness.journaled(slim.journal)
    replayed = replaying.replay(journaled)
    assert replayed.mismatch is None, replayed.mismatch.line()
    assert (await verifying.verify(slim.journal)).records == len(journaled)
    observed = [r.body["object"] for r in journaled if r.type is RecordType.OBSERVED]
    pods = [o for o in observed if o.get("kind") == "Pod"]
    assert pods and not any("spec" in o for o in pods)
    assert not any("managedFields" in (o.get("metadata") or {}) for o in observed)
    assert _pod_bytes(slim) < _pod_bytes(whole)
