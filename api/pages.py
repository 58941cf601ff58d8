"""The timeline page: ``GET /`` and the static assets it loads.

The page is plain HTML, CSS and JavaScript modules shipped inside the package (``api/static``) and read
with ``importlib.resources``, so it works from a wheel or a source checkout alike, with no build step and
nothing fetched from a CDN. It opens on the fleet (``/api/v1/fleet``) and shows a scale set with its
runners (``.../autoscalingrunnersets/NAME``, ``.../runners``) and each object's phase history
(``.../phases``), every list paged by the server; the journal stream (``/api/v1/journal/stream``, filtered
by kind, type and namespace) brings what changes.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse, Response

router = APIRouter()

_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
}


def _asset(name: str) -> bytes | None:
    """The bytes of ``api/static/<name>``, or None when there is no such asset."""
    if "/" in name or "\\" in name or name.startswith("."):
        return None
    item = resources.files("api").joinpath("static").joinpath(name)
    if not item.is_file():
        return None
    return item.read_bytes()


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def timeline_page() -> Response:
    body = _asset("timeline.html")
    if body is None:
        raise HTTPException(
            status_code=500, detail="the timeline page is missing from the package; reinstall arcsm"
        )
    return Response(content=body, media_type=_MEDIA_TYPES[".html"], headers={"Cache-Control": "no-cache"})


@router.get("/static/{name}", include_in_schema=False)
async def static_asset(name: str) -> Response:
    suffix = name[name.rfind(".") :] if "." in name else ""
    media_type = _MEDIA_TYPES.get(suffix)
    body = _asset(name) if media_type is not None else None
    if body is None or media_type is None:
        raise HTTPException(status_code=404, detail=f"no static asset {name!r}")
    return Response(content=body, media_type=media_type, headers={"Cache-Control": "no-cache"})
