"""``create_app``: the read-only HTTP API over a journal, as one FastAPI app.

    GET /api/v1/namespaces/{namespace}/{plural}/{name}/phases   one object's phase history
    GET /api/v1/phases                                          transitions across objects
    GET /api/v1/journal, /api/v1/journal/stream                 raw records, and server-sent events
    GET /api/v1/namespaces/{namespace}/autoscalingrunnersets/{name}   a scale set now
    GET /healthz, /readyz, /metrics, /openapi.json, and the timeline page (``api.pages``)

Routes live in ``routes`` (history, journal, scale sets) and ``probes`` (health, metrics); this module
wires them to the journal and starts the task that counts records for the metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from api import errors, pages, probes, routes
from api.health import JournalReadiness
from api.metrics import Metrics
from api.ports import ControllerStats, JournalView, Readiness
from api.records import Streams
from api.state import ApiState

VERSION = "v1"


def create_app(
    journal: JournalView,
    *,
    readiness: Readiness | None = None,
    stats: ControllerStats | None = None,
    title: str = "arcsm",
) -> FastAPI:
    """The API over ``journal`` (a ``store.journal.Journal`` open in this event loop).

    ``readiness`` answers ``/readyz`` (default: the journal's own state, role ``none``); ``stats`` adds
    the controller's reconcile and queue metrics to ``/metrics`` (default: none). The app never writes
    the journal. ``app.state.api.streams.close()`` ends the open event streams; ``api.serving`` does it
    before the server stops.
    """
    state = ApiState(
        journal=journal,
        readiness=readiness or JournalReadiness(journal),
        metrics=Metrics(journal, stats),
        streams=Streams(),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        counting = asyncio.create_task(state.metrics.follow(), name="api metrics")
        try:
            yield
        finally:
            state.streams.close()
            counting.cancel()
            await asyncio.gather(counting, return_exceptions=True)

    app = FastAPI(
        title=title,
        version=VERSION,
        summary="The phase history and journal of arcsm, read-only.",
        lifespan=lifespan,
    )
    app.state.api = state
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(probes.router)
    app.include_router(pages.router)
    return app
