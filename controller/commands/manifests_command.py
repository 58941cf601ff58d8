"""``arcsm manifests``: the Helm chart rendered by Helm's SDK, for ``kubectl apply -f -``.

    arcsm manifests [--namespace arc-systems] [--image IMAGE] [--replicas N] [--watch-namespace NS]...
                    [-f values.yaml]... [--set key=value]... [--release-name arcsm] [--skip-crds]
    arcsm manifests | kubectl apply -f -

The same chart ``helm install`` installs (``deploy/charts/arcsm``), with the values of the files, then of the
shorthand options, then of each ``--set``, each merged over the values before it: maps key by key, anything
else (a list too) replaced whole; see ``controller.installation.manifests``. (Helm parses ``--set`` into the
values before it, so ``--set list[1]=x`` keeps a file's ``list[0]``; here it does not.) A values file in the
layout of upstream's experimental controller chart names the image and the replicas under ``controller``,
keys the chart reads first: ``--image`` and ``--replicas`` then set those too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from controller.installation import manifests

# Values merge as merge patches do (RFC 7386, nulls kept): maps key by key, anything else replaced, as
# Helm merges values files; Helm then drops a key given as null.
from statemachines.drafts import deep_merge as merged


def values_file(path: Path) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        detail = " ".join(str(exc).split())
        raise manifests.RenderError(f"cannot read the values file {path}: {detail}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise manifests.RenderError(f"the values file {path} is not a map of values")
    return loaded


def set_values(expression: str) -> dict[str, Any]:
    sdk = manifests.helm()
    try:
        parsed: dict[str, Any] = sdk.parse_set_string(expression)
    except sdk.HelmError as exc:
        raise manifests.RenderError(f"--set {expression!r}: {' '.join(str(exc).split())}") from None
    return parsed


def _given(values: dict[str, Any], *path: str) -> bool:
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return False
        values = values[key]
    return True


def shorthand(
    image: str | None, replicas: int | None, watch_namespaces: list[str], *, given: dict[str, Any]
) -> dict[str, Any]:
    """The values of the shorthand options. The chart reads a key of the experimental controller chart's
    layout before its counterpart, so where the ``given`` values hold one, the option sets it too."""
    values: dict[str, Any] = {}
    if image is not None:
        values["image"] = manifests.image_values(image)
        if _given(given, "controller", "manager", "container", "image"):
            values["controller"] = {"manager": {"container": {"image": image.strip()}}}
    if replicas is not None:
        if replicas < 1:
            raise manifests.RenderError("--replicas must be at least 1")
        values["replicaCount"] = replicas
        if _given(given, "controller", "replicaCount"):
            values = merged(values, {"controller": {"replicaCount": replicas}})
    if watch_namespaces:
        values["flags"] = {"watchNamespaces": list(dict.fromkeys(watch_namespaces))}
    return values


def manifests_command(
    namespace: Annotated[
        str, typer.Option(help="The controller namespace (listeners live there too).")
    ] = manifests.NAMESPACE,
    image: Annotated[
        str | None,
        typer.Option(help="The arcsm image (default: arcsm:<version>, built from deploy/Dockerfile)."),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(help="Controller replicas: 1 is a Deployment, more a StatefulSet (default 1)."),
    ] = None,
    watch_namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--watch-namespace", help="Watch only this namespace, with namespaced Roles; repeat for more."
        ),
    ] = None,
    values: Annotated[
        list[Path] | None,
        typer.Option("--values", "-f", help="A values file of the chart; repeat for more (later wins)."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="A chart value, key=value as Helm's --set takes it; repeatable."),
    ] = None,
    release_name: Annotated[str, typer.Option(help="The release name objects are named after.")] = "arcsm",
    skip_crds: Annotated[bool, typer.Option("--skip-crds", help="Leave the CRDs out.")] = False,
) -> None:
    """Print the manifests that install arcsm (its Helm chart, rendered), for `kubectl apply -f -`."""
    try:
        given: dict[str, Any] = {}
        for path in values or ():
            given = merged(given, values_file(path))
        given = merged(given, shorthand(image, replicas, watch_namespace or [], given=given))
        for expression in set_ or ():
            given = merged(given, set_values(expression))
        release = manifests.Release(name=release_name, namespace=namespace, values=given)
        documents = manifests.render(release, include_crds=not skip_crds)
    except manifests.RenderError as exc:
        typer.echo(f"arcsm manifests: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(manifests.dump(documents), nl=False)
