"""On upstream's CRDs (plus the three new fields) a no-op edit writes no status, as on arcsm's own (I8.1).

Inputs: the emulated cluster installed with arcsm's CRDs or with upstream's (``upstreamcrds``: no
``status.conditions``, which the API server then prunes), the fake GitHub, the real controller on a real
journal, a scale set settled with one idle runner. The test edits the scale set, its runner set and its
runner in a way no machine reads (an annotation of its own; a listener's annotations are its scale set's to
set, so it is left alone). Outputs: every object, the listener too, is decided again and every one of those
decisions is a no-op, so the emulated API server's request log shows no status PATCH after the edits; on
upstream's CRDs the controller says at start that it writes no conditions there, and none is stored.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from controller.loop import servedschemas
from sim.world import World
from statemachines.effects import MergePatch
from tests import upstreamcrds
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.e2e.controller.revision_steps import (
    AL,
    ARS,
    ER,
    ERS,
    TIMEOUT,
    Passes,
    create_scale_set,
    settled,
    status_of,
)
from tests.helpers import eventually

NOTE = {"metadata": {"annotations": {"example.com/note": "edited"}}}


@pytest.fixture(params=["arcsm", "upstream"])
def crds(request: pytest.FixtureRequest) -> str:
    """Whose CRDs the cluster serves."""
    return str(request.param)


@pytest.fixture
async def world(crds: str, tmp_path: Path) -> AsyncIterator[World]:
    installed = {} if crds == "arcsm" else {"crd_dir": upstreamcrds.write(tmp_path / "crds")}
    async with World(seed=1, github=True, **installed) as w:
        w.github.allow_pat(harness.PAT)
        try:
            yield w
        finally:
            await harness.stop_pods(w)


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Passes:
    return Passes.install(monkeypatch)


def status_patches(world: World, mark: int) -> list[str]:
    return [
        f"{r.path} -> {r.status}"
        for r in world.requests[mark:]
        if r.method == "PATCH" and r.path.endswith("/status")
    ]


async def test_a_no_op_edit_writes_no_status(
    crds: str,
    world: World,
    kube: client.ApiClient,
    tmp_path: Path,
    passes: Passes,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "arcsm.controller")
    async with Controller(world, tmp_path):
        await create_scale_set(world, kube, minRunners=1)
        await settled(world, kube, 1)
        (runner,) = await harness.items(kube, ER)
        (listener,) = await harness.items(kube, AL, CONTROLLER_NS)
        edited = {
            (ARS, harness.NS, "arc"),
            (ERS, harness.NS, "arc"),
            (ER, harness.NS, runner["metadata"]["name"]),
        }
        # The listener is decided again with its scale set; its own annotations are the scale set's.
        decided_again = {*edited, (AL, CONTROLLER_NS, listener["metadata"]["name"])}
        mark, requests = passes.mark(), len(world.requests)
        for kind, namespace, name in sorted(edited):
            await harness.merge_patch(kube, kind, name, NOTE, namespace)

        def every_object_decided_again() -> bool:
            return decided_again <= {p.key for p in passes.since(mark)}

        await eventually(every_object_decided_again, timeout=TIMEOUT, what="a pass of every edited object")
        decided = [e for p in passes.since(mark) for e in p.decision.effects]
        sent = [e for e in decided if isinstance(e, MergePatch) and e.subresource == "status"]

        def performed() -> bool:  # a status patch decided is one sent: wait for it, then count
            return len(status_patches(world, requests)) >= len(sent)

        await eventually(performed, timeout=TIMEOUT, what="the decided status patches sent")
        assert status_patches(world, requests) == []
        assert [p.decision for p in passes.since(mark) if not p.decision.is_noop] == []
        ars = await harness.required(kube, ARS)
    said = [r.getMessage() for r in caplog.records if "keeps no status.conditions" in r.getMessage()]
    if crds == "upstream":
        assert "conditions" not in status_of(ars)
        assert len(said) == 4, said
    else:
        assert status_of(ars)["conditions"]
        assert said == []


async def test_crds_that_cannot_be_read_count_as_keeping_conditions(caplog: pytest.LogCaptureFixture) -> None:
    """A cluster without the CRDs (or a controller not allowed to read them) changes nothing: arcsm
    writes conditions as it did, and says why it could not check."""
    caplog.set_level(logging.WARNING, "arcsm.controller")
    async with World(seed=1, crd_dir=None) as bare, client.ApiClient(bare.configuration()) as api:
        assert await servedschemas.conditions_pruned(api) == ()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("cannot read CRD")]
    assert len(said) == 4 and "NotFound" in said[0] and "grant get on customresourcedefinitions" in said[0]
