"""The timeline page and its assets are served from the package: ``GET /`` is the HTML, ``/static/NAME``
the CSS and JavaScript modules it links and imports, each with its media type; anything else under
``/static`` is a 404."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from api import pages

STATIC = Path(pages.__file__).parent / "static"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    app.include_router(pages.router)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arcsm") as c:
        yield c


async def loaded(http: httpx.AsyncClient) -> set[str]:
    """Every asset the page loads: those it links, and the modules those import, transitively."""
    page = await http.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    pending = re.findall(r'(?:href|src)="(static/[^"]+)"', page.text)
    found: set[str] = set()
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        asset = await http.get("/" + path)
        assert asset.status_code == 200 and asset.content, path
        if path.endswith(".js"):
            imported = re.findall(r'^import .* from "\./([^"]+)";$', asset.text, flags=re.MULTILINE)
            pending += [f"static/{name}" for name in imported]
    return found


async def test_the_page_links_only_assets_the_package_serves(http: httpx.AsyncClient) -> None:
    found = await loaded(http)
    assert {"static/timeline.css", "static/timeline.js", "static/fleet.js", "static/scaleset.js"} <= found
    shipped = {f"static/{p.name}" for p in STATIC.iterdir() if p.suffix in (".js", ".css")}
    assert found == shipped, "every shipped asset is loaded, and nothing else"
    assert (await http.get("/static/timeline.js")).headers["content-type"].startswith("text/javascript")
    assert (await http.get("/static/fleet.js")).headers["content-type"].startswith("text/javascript")
    assert (await http.get("/static/timeline.css")).headers["content-type"].startswith("text/css")


async def test_the_page_loads_nothing_from_another_host(http: httpx.AsyncClient) -> None:
    for path in ["/", *("/" + asset for asset in await loaded(http))]:
        assert not re.search(r"https?://", (await http.get(path)).text), path


async def test_unknown_or_escaping_asset_names_are_not_found(http: httpx.AsyncClient) -> None:
    for path in ("/static/missing.js", "/static/timeline.py", "/static/..%2Fpages.py", "/static/.hidden.css"):
        assert (await http.get(path)).status_code == 404, path
