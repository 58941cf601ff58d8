"""``arcsm graph [KIND]``: each machine's lifecycle drawn from its transition table.

It prints ``statemachines.diagrams``: one kind's diagram (named as ``arcsm history --kind`` takes it: kind,
plural, singular or short name), or every kind's one after the other, as Mermaid (the default) or
Graphviz dot (``--format dot``); ``--format markdown`` prints the lifecycle page the docs carry
(``docs/lifecycles.md``), for all kinds. Each ends where ``arcsm history`` ends an object, in a final state
``(deleted)``. A bad kind or format is one line on stderr, exit 2.
"""

from __future__ import annotations

from typing import Annotated

import typer

from api import phases
from statemachines import diagrams

FORMATS = (*diagrams.FORMATS, "markdown")


def graph(
    kind: Annotated[
        str | None,
        typer.Argument(
            metavar="[KIND]",
            help="AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner or AutoscalingListener (or "
            "their plurals); all four when left out.",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="mermaid, dot, or markdown (the docs page).")
    ] = "mermaid",
) -> None:
    """Print each machine's lifecycle, drawn from its transition table (states, triggers, guards), ending
    in (deleted) as arcsm history does."""
    if fmt not in FORMATS:
        typer.echo(f"arcsm graph: --format {fmt!r} is not one of {', '.join(FORMATS)}", err=True)
        raise typer.Exit(2)
    found = None if kind is None else phases.kind_named(kind)
    if kind is not None and found is None:
        names = ", ".join(k.value for k in phases.Kind)
        typer.echo(f"arcsm graph: {kind!r} is not one of {names}", err=True)
        raise typer.Exit(2)
    if fmt == "markdown":
        if found is not None:
            typer.echo(
                "arcsm graph: --format markdown prints the page of all kinds; leave KIND out", err=True
            )
            raise typer.Exit(2)
        typer.echo(diagrams.markdown(), nl=False)
        return
    chosen = [found.value] if found is not None else list(diagrams.LIFECYCLES)
    comment = "%%" if fmt == "mermaid" else "//"
    for i, name in enumerate(chosen):
        if len(chosen) > 1:
            typer.echo(("\n" if i else "") + f"{comment} {name}")
        typer.echo(diagrams.render(name, fmt), nl=False)
