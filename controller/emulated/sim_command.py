"""``arcsm sim``: the emulated Kubernetes cluster and the fake GitHub and Actions service, in the foreground.

    arcsm sim [--control-plane emulated|real] [--host 127.0.0.1] [--port 0] [--kubeconfig PATH]
              [--github-port 0] [--no-crds] [...]

It serves what the tests and ``arcsm demo`` run against (``controller.emulated.simulating``,
``sim/README.md``), so ``kubectl`` or ``arcsm run`` can be pointed at it through the kubeconfig it writes;
arcsm's Helm chart applied to it runs this arcsm in-cluster. ``--control-plane real`` serves the same
world on a real control plane instead (``sim.controlplane``: etcd, kube-apiserver,
kube-controller-manager and kube-scheduler built from the Go module proxy, one emulated node), with the
same ready lines and kubeconfig. With ``--no-crds`` either starts without arcsm's CRDs, for a chart that
brings its own (upstream's gha-runner-scale-set-controller).
"""

from __future__ import annotations

import asyncio
import enum
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["sim"]


class ControlPlaneKind(enum.StrEnum):
    EMULATED = "emulated"
    REAL = "real"


def sim(
    control_plane: Annotated[
        ControlPlaneKind,
        typer.Option(
            help="emulated: the API server of sim/, in this process; real: etcd, kube-apiserver, "
            "kube-controller-manager and kube-scheduler at the pinned release (built with Go into the "
            "cache on first use, python -m sim.controlplane.build) and one emulated node."
        ),
    ] = ControlPlaneKind.EMULATED,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one.")] = 0,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="Write a kubeconfig that points at the emulated cluster here.")
    ] = None,
    watch_history: Annotated[
        int,
        typer.Option(help="Keep the last N events; older resourceVersions answer 410 Expired."),
    ] = 100_000,
    github_port: Annotated[
        int, typer.Option(help="Port of the fake GitHub and Actions service; 0 picks a free one.")
    ] = 0,
    min_runner_version: Annotated[
        str, typer.Option(help="Runners older than this X.Y.Z are refused at registration (they exit 7).")
    ] = "0.0.0",
    job_seconds: Annotated[float, typer.Option(help="How long a simulated job runs.")] = 1.0,
    long_poll_seconds: Annotated[
        float, typer.Option(help="How long GetMessage waits for a message before it answers 202.")
    ] = 20.0,
    no_crds: Annotated[
        bool,
        typer.Option(
            "--no-crds",
            help="Start without arcsm's CRDs, so a chart (upstream's) can install its own.",
        ),
    ] = False,
) -> None:
    """Run the emulated Kubernetes cluster (CRDs installed, namespaces default and arc-systems) and the
    fake GitHub and Actions service.

    With --no-crds it starts without arcsm's CRDs, so a chart that brings its own (upstream's) can install
    them."""
    from controller.emulated import simulating
    from sim.github.fake import GitHubSettings
    from sim.github.records import version_tuple

    if watch_history < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--watch-history")
    if not 0 <= github_port <= 65535:
        raise typer.BadParameter("must be a port number, or 0 for a free one", param_hint="--github-port")
    if version_tuple(min_runner_version) is None:
        raise typer.BadParameter("must be a version like 2.330.0", param_hint="--min-runner-version")
    if job_seconds < 0:
        raise typer.BadParameter("must not be negative", param_hint="--job-seconds")
    if long_poll_seconds <= 0:
        raise typer.BadParameter("must be positive", param_hint="--long-poll-seconds")
    settings = GitHubSettings(
        long_poll_seconds=long_poll_seconds, job_seconds=job_seconds, min_runner_version=min_runner_version
    )
    try:
        asyncio.run(
            simulating.serve(
                host=host,
                port=port,
                kubeconfig=kubeconfig,
                watch_history=watch_history,
                github_port=github_port,
                github_settings=settings,
                real=control_plane is ControlPlaneKind.REAL,
                crds=not no_crds,
            )
        )
    except OSError as exc:  # a port taken, an address not of this machine: one line, as arcsm run says it
        typer.echo(f"arcsm sim: {exc}", err=True)
        raise typer.Exit(1) from None
