"""HTTP plumbing shared by the fake's route modules: JSON bodies in and out, credentials from the
``Authorization`` header, and error rendering (GitHub's shape under ``/api/v3``, §6.3's elsewhere)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from sim import wirejson
from sim.github import errors


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=wirejson.dumps(body),
        content_type="application/json",
        headers=headers,
    )


def error_response(err: errors.ServiceError | errors.GitHubError) -> web.Response:
    return json_response(err.body(), err.status)


def is_github_api(path: str) -> bool:
    return path == "/api/v3" or path.startswith("/api/v3/")


async def read_json(request: web.Request) -> Any:
    """The request's JSON body (a UTF-8 BOM allowed), or None when it is empty or not JSON."""
    raw = await request.read()
    if not raw.strip():
        return None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return None


def credential(request: web.Request, *schemes: str) -> str:
    """The token of an ``Authorization: <scheme> <token>`` header for one of ``schemes``; else ''."""
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() not in {s.lower() for s in schemes}:
        return ""
    return token.strip()
