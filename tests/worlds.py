"""The two worlds a story runs on: the emulated cluster (``sim.world.World``) and the real control plane
(``sim.controlplane.world.RealWorld``: etcd, kube-apiserver, kube-controller-manager, kube-scheduler at the
pinned release, one emulated node, the fake GitHub).

Inputs: the ``world_kind`` fixture's parameter. Outputs: ``open_world(kind, github=...)``, an async context
manager of a started world of that kind (on the real control plane, one started ahead while the test
before ran, when the session said how many it will open: ``expect_real``; a world without the project's
CRDs, ``crds=False``, starts its own, and its test says so with ``both_worlds(crds=False)``). A test
module runs on both by taking ``world_kind`` (the fixture in ``tests/conftest.py``): each test then runs
once per world, ids ``[emulated]`` and ``[real]``.

The real world needs the binaries ``python -m sim.controlplane.build`` makes (the README's test command
builds them first). Without them its runs are skipped saying so, unless ``ARCSM_REAL_WORLD=required``
(what CI sets), when they fail: CI must never pass by skipping the real control plane.
"""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sim.controlplane import build, pki, spares
from sim.controlplane import world as real_world
from sim.world import CRD_DIR, World

EMULATED = "emulated"
REAL = "real"
KINDS = (EMULATED, REAL)


_spares: spares.Spares | None = None


def expect_real(count: int) -> None:
    """The session will open up to ``count`` real worlds: start the first control plane now, in the
    background, and each next one while the one before is in use (``sim.controlplane.spares``)."""
    global _spares
    if count <= 0 or _spares is not None or not real_world.available():
        return
    bin_dir = build.binaries()
    _spares = spares.Spares(lambda: real_world.control_plane_for(bin_dir), count=count)
    _spares.prepare()


def opens_real(item: pytest.Item) -> bool:
    """Whether a collected test takes a spare real world: its ``world_kind`` is real (unless it is marked
    ``both_worlds(crds=False)``: it starts one without the CRDs), or it takes the ``world`` of the real
    control plane's own tests (``tests/e2e/controlplane``)."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("world_kind") == REAL:
        marker = item.get_closest_marker("both_worlds")
        return marker is None or marker.kwargs.get("crds", True)
    return item.path.parent.name == "controlplane" and "world" in getattr(item, "fixturenames", ())


def close_spares() -> None:
    global _spares
    if _spares is not None:
        _spares.close()
        _spares = None


def require_real() -> None:
    """Skip (or, where CI requires the real world, fail) when the control plane is not built."""
    if real_world.available():
        return
    message = "the control plane is not built: run python -m sim.controlplane.build"
    if os.environ.get("ARCSM_REAL_WORLD") == "required":
        pytest.fail(message)
    pytest.skip(message)


@contextlib.asynccontextmanager
async def open_world(
    kind: str, *, github: Any = False, seed: int | None = 1, crds: bool = True, **emulated: Any
) -> AsyncIterator[Any]:
    """A started world of ``kind``, with the project's CRDs unless ``crds`` is False (for a chart that
    brings its own); ``emulated`` are further ``World`` arguments (the emulator's alone)."""
    crd_dir = CRD_DIR if crds else None
    if kind == REAL:
        require_real()
        # A spare has the CRDs installed: a world without them starts a control plane of its own.
        control_plane = await _spares.take() if _spares is not None and crds else None
        world = real_world.RealWorld(github=github, control_plane=control_plane, crd_dir=crd_dir)
        try:
            async with world:
                yield world
        except BaseException:
            print(f"control plane logs kept in {world.control_plane.log_dir}")
            for name in world.control_plane.components:
                print(f"--- {name} (last lines)\n{world.control_plane.tail(name, 15)}")
            raise
    else:
        async with World(seed=seed, github=github, crd_dir=crd_dir, **emulated) as world:
            yield world


def client_ssl(world: Any) -> ssl.SSLContext | None:
    """What a raw HTTP client (aiohttp's ``ssl=``) needs to reach ``world`` as its admin: the cluster CA
    and the admin's client certificate on the real control plane, nothing on the emulator's plain HTTP."""
    if not is_real(world):
        return None
    context = ssl.create_default_context(cafile=str(world.ca_file))
    cert, key = world.control_plane.keys.client(pki.ADMIN)
    context.load_cert_chain(str(cert), str(key))
    return context


def is_real(world: Any) -> bool:
    """Whether ``world`` is the real control plane (for the few steps a real cluster needs done apart)."""
    return isinstance(world, real_world.RealWorld)
