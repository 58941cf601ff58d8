"""What the emulator does not serve is said in one line, as a cluster without the API would say it; the
real control plane serves it.

Inputs: a world (the emulated cluster, and the real control plane), a kubeconfig for it, the kubectl
built with the control plane. Outputs: ``kubectl get`` of Jobs, CronJobs, HorizontalPodAutoscalers,
Ingresses and PriorityClasses exits 1 with one line naming the resource type on the emulator, and lists
them (exit 0) on kube-apiserver.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.world import World
from tests import worlds
from tests.kubectl import kubectl, requires_kubectl

pytestmark = [pytest.mark.both_worlds, requires_kubectl]

UNSERVED = ("jobs", "cronjobs", "horizontalpodautoscalers", "ingresses", "priorityclasses")


async def test_kubectl_get_of_an_api_the_emulator_lacks_says_so_in_one_line(
    world: World, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    for resource in UNSERVED:
        code, out, err = await kubectl(kubeconfig, "get", resource, "-A")
        if worlds.is_real(world):
            assert code == 0, err
            continue
        assert code == 1 and not out, resource
        assert err.strip().splitlines() == [
            f'error: the server doesn\'t have a resource type "{resource}"'
        ], err
