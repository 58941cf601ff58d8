"""The listener as a process (``arcsm listener``): its config, its logs, the cluster, its signals.

``main`` reads upstream's listener ``config.json`` (spec §5.2), finds the cluster as kubectl does
(``kubeconfigs``: ``--kubeconfig``, ``$KUBECONFIG``, the pod's service account, ``~/.kube/config``),
sends logs to stderr at the config's ``log_level`` in its ``log_format`` (``logformat``'s lines), runs
``actions.listener.run_listener`` until SIGTERM or SIGINT and returns the exit status: 0 once it
stopped (its message session deleted), 1 with one line on stderr for a configuration or credential
error or no cluster to reach. ``controller.commands.listener_command``
declares the options and imports this module only when the listener runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from actions import errors, kubepatching, listenerconfig
from actions.listener import run_listener
from actions.listenerconfig import ListenerConfig
from controller.commands import logformat
from controller.loop import kubeconfigs
from controller.loop.kubeconfigs import Source


def configure_logging(level: str, log_format: str) -> None:
    """The config's level (debug when it names none) and format; the HTTP libraries' traces say nothing
    the listener does not, so they stay at INFO, and the Kubernetes client never logs a body."""
    known = level if level in logformat.LEVELS else "debug"
    logformat.configure_logging(known, "json" if log_format == "json" else "text", noisy_floor=logging.INFO)


async def serve(config: ListenerConfig, cluster: Source) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    logging.getLogger("arcsm.listener").info("reaching the cluster with %s", cluster)
    kube = await kubepatching.configuration(cluster.files)
    return await run_listener(config, kube=kube, stop=stop)


def main(config: Path | None, kubeconfig: Path | None) -> int:
    """Run the listener of ``config`` (default: ``$LISTENER_CONFIG_PATH``) on the cluster found from
    ``kubeconfig`` (``kubeconfigs.find``); the exit status."""
    path = config or listenerconfig.config_path(os.environ)
    try:
        parsed = listenerconfig.load(path)
        cluster = kubeconfigs.find(kubeconfig, explicit_flag="--kubeconfig (or ARCSM_KUBECONFIG)")
    except (errors.InvalidConfiguration, kubeconfigs.NoCluster) as exc:
        print(f"arcsm listener: {exc}", file=sys.stderr)
        return 1
    configure_logging(parsed.log_level, parsed.log_format)
    try:
        return asyncio.run(serve(parsed, cluster))
    except (errors.ActionsError, OSError) as exc:
        print(f"arcsm listener: {exc}", file=sys.stderr)
        return 1
