"""``arcsm listener``: run one scale set's listener (``actions.listener``) as a process.

    arcsm listener --config /etc/gha-listener/config.json [--kubeconfig PATH]

The config is upstream's listener ``config.json`` (spec §5.2); without ``--config`` the path comes from
``$LISTENER_CONFIG_PATH`` as upstream's listener reads it. The cluster is found as kubectl and
controller-runtime find it (``kubeconfigs``): ``--kubeconfig`` (or ``ARCSM_KUBECONFIG``), else
``$KUBECONFIG``, else the pod's service account in a pod (a listener pod's case), else
``~/.kube/config``. Logs go to stderr at the config's
``log_level``, as text or one JSON object per line (``log_format``), stamped as the controller's are
(``logformat``: RFC 3339, UTC, milliseconds). SIGTERM and SIGINT stop the listener, which deletes its
message session and exits 0; a configuration or credential error exits 1 with one line on stderr.

This module holds the options; the process is ``controller.commands.listening``, imported when the listener
runs, so that ``arcsm listener --help`` does not load the Actions and Kubernetes clients.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["listener"]


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
        typer.Option(
            envvar="ARCSM_KUBECONFIG",
            help="Reach the cluster with this kubeconfig (default: $KUBECONFIG, merged as kubectl merges "
            "it; in a pod, its service account; else ~/.kube/config).",
        ),
    ] = None,
) -> None:
    """Run a scale set's listener: take jobs from GitHub's message queue and scale its EphemeralRunnerSet."""
    from controller.commands import lazyhttpx, lazykube

    lazykube.install()  # before anything imports kubernetes_asyncio: only the APIs and models used load
    lazyhttpx.install()  # before anything imports httpx: not its command line's libraries

    from controller.commands import listening

    raise typer.Exit(listening.main(config, kubeconfig))
