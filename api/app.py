"""``create_app``: the read-only HTTP API over a journal, as one FastAPI app.

    GET /api/v1/namespaces/{namespace}/{plural}/{name}/phases   one object's phase history
    GET /api/v1/phases                                          transitions across objects
    GET /api/v1/journal, /api/v1/journal/stream                 raw records, and server-sent events
    GET /api/v1/fleet                                           every scale set, filtered and paged
    GET /api/v1/namespaces/{namespace}/autoscalingrunnersets/{name}   a scale set now
    GET /api/v1/namespaces/{namespace}/autoscalingrunnersets/{name}/runners   its runners, a page
    GET /healthz, /readyz, /metrics, /openapi.json, and the timeline page (``api.pages``)
    GET /debug/stacks, /debug/profile                           when asked for (``api.debugging``)

FastAPI's ``/docs`` and ``/redoc`` are off: their pages load Swagger UI and ReDoc from a CDN, which a
cluster without Internet access cannot reach, so they would be blank exactly where the controller runs.
The one package that ships those assets for FastAPI (fastapi-offline) is a single maintainer's bundle
of about 3 MB of minified JavaScript, refreshed when someone asks, that every controller pod would carry
for a page no probe or collector reads. ``/openapi.json`` stays: any OpenAPI viewer on a workstation
renders it, and the timeline page at ``/`` is the API's page for a person.

Routes live in ``routes`` (history, journal, the fleet, scale sets and their runners) and ``probes``
(health, metrics); this module wires them to the journal and starts the tasks that follow it: the
metrics' counters and the phase history index (``phaseindex``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from api import debugging, errors, pages, probes, routes
from api.health import JournalReadiness
from api.journalfeed import Streams
from api.metrics import Metrics
from api.phaseindex import KEEP, PhaseIndex
from api.phases import items_of
from api.ports import ControllerStats, JournalView, Readiness
from api.state import ApiState

VERSION = "v1"


def create_app(
    journal: JournalView,
    *,
    readiness: Readiness | None = None,
    stats: ControllerStats | None = None,
    title: str = "arcsm",
    phase_items_kept: int = KEEP,
    max_streams: int | None = None,
    debug_endpoints: bool = False,
) -> FastAPI:
    """The API over ``journal`` (a ``store.journal.Journal`` open in this event loop).

    ``readiness`` answers ``/readyz`` (default: the journal's own state, role ``none``); ``stats`` adds
    the controller's reconcile and queue metrics to ``/metrics`` (default: none); ``phase_items_kept``
    bounds the phase history held in memory (``phaseindex``; older pages are scanned); ``max_streams`` the
    journal event streams open at once (None: no bound; one more is answered 503); ``debug_endpoints``
    adds ``/debug/stacks`` and ``/debug/profile`` (``api.debugging``; without it they are 404). The app
    never writes the journal. ``app.state.api.streams.close()`` ends the open event streams;
    ``api.serving`` does it before the server stops.
    """
    state = ApiState(
        journal=journal,
        readiness=readiness or JournalReadiness(journal),
        metrics=Metrics(journal, stats),
        streams=Streams(max_streams),
        phases=PhaseIndex(items_of, keep=phase_items_kept),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        following = [
            asyncio.create_task(state.metrics.follow(), name="api metrics"),
            asyncio.create_task(state.phases.follow(journal), name="api phase history"),
        ]
        try:
            yield
        finally:
            state.streams.close()
            for task in following:
                task.cancel()
            await asyncio.gather(*following, return_exceptions=True)

    app = FastAPI(
        title=title,
        version=VERSION,
        summary="The phase history and journal of arcsm, read-only.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.api = state
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(probes.router)
    app.include_router(pages.router)
    if debug_endpoints:
        app.include_router(debugging.router())
    return app
