"""ETags on the history responses: a strong validator over the exact bytes of the JSON body.

A client that sends the ETag back in ``If-None-Match`` gets ``304 Not Modified`` with no body while the
answer is unchanged, so a dashboard can poll the history cheaply. The tag is derived from the body, not
from the journal's seq, so it is right across restarts and retention alike.
"""

from __future__ import annotations

import hashlib
import json

from fastapi import Response
from pydantic import BaseModel

CACHE_CONTROL = "no-cache"  # keep a copy, but ask again each time (with If-None-Match)


def tag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak comparison, as RFC 9110 asks)."""
    if not if_none_match:
        return False
    wanted = etag.removeprefix("W/")
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == wanted:
            return True
    return False


def respond(
    model: BaseModel, if_none_match: str | None, *, headers: dict[str, str] | None = None
) -> Response:
    """``model`` as JSON with its ETag (and ``headers``), or a bodiless 304 when the client already has
    it. A page's ``answeredBy`` is left out when null: an API with no controller beside it answers as it
    always did."""
    content = model.model_dump(mode="json", by_alias=True)
    if content.get("answeredBy", False) is None:
        del content["answeredBy"]
    body = json.dumps(content, separators=(",", ":")).encode()
    etag = tag(body)
    headers = {**(headers or {}), "ETag": etag, "Cache-Control": CACHE_CONTROL}
    if matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type="application/json", headers=headers)
