"""What a user moving from ARC checks first, with kubectl, on a scale set arcsm runs: the printer columns
of the four kinds, ``kubectl describe`` of the scale set (its phase, conditions and Events) and the Events
of a runner.

Inputs: a world (the emulated cluster, and the real control plane), the real controller on a real journal,
a scale set with one idle runner, and the kubectl built with the pinned control plane. Outputs: each
kind's columns as its CRD declares them, filled from the objects the controller wrote (the scale set
Running and Ready with one runner, its runner set at one replica, the runner Running with its runner id,
the listener naming its scale set), and the phase changes the journal records shown as Events by
``kubectl describe`` and ``kubectl events --for``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World, load_crds
from statemachines.kinds import AL, ARS, ER
from statemachines.phaseevents import camel_case
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, Controller
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

pytestmark = [pytest.mark.both_worlds, requires_kubectl]

TIMEOUT = 40.0
HEADER = re.compile(r"\S+(?: \S+)*")


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def table(out: str) -> list[dict[str, str]]:
    """kubectl's table as one mapping per row, each cell cut at its header's column (an empty cell stays
    empty: kubectl pads it, it does not drop it)."""
    lines = out.rstrip("\n").splitlines()
    starts = [(m.start(), m.group()) for m in HEADER.finditer(lines[0])]
    rows = []
    for line in lines[1:]:
        bounds = [start for start, _ in starts] + [len(line)]
        rows.append({name: line[bounds[i] : bounds[i + 1]].strip() for i, (_, name) in enumerate(starts)})
    return rows


PLURALS = (
    ("autoscalingrunnersets", NS),
    ("ephemeralrunnersets", NS),
    ("ephemeralrunners", NS),
    ("autoscalinglisteners", CONTROLLER_NS),
)


def declared_columns(plural: str) -> list[str]:
    """The header kubectl prints for ``plural``: NAME, then the CRD's printer columns of priority 0."""
    [crd] = [c for c in load_crds() if c["spec"]["names"]["plural"] == plural]
    [version] = [v for v in crd["spec"]["versions"] if v.get("storage")]
    columns = version.get("additionalPrinterColumns") or []
    return ["NAME", *(c["name"].upper() for c in columns if not c.get("priority"))]


async def one_idle_runner(kube: client.ApiClient) -> bool:
    ars = await harness.get(kube, ARS, "arc")
    runners = await harness.items(kube, ER)
    status = (ars or {}).get("status") or {}
    return (
        status.get("phase") == "Running"
        and status.get("currentRunners") == 1
        and [(r.get("status") or {}).get("phase") for r in runners] == ["Running"]
        and bool((runners[0].get("status") or {}).get("runnerId"))
    )


async def test_kubectl_shows_the_columns_the_conditions_and_the_events_of_arcs_kinds(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1, maxRunners=3))
        await eventually(lambda: one_idle_runner(kube), timeout=TIMEOUT, what="one idle runner")

        for plural, namespace in PLURALS:
            [row] = table(await ok(kubeconfig, "get", plural, "-n", namespace))
            assert list(row) == declared_columns(plural), row

        [ars] = table(await ok(kubeconfig, "get", "autoscalingrunnersets", "-n", NS))
        assert (ars["NAME"], ars["MINIMUM RUNNERS"], ars["MAXIMUM RUNNERS"]) == ("arc", "1", "3")
        assert (ars["CURRENT RUNNERS"], ars["PHASE"], ars["READY"]) == ("1", "Running", "True"), ars

        [ers] = table(await ok(kubeconfig, "get", "ephemeralrunnersets", "-n", NS))
        assert (ers["DESIREDREPLICAS"], ers["CURRENTREPLICAS"], ers["PHASE"]) == ("1", "1", "Running"), ers

        runner = (await harness.items(kube, ER))[0]
        [er] = table(await ok(kubeconfig, "get", "ephemeralrunners", "-n", NS))
        assert er["NAME"] == runner["metadata"]["name"]
        assert er["GITHUB CONFIG URL"] == world.github_url + "/org"
        assert er["RUNNERID"] == str(runner["status"]["runnerId"])
        assert er["PHASE"] == "Running", er

        [al] = table(await ok(kubeconfig, "get", "autoscalinglisteners", "-n", CONTROLLER_NS))
        assert (al["AUTOSCALINGRUNNERSET NAMESPACE"], al["AUTOSCALINGRUNNERSET NAME"]) == (NS, "arc"), al
        listener = (await harness.items(kube, AL, CONTROLLER_NS))[0]
        assert al["NAME"] == listener["metadata"]["name"]

        # describe: the phase, the Ready condition and an Event for each phase change the journal holds.
        phases = await harness.phases_journaled(controller.journal)
        wanted = {camel_case(trigger) for from_, to, trigger in phases if from_ != to}
        assert wanted, phases

        async def described() -> str | None:
            out = await ok(kubeconfig, "describe", "autoscalingrunnerset", "arc", "-n", NS)
            events = out.partition("\nEvents:")[2]
            return out if all(f" {reason} " in events for reason in wanted) else None

        out = await eventually(
            described, timeout=TIMEOUT, interval=0.5, what=f"describe showing the Events {wanted}"
        )
        assert re.search(r"^\s+Phase:\s+Running$", out, re.M), out
        conditions = out.partition("Conditions:")[2]
        assert re.search(r"Type:\s+Ready", conditions) and re.search(r"Status:\s+True", conditions), out

        # A runner's own phase changes, as kubectl events --for lists them.
        name = runner["metadata"]["name"]

        async def runner_events() -> str | None:
            out = await ok(kubeconfig, "events", "-n", NS, "--for", f"ephemeralrunner/{name}")
            return out if re.search(r"\bNormal\b.*\bephemeralrunner/" + re.escape(name), out, re.I) else None

        await eventually(
            runner_events, timeout=TIMEOUT, interval=0.5, what=f"kubectl events for runner {name}"
        )
