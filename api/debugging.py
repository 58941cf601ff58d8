"""The operator's debug routes, served only when asked for (``arcsm run --debug-endpoints``):

    GET /debug/stacks              every thread's stack and every task's await chain (``api.stacks.dump``)
    GET /debug/profile?seconds=N   a wall-clock sampling profile of every thread, folded stacks

Both answer text/plain and are left out of the OpenAPI document: they are a tool for a person chasing a
hang, not part of the API's contract. Neither shows a value (``api.stacks``), but both tell whoever can
reach the port how the controller is built and what it is doing, and a profile keeps a thread sampling
for its seconds; so they are off by default, and without them the paths answer 404 like any unknown one.
A second profile asked while one runs is answered 409.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import PlainTextResponse

from api import stacks

MAX_SECONDS = 60.0


def router() -> APIRouter:
    """The debug routes of one app, with their own ``stacks.Sampler`` (one profile at a time)."""
    routes = APIRouter(include_in_schema=False)
    sampler = stacks.Sampler()

    @routes.get("/debug/stacks", response_class=PlainTextResponse)
    async def debug_stacks() -> PlainTextResponse:
        return PlainTextResponse(stacks.dump(), headers={"Cache-Control": "no-store"})

    @routes.get("/debug/profile", response_class=PlainTextResponse)
    async def debug_profile(
        seconds: Annotated[float, Query(gt=0, le=MAX_SECONDS)] = 5.0,
    ) -> PlainTextResponse:
        counts = await sampler.profile(seconds)
        if counts is None:
            raise HTTPException(
                status_code=409, detail="a profile is being taken; ask again when it has ended"
            )
        return PlainTextResponse(stacks.folded(counts), headers={"Cache-Control": "no-store"})

    return routes
