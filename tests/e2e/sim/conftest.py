"""Fixtures of the emulator's own tests.

Inputs: the ``world`` fixture (tests/conftest.py). Outputs: ``kubeconfig``, the path of a kubeconfig for
that world, for tests that drive Debian's ``kubectl`` against it (tests/e2e/sim/kubectl_cli.py). Nothing
is mocked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.world import World
from tests.kubectl import KUBECTL, apply_flags


@pytest.fixture
def kubeconfig(world: World, tmp_path: Path) -> Path:
    if KUBECTL is not None:
        apply_flags()  # kubectl's version, asked once, synchronously
    return world.write_kubeconfig(tmp_path / "kubeconfig")
