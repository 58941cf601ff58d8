"""``arcsm manifests``: print the installation (CRDs, namespace, RBAC, StatefulSet, Service, PDB) as YAML.

    arcsm manifests [--namespace arc-systems] [--image IMAGE] [--replicas 2] [--watch-namespace NS]...
    arcsm manifests | kubectl apply -f -

Without ``--watch-namespace`` the controller watches every namespace and gets a ClusterRole; with it,
namespaced Roles in those namespaces and the controller namespace. See ``controller.manifests``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from controller import manifests


def manifests_command(
    namespace: Annotated[
        str, typer.Option(help="The controller namespace (listeners live there too).")
    ] = "arc-systems",
    image: Annotated[
        str | None,
        typer.Option(help="The arcsm image (default: arcsm:<version>, built from deploy/Dockerfile)."),
    ] = None,
    replicas: Annotated[int, typer.Option(help="Controller replicas (one journal volume each).")] = 2,
    watch_namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--watch-namespace", help="Watch only this namespace, with namespaced Roles; repeat for more."
        ),
    ] = None,
) -> None:
    """Print the manifests that install arcsm, for `kubectl apply -f -`."""
    try:
        settings = manifests.ManifestSettings(
            namespace=namespace,
            image=image if image is not None else manifests.default_image(),
            replicas=replicas,
            watch_namespaces=tuple(dict.fromkeys(watch_namespace or ())),
        )
    except ValueError as exc:
        typer.echo(f"arcsm manifests: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(manifests.dump(manifests.render(settings)), nl=False)
