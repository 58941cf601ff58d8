"""``arcsm listener``: run one scale set's listener (``actions.listener``) as a process.

    arcsm listener --config /etc/gha-listener/config.json [--kubeconfig PATH]

The config is upstream's listener ``config.json`` (spec §5.2); without ``--config`` the path comes from
``$LISTENER_CONFIG_PATH`` as upstream's listener reads it. The cluster is reached through the pod's
service account, or ``--kubeconfig`` from outside a pod. Logs go to stderr at the config's
``log_level``, as text or one JSON object per line (``log_format``), stamped as the controller's are
(``logformat``: RFC 3339, UTC, milliseconds). SIGTERM and SIGINT stop the listener, which deletes its
message session and exits 0; a configuration or credential error exits 1 with one line on stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from actions import errors, kubepatching, listenerconfig
from actions.listener import run_listener
from actions.listenerconfig import ListenerConfig
from controller import logformat

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_logging(level: str, log_format: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logformat.formatter("json" if log_format == "json" else "text", sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS.get(level, logging.DEBUG))
    # The HTTP libraries' debug output (connection traces) says nothing the listener does not.
    for noisy in ("httpcore", "hpack", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(max(root.level, logging.INFO))


async def serve(config: ListenerConfig, kubeconfig: Path | None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    kube = await kubepatching.kubeconfig(kubeconfig) if kubeconfig is not None else None
    return await run_listener(config, kube=kube, stop=stop)


def listener(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The listener config.json [default: $LISTENER_CONFIG_PATH or /etc/gha-listener/config.json]",
            dir_okay=False,
        ),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Reach the cluster with this kubeconfig instead of the pod's service account."),
    ] = None,
) -> None:
    """Run a scale set's listener: take jobs from GitHub's message queue and scale its EphemeralRunnerSet."""
    path = config or listenerconfig.config_path(os.environ)
    try:
        parsed = listenerconfig.load(path)
    except errors.InvalidConfiguration as exc:
        typer.echo(f"arcsm listener: {exc}", err=True)
        raise typer.Exit(1) from None
    configure_logging(parsed.log_level, parsed.log_format)
    try:
        code = asyncio.run(serve(parsed, kubeconfig))
    except (errors.ActionsError, OSError) as exc:
        typer.echo(f"arcsm listener: {exc}", err=True)
        code = 1
    raise typer.Exit(code)
