"""``arcsm run`` finds the emulated cluster as kubectl and controller-runtime would: ``--kubeconfig``
first, then ``$KUBECONFIG`` (its files merged by kubectl's rules), then ``~/.kube/config``; with none of
them it exits 1 with one line saying what it tried. (The pod's service account, the step before
``~/.kube/config``, is https only and is tested in ``tests/unit/controller/test_kubeconfigs.py`` and
``tests/unit/controller/test_run_flags.py``.)

Every candidate kubeconfig is the world's own (``World.write_kubeconfig``) with a user token of its own,
and the emulator records each request's token: which kubeconfig the controller used is who its
requests came from. The controller is the installed command in a subprocess whose environment holds
only the candidates given; at exit it writes the modules it imported, which never include the emulator,
nor FastAPI or uvicorn without ``--http``.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from sim.world import World
from tests.helpers import (
    ARCSM,
    CLUSTER_VARIABLES,
    eventually,
    kubeconfig_as,
    modules_in,
    of_packages,
    reporting_modules,
)


def users(world: World) -> set[str]:
    return {request.user for request in world.requests}


class Run:
    """``arcsm run`` in a subprocess with a clean environment plus ``env``, until it is stopped."""

    def __init__(self, tmp_path: Path, env: dict[str, str], *args: str) -> None:
        report_env, self.report = reporting_modules(tmp_path)
        base = {k: v for k, v in os.environ.items() if k not in CLUSTER_VARIABLES}
        self.env = {**base, "HOME": str(tmp_path / "home"), **report_env, **env}
        self.args = ["run", "--journal", str(tmp_path / "journal.db"), "--namespace", "default", *args]
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> asyncio.subprocess.Process:
        self.proc = await asyncio.create_subprocess_exec(
            ARCSM, *self.args, env=self.env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        return self.proc

    async def stop(self, *, signalled: bool = True) -> tuple[int, str]:
        """SIGTERM (unless not ``signalled``: it is to end by itself), then its exit status and stderr."""
        assert self.proc is not None
        if signalled and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = await asyncio.wait_for(self.proc.communicate(), timeout=30)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode or 0, stderr.decode()


async def reaches_as(world: World, run: Run, user: str) -> None:
    """Start ``run``, wait until the world has its requests as ``user``, stop it; it must exit 0 having
    asked as nobody else, without leader election (it leads at once, holding the Lease as its journal's
    own and releasing it at the stop), and without importing the emulator."""
    before = users(world)
    await run.start()
    try:
        await eventually(
            lambda: user in users(world), timeout=30, what=f"the controller's requests as {user}"
        )
    finally:
        code, stderr = await run.stop()
    assert code == 0, stderr[-2000:]
    assert users(world) - before == {user}
    # No election with a kubeconfig by default: no standby, it leads at once. It holds the Lease while it
    # runs (so a replica that elects stands by beside it) and gives it up when it stops.
    assert "standby" not in stderr, stderr[-2000:]
    lease_writes = [r for r in world.requests if "/leases" in r.path and r.verb in ("create", "update")]
    assert lease_writes and all(r.user == user and r.status < 300 for r in lease_writes), lease_writes
    assert "released the lease arcsm-controller" in stderr, stderr[-2000:]
    modules = modules_in(run.report)
    assert "controller.loop.running" in modules
    assert not of_packages(modules, "sim", "fastapi", "uvicorn")


async def test_the_kubeconfig_flag_wins_over_kubeconfig_and_home(world: World, tmp_path: Path) -> None:
    flag = kubeconfig_as(world, tmp_path / "flag", "flag-user")
    from_env = kubeconfig_as(world, tmp_path / "from-env", "env-user")
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig_as(world, tmp_path / "home" / ".kube" / "config", "home-user")
    run = Run(tmp_path, {"KUBECONFIG": str(from_env)}, "--kubeconfig", str(flag))
    await reaches_as(world, run, "flag-user")


async def test_arcsm_kubeconfig_is_the_flag_s_variable(world: World, tmp_path: Path) -> None:
    flag = kubeconfig_as(world, tmp_path / "flag", "flag-user")
    from_env = kubeconfig_as(world, tmp_path / "from-env", "env-user")
    run = Run(tmp_path, {"ARCSM_KUBECONFIG": str(flag), "KUBECONFIG": str(from_env)})
    await reaches_as(world, run, "flag-user")


async def test_kubeconfig_files_are_merged_as_kubectl_merges_them_and_win_over_home(
    world: World, tmp_path: Path
) -> None:
    # The first file sets current-context and the user arcsm-sim; the second defines the cluster and the
    # context, and its own current-context points at a cluster where nothing listens. kubectl's rules:
    # the first file to set current-context wins, and so does the first to name a user.
    first = kubeconfig_as(world, tmp_path / "first", "first-user", clusters=None, contexts=None)
    elsewhere = {"name": "elsewhere", "context": {"cluster": "nowhere", "user": "arcsm-sim"}}
    nowhere = {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}}
    document = world.kubeconfig()
    second = kubeconfig_as(
        world, tmp_path / "second", "second-user", current_context="elsewhere",
        contexts=[*document["contexts"], elsewhere], clusters=[*document["clusters"], nowhere],
    )  # fmt: skip
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig_as(world, tmp_path / "home" / ".kube" / "config", "home-user")
    listed = os.pathsep.join([str(tmp_path / "missing"), "", str(first), str(second)])
    await reaches_as(world, Run(tmp_path, {"KUBECONFIG": listed}), "first-user")


async def test_the_home_kubeconfig_is_used_when_nothing_else_is_given(world: World, tmp_path: Path) -> None:
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig_as(world, tmp_path / "home" / ".kube" / "config", "home-user")
    await reaches_as(world, Run(tmp_path, {}), "home-user")


async def test_with_no_cluster_to_reach_it_says_what_it_tried_in_one_line(tmp_path: Path) -> None:
    run = Run(tmp_path, {})
    await run.start()
    code, stderr = await run.stop(signalled=False)
    assert code == 1
    [line] = stderr.strip().splitlines()
    assert line == (
        "arcsm run: no cluster to reach: no --kubeconfig (or ARCSM_KUBECONFIG), $KUBECONFIG unset, "
        f"not in a pod (KUBERNETES_SERVICE_HOST unset), and no {tmp_path / 'home' / '.kube' / 'config'}"
    )


async def test_kubeconfig_naming_no_file_that_exists_is_not_a_reason_to_look_further(
    world: World, tmp_path: Path
) -> None:
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig_as(world, tmp_path / "home" / ".kube" / "config", "home-user")
    run = Run(tmp_path, {"KUBECONFIG": str(tmp_path / "gone")})
    await run.start()
    code, stderr = await run.stop(signalled=False)
    assert code == 1
    assert stderr.strip() == f"arcsm run: $KUBECONFIG names no file that exists: {tmp_path / 'gone'}"
    assert "home-user" not in users(world)
