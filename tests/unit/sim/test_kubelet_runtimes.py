"""Which container runtime the simulated kubelet picks, and the scheduler's eligibility rule."""

from __future__ import annotations

from sim.runtimes import ContainerContext, Runtimes, default_runtime
from sim.scheduling import schedulable


async def exit_one(ctx: ContainerContext) -> int:
    return 1


async def exit_two(ctx: ContainerContext) -> int:
    return 2


POD = {"metadata": {"name": "p", "namespace": "default"}, "spec": {}}


def test_default_runtime_when_nothing_matches() -> None:
    runtimes = Runtimes()
    assert runtimes.resolve(POD, {"name": "main", "image": "busybox"}) is default_runtime


def test_image_matches_with_or_without_tag_and_digest() -> None:
    runtimes = Runtimes()
    runtimes.register_image("ghcr.io/actions/actions-runner", exit_one)
    for image in (
        "ghcr.io/actions/actions-runner",
        "ghcr.io/actions/actions-runner:2.321.0",
        "ghcr.io/actions/actions-runner@sha256:abc",
        "ghcr.io/actions/actions-runner:2.321.0@sha256:abc",
    ):
        assert runtimes.resolve(POD, {"name": "runner", "image": image}) is exit_one, image
    assert runtimes.resolve(POD, {"name": "runner", "image": "ghcr.io/actions/other"}) is default_runtime
    # A registry port is not a tag.
    runtimes.register_image("localhost:5000/runner", exit_two)
    assert runtimes.resolve(POD, {"name": "x", "image": "localhost:5000/runner:1"}) is exit_two


def test_latest_registration_wins() -> None:
    runtimes = Runtimes()
    runtimes.register_image("busybox", exit_one)
    runtimes.register_name("listener", exit_two)
    assert runtimes.resolve(POD, {"name": "listener", "image": "busybox"}) is exit_two
    assert runtimes.resolve(POD, {"name": "main", "image": "busybox"}) is exit_one
    runtimes.register(lambda pod, container: True, exit_one)
    assert runtimes.resolve(POD, {"name": "listener", "image": "busybox"}) is exit_one


def test_schedulable() -> None:
    assert schedulable({"metadata": {}, "spec": {"schedulerName": "default-scheduler"}})
    assert schedulable({"metadata": {}, "spec": {}})
    assert not schedulable({"metadata": {}, "spec": {"schedulerName": "other"}})
    assert not schedulable({"metadata": {}, "spec": {"nodeName": "n"}})
    assert not schedulable({"metadata": {"deletionTimestamp": "2025-01-01T00:00:00Z"}, "spec": {}})
