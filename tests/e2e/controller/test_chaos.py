"""Chaos runs as tests: random API and Actions faults, watch drops, 410 relists, an API and an Actions
outage, spec edits, queued jobs and SIGKILL restarts of the real ``arcsm run`` on one journal, with the
oracle of ``chaos.ChaosRun.check`` (scale sets at rest as a fault-free run leaves them, no journal record
lost, no busy runner removed, no registration orphaned).

The short run is in the suite: two scale sets and a plan of 16 steps (two kills, two outages of a few
seconds). The long run draws steps for ``ARCSM_CHAOS_MINUTES`` (default 5) with outages of 10 to 30 s and
is marked ``chaos_long``, which the suite deselects: ``.venv/bin/pytest -m chaos_long`` runs it, and
``bench/chaos.py --seed S --minutes M`` runs it outside pytest. The short run plays a fixed seed, so
the suite plays the same plan every time (a landing never waits on a plan nobody chose); the long run a
random one. ``ARCSM_CHAOS_SEED`` gives either a seed (``random``: a new one); a failure says which seed
to replay.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.controller import chaos, harness

SHORT_SEED = 20261202


@pytest.mark.both_worlds
async def test_a_short_chaos_run_ends_where_a_fault_free_run_ends(tmp_path: Path, world_kind: str) -> None:
    """On the real control plane the API faults, watch drops, relists and the outage are kube-apiserver
    killed or stopped and started again (etcd compacted first for a relist); a restart returns once
    every CRD's list answers, as kube-apiserver answers 429 "storage is (re)initializing" before."""
    seed = chaos.seed_from_environment(default=SHORT_SEED)
    print(f"chaos seed {seed}")
    async with harness.github_world(world_kind) as world:
        await chaos.run(world, tmp_path, seed)


@pytest.mark.chaos_long
async def test_a_long_chaos_run_ends_where_a_fault_free_run_ends(tmp_path: Path) -> None:
    seed = chaos.seed_from_environment()
    minutes = float(os.environ.get("ARCSM_CHAOS_MINUTES", "5"))
    print(f"chaos seed {seed}, {minutes} minutes")
    async with harness.github_world() as world:
        await chaos.run(world, tmp_path, seed, minutes=minutes, scale_sets=3)


def test_the_journal_oracle_sees_a_lost_a_changed_and_a_missing_record() -> None:
    def record(seq: int, name: str = "arc") -> dict[str, Any]:
        return {"seq": seq, "type": "observed", "name": name, "body": {}}

    acknowledged = {seq: record(seq) for seq in (1, 2, 3)}
    assert chaos.journal_problems(acknowledged, [record(seq) for seq in (1, 2, 3, 4)]) == []
    problems = chaos.journal_problems(acknowledged, [record(1), record(2, "other"), record(5)])
    assert problems == [
        "records served before a kill and gone after it: [3]",
        "records changed after a kill: [2]",
        "seqs missing from the journal: [3, 4]",
    ]
