"""An EphemeralRunnerSet keeps no effect result about a runner once that runner is gone.

Inputs: the emulated cluster with the fake GitHub and the real controller in-process (``jobflow.run``:
two scale sets, three jobs each, one runner per job, every runner gone at the end). Outputs checked: the
journal the controller wrote, folded as the controller folds it (``Fold.apply``) and as a replay does
(``Fold.advance``), leaves each set's results naming none of the six runners it created (a set that
runs jobs for months would otherwise hold a result per runner it ever made), while the sets' other
results are still held; and the journal still replays to its decisions. Nothing is mocked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.loop import replaying, snapshotting
from controller.loop.folding import Fold
from statemachines.effects import ObjectRef
from statemachines.kinds import ER, ERS
from store.projection import Projection
from store.records import RecordType
from tests.e2e.controller import harness, jobflow


@pytest.mark.both_worlds
async def test_a_set_forgets_the_results_about_its_runners_once_they_are_gone(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world:
        run = await jobflow.run(world, tmp_path, scale_sets=2, jobs_per_set=3, slim=True)
    records = await harness.journaled(run.journal)
    created = {
        r.name
        for r in records
        if r.type is RecordType.OBSERVED and r.kind == ER and r.body["event"] == "ADDED"
    }
    assert len(created) >= run.jobs
    about_runners = [
        r
        for r in records
        if r.type is RecordType.EFFECT_RESULT and r.kind == ERS and f"{ER}/" in r.body["key"]
    ]
    assert len(about_runners) >= run.jobs  # the sets' creates of their runners were answered

    live, replayed = Fold(Projection()), Fold(Projection())
    for record in records:
        live.apply(record)
        replayed.advance(record)
    for fold in (live, replayed):
        assert fold.projection.items(ER) == []
        sets = [
            ObjectRef(ERS, harness.NS, snapshotting.meta(obj)["name"]) for obj in fold.projection.items(ERS)
        ]
        held = [fold.results.for_subject(ref, "") for ref in sets]
        assert len(held) == 2 and all(held)  # each set still holds its own writes' results
        assert [key for results in held for key in results if f"{ER}/" in key] == []

    again = replaying.replay(records)
    assert again.mismatch is None, again.mismatch.line()
