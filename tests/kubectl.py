"""``kubectl`` run against a world, for the tests that drive it: the one built with the pinned control
plane (``python -m sim.controlplane.build``), else whichever is on PATH.

Inputs: the path of a kubeconfig (``World.write_kubeconfig``). Outputs: kubectl's exit code, stdout and
stderr, or its JSON output decoded. kubectl runs as a subprocess while the event loop keeps serving the
emulated cluster; nothing is mocked. Tests that use it carry ``requires_kubectl``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sim.controlplane import build


def _find() -> str | None:
    built = build.binaries() / "kubectl"
    return str(built) if built.is_file() else shutil.which("kubectl")


KUBECTL = _find()
requires_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="no kubectl: build the control plane (python -m sim.controlplane.build)"
)


@functools.cache
def apply_flags() -> tuple[str, ...]:
    """``--validate=false`` for a kubectl older than 1.27 (Debian bookworm's is 1.20): it validates
    against OpenAPI v2 in protobuf, which the emulator does not serve; newer ones read OpenAPI v3 and leave
    validation to the server (``fieldValidation=Strict``).

    Call it before the event loop serves a cluster: it runs ``kubectl version --client`` synchronously."""
    assert KUBECTL is not None
    out = subprocess.run([KUBECTL, "version", "--client", "-o", "json"], capture_output=True, check=True)
    minor = int("".join(c for c in json.loads(out.stdout)["clientVersion"]["minor"] if c.isdigit()))
    return () if minor >= 27 else ("--validate=false",)


async def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None, within: float = 120
) -> tuple[int, str, str]:
    """Run kubectl without blocking the event loop the emulated cluster is served from."""
    assert KUBECTL is not None
    flags = apply_flags() if args[:1] == ("apply",) else ()
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        str(kubeconfig),
        *args,
        *flags,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), within)
    return proc.returncode or 0, out.decode(), err.decode()


async def ok(kubeconfig: Path, *args: str, stdin: str | None = None) -> str:
    code, out, err = await kubectl(kubeconfig, *args, stdin=stdin)
    assert code == 0, f"kubectl {' '.join(args)} failed ({code}): {err}"
    return out


async def get_json(kubeconfig: Path, *args: str) -> Any:
    return json.loads(await ok(kubeconfig, "get", *args, "-o", "json"))
