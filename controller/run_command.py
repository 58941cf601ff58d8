"""``arcsm run``: the controller, in the foreground, until SIGTERM or SIGINT (then exit 0).

    arcsm run --journal PATH [--kubeconfig PATH] [--namespace NS]... [--controller-namespace arc-systems]
              [--qps N] [--burst N] [--listener-image IMAGE] [--log-level info]

Without ``--kubeconfig`` it uses the pod's service account (in-cluster). ``--namespace`` limits the
watches to those namespaces (the controller namespace, where listeners live, is always watched). Logs go
to stderr: text on a terminal, one JSON object per line otherwise, with the keys kind, namespace, name,
seq, from_phase, to_phase and trigger where they apply. A failure to start is one line on stderr and
exit status 1.

Not here yet: ``--http HOST:PORT`` (the HTTP API is a later issue). A scale set is never deleted over
its ``app.kubernetes.io/version`` label: arcsm adopts scale sets installed by upstream ARC's chart as
they are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from actions import errors as actions_errors
from controller import logkeys, running
from controller.contexts import ExecutorSettings
from controller.settings import ControllerSettings
from statemachines.snapshots import Settings as MachineSettings
from store.errors import JournalError
from watchers.settings import WatchSettings

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update({key: getattr(record, attr) for key, attr in logkeys.FIELDS if hasattr(record, attr)})
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if sys.stderr.isatty():
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(JsonLines())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[level])
    # httpx logs every request and transitions every state change at INFO; the controller logs what
    # matters (transitions with their keys, failed effects) itself.
    for noisy in ("httpcore", "httpx", "hpack", "aiohttp.access", "aiosqlite", "transitions"):
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))


def run(
    journal: Annotated[
        Path, typer.Option("--journal", help="The journal file (created if missing).", dir_okay=False)
    ],
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Reach the cluster with this kubeconfig (default: the pod's service account)."),
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", help="Watch only this namespace; repeat for more (default: all)."),
    ] = None,
    controller_namespace: Annotated[
        str, typer.Option(help="Where listeners and their objects live.")
    ] = "arc-systems",
    qps: Annotated[float, typer.Option(help="Kubernetes requests per second, on average.")] = 20.0,
    burst: Annotated[int, typer.Option(help="Kubernetes requests in a burst.")] = 30,
    listener_image: Annotated[
        str, typer.Option(help="The image listener pods run.")
    ] = MachineSettings.listener_image,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "info",
) -> None:
    """Run the controller: watch the scale sets, decide, journal and act, until SIGTERM or SIGINT."""
    if log_level not in LEVELS:
        raise typer.BadParameter(f"must be one of {', '.join(LEVELS)}", param_hint="--log-level")
    if qps <= 0 or burst < 1:
        typer.echo("arcsm run: --qps must be positive and --burst at least 1", err=True)
        raise typer.Exit(2)
    try:
        settings = ControllerSettings(
            journal_path=journal,
            kubeconfig=kubeconfig,
            watch=WatchSettings(namespaces=tuple(namespace or ())),
            executor=ExecutorSettings(qps=qps, burst=burst),
            machines=MachineSettings(
                controller_namespace=controller_namespace, listener_image=listener_image
            ),
        )
    except ValueError as exc:
        typer.echo(f"arcsm run: {exc}", err=True)
        raise typer.Exit(2) from None
    if kubeconfig is not None and not kubeconfig.is_file():
        typer.echo(f"arcsm run: cannot use the kubeconfig {kubeconfig}: no such file", err=True)
        raise typer.Exit(1)
    configure_logging(log_level)
    try:
        code = asyncio.run(running.run(settings))
    except (actions_errors.InvalidConfiguration, JournalError, OSError, RuntimeError) as exc:
        # RuntimeError: a task of the loop failed (its traceback is in the log above).
        typer.echo(f"arcsm run: {exc}", err=True)
        code = 1
    raise typer.Exit(code)
