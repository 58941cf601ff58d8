"""The ``arcsm`` command line."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="arcsm: GitHub Actions runner scale sets on Kubernetes.")


@app.callback()
def _root() -> None:
    """arcsm: GitHub Actions runner scale sets on Kubernetes, with a journaled phase lifecycle."""


def main() -> None:
    app()
