"""The ``arcsm`` command line: the table of its commands and ``--version``; a usage error of any of them
is one line on stderr (``usagelines``).

Each command lives in a module of its own, with its options, and is imported only when it runs or shows
its help (``lazycommands``): ``arcsm listener``, which every listener pod runs, and ``arcsm run`` import
neither the emulator nor each other's libraries, and ``arcsm --help`` lists the commands from the table.
A command's ``summary`` here is the first paragraph of its own help (a test keeps them equal).
"""

from __future__ import annotations

from typing import Annotated

import typer

from controller.commands.lazycommands import Lazy, LazyGroup
from controller.commands.usagelines import OneLineUsageGroup

HELP = "arcsm: GitHub Actions runner scale sets on Kubernetes, with a journaled phase lifecycle."


class ArcsmCommands(LazyGroup, OneLineUsageGroup):
    lazy = {
        "listener": Lazy(
            "controller.commands.listener_command",
            "listener",
            "Run a scale set's listener: take jobs from GitHub's message queue and scale its "
            "EphemeralRunnerSet.",
        ),
        "run": Lazy(
            "controller.commands.run_command",
            "run",
            "Run the controller: watch the scale sets, decide, journal and act, until SIGTERM or SIGINT.",
        ),
        "replay": Lazy(
            "controller.commands.replay_command",
            "replay",
            "Replay a recorded journal: fold its records and decide each recorded decision again from the "
            "journal prefix it read, with the machine settings the journal recorded; print the phase "
            "timeline and effects, or with --check report the first decision that comes out differently "
            "(with --diff, the first for each object, and what differs).",
        ),
        "history": Lazy(
            "controller.commands.history_command",
            "history",
            "Print an object's phase history from a journal, oldest first (works while a controller runs).",
        ),
        "graph": Lazy(
            "controller.commands.graph_command",
            "graph",
            "Print each machine's lifecycle, drawn from its transition table (states, triggers, guards), "
            "ending in (deleted) as arcsm history does.",
        ),
        "manifests": Lazy(
            "controller.commands.manifests_command",
            "manifests_command",
            "Print the manifests that install arcsm (its Helm chart, rendered), for `kubectl apply -f -`.",
        ),
        "demo": Lazy(
            "controller.emulated.demo",
            "demo",
            "Play the Outdated story in an emulated cluster: a runner image refused, the scale set parked in "
            "Outdated without churn, the image fixed and the scale set recovered; watch it on the timeline "
            "page.",
        ),
        "sim": Lazy(
            "controller.emulated.sim_command",
            "sim",
            "Run the emulated Kubernetes cluster (CRDs installed, namespaces default and arc-systems) and "
            "the fake GitHub and Actions service.",
        ),
        "jobs": Lazy(
            "controller.emulated.jobs_command",
            "jobs",
            "Queue jobs for a scale set on the emulated GitHub that arcsm sim serves.",
        ),
        "journal": Lazy(
            "controller.commands.journal_commands",
            "app",
            "Export, import and verify the journal (the SQLite file arcsm records every event and "
            "decision in).",
        ),
    }


# Plain help and errors, as click writes them (and kubectl and helm do): typer's rich boxes cost a
# command's help about 0.15 s of importing and drawing, more than typer and the command together.
app = typer.Typer(
    cls=ArcsmCommands, no_args_is_help=True, add_completion=False, rich_markup_mode=None, help=HELP
)


def _print_version(asked: bool) -> None:
    if not asked:
        return
    from importlib import metadata

    try:
        typer.echo(f"arcsm {metadata.version('arcsm')}")
    except metadata.PackageNotFoundError:
        typer.echo("arcsm: no version: the package is not installed (pip install -e .)", err=True)
        raise typer.Exit(1) from None
    raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """arcsm: GitHub Actions runner scale sets on Kubernetes, with a journaled phase lifecycle."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
