"""The timeline page and its assets are served from the package: ``GET /`` is the HTML, ``/static/NAME``
the CSS and JavaScript it links, each with its media type; anything else under ``/static`` is a 404."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from api import pages


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    app.include_router(pages.router)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arcsm") as c:
        yield c


async def test_the_page_links_only_assets_the_package_serves(http: httpx.AsyncClient) -> None:
    page = await http.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    linked = re.findall(r'(?:href|src)="(static/[^"]+)"', page.text)
    assert sorted(linked) == ["static/timeline.css", "static/timeline.js"]
    for path in linked:
        asset = await http.get("/" + path)
        assert asset.status_code == 200, path
        assert asset.content, path
    assert (await http.get("/static/timeline.js")).headers["content-type"].startswith("text/javascript")
    assert (await http.get("/static/timeline.css")).headers["content-type"].startswith("text/css")


async def test_the_page_loads_nothing_from_another_host(http: httpx.AsyncClient) -> None:
    for path in ("/", "/static/timeline.js", "/static/timeline.css"):
        assert not re.search(r"https?://", (await http.get(path)).text), path


async def test_unknown_or_escaping_asset_names_are_not_found(http: httpx.AsyncClient) -> None:
    for path in ("/static/missing.js", "/static/timeline.py", "/static/..%2Fpages.py", "/static/.hidden.css"):
        assert (await http.get(path)).status_code == 404, path
