"""``arcsm jobs``: queue jobs for a scale set on the fake GitHub that ``arcsm sim`` serves.

    arcsm jobs --github URL --scale-set NAME|ID [--count N] [--repository OWNER/REPO]

``arcsm sim`` prints the fake's URL (``arcsm sim: github URL``); this sends ``POST /_sim/jobs`` there, the
hook the tests use, after finding the scale set by its name (``runnerScaleSetName``) or id in ``GET
/_sim/state``. Each job queued is one line on stdout; a fake that does not answer, a scale set it does
not know (or two of that name, under different URLs) is one line on stderr and exit status 1.
"""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import typer

__all__ = ["jobs"]


class _Refused(Exception):
    pass


def _scale_set(http: httpx.Client, wanted: str) -> dict[str, Any]:
    scale_sets = http.get("/_sim/state").raise_for_status().json()["scaleSets"]
    found = [s for s in scale_sets if str(s["id"]) == wanted or s["name"] == wanted]
    if not found:
        known = ", ".join(f"{s['name']} ({s['id']})" for s in scale_sets) or "none yet"
        raise _Refused(f"no scale set {wanted!r} at the fake GitHub; it has {known}")
    if len(found) > 1:
        ids = ", ".join(str(s["id"]) for s in found)
        raise _Refused(f"{len(found)} scale sets are named {wanted!r} (ids {ids}); give the id")
    return dict(found[0])


def jobs(
    github: Annotated[
        str,
        typer.Option(
            metavar="URL", help="The fake GitHub's URL, as arcsm sim prints it (arcsm sim: github URL)."
        ),
    ],
    scale_set: Annotated[
        str, typer.Option(metavar="NAME|ID", help="The scale set: its runnerScaleSetName, or its id.")
    ],
    count: Annotated[int, typer.Option(min=1, help="How many jobs to queue.")] = 1,
    repository: Annotated[
        str,
        typer.Option(metavar="OWNER/REPO", help="The repository the jobs come from (default: the fake's)."),
    ] = "",
) -> None:
    """Queue jobs for a scale set on the emulated GitHub that arcsm sim serves."""
    owner, _, repo = repository.partition("/")
    body: dict[str, Any] = {"count": count}
    if repository:
        body |= {"ownerName": owner, "repositoryName": repo}
    try:
        with httpx.Client(base_url=github.rstrip("/"), timeout=30) as http:
            found = _scale_set(http, scale_set)
            answer = http.post("/_sim/jobs", json={**body, "scaleSetId": found["id"]})
            queued = answer.raise_for_status().json()["jobs"]
    except (_Refused, httpx.HTTPError, ValueError, KeyError) as exc:
        typer.echo(f"arcsm jobs: {exc}", err=True)
        raise typer.Exit(1) from None
    for job in queued:
        typer.echo(f"queued job {job['runnerRequestId']} for scale set {found['name']} ({found['id']})")
