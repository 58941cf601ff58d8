"""The ``arcsm`` command line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="arcsm: GitHub Actions runner scale sets on Kubernetes, with a journaled phase lifecycle.",
)


@app.callback()
def _root() -> None:
    """arcsm: GitHub Actions runner scale sets on Kubernetes, with a journaled phase lifecycle."""


@app.command()
def sim(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one.")] = 0,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="Write a kubeconfig that points at the emulated cluster here.")
    ] = None,
    watch_history: Annotated[
        int,
        typer.Option(help="Keep the last N events; older resourceVersions answer 410 Expired."),
    ] = 100_000,
) -> None:
    """Run the emulated Kubernetes cluster (CRDs installed, namespaces default and arc-systems)."""
    from controller import simulating

    if watch_history < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--watch-history")
    asyncio.run(simulating.serve(host=host, port=port, kubeconfig=kubeconfig, watch_history=watch_history))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
