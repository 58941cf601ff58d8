"""The /api/v1 routes: phase history, journal records and their stream, the fleet, and a scale set now
with its runners.

``/at?seq=N`` (or ``?time=``) answers one object as the journal had it at a position (``positions``).
The phase history routes leave out the items that re-affirm a phase (from = to) unless asked
``?include=reaffirmed``; an object's history ends with its deletion (``phasehistory``). History answers
carry an ETag (``etags``); a bad parameter is a 422 and an object the journal holds nothing about a 404,
each with a one-line ``detail`` (``errors``). While the phase history index first folds a large journal,
``/phases`` across objects answers 503 with Retry-After (``phases.Loading``); one object's history and
the scale set are read from that object's records meanwhile. Every route only reads.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from api import errors, etags, fleet, journalfeed, phases, positions, runners, scalesets
from api.models import (
    FleetPage,
    JournalPage,
    ObjectAt,
    PhasePage,
    Problem,
    Replica,
    RunnerPage,
    ScaleSetView,
)
from api.phases import Kind, Plural
from api.state import ApiState, of
from store.records import RecordType

router = APIRouter(prefix="/api/v1")
log = logging.getLogger("arcsm.api.http")  # summarised by ``api.serving``

MAX_SEQ = 2**63 - 1  # SQLite's largest integer

State = Annotated[ApiState, Depends(of)]
After = Annotated[
    int,
    Query(ge=0, le=MAX_SEQ, description="Only what was recorded after this seq (the previous page's next)."),
]
Limit = Annotated[int, Query(ge=1, le=1000, description="At most this many items.")]
IfNoneMatch = Annotated[
    str | None, Header(description="The ETag of an earlier answer: 304 while it is unchanged.")
]
Namespace = Annotated[str, Path(description="The object's namespace.")]
Name = Annotated[str, Path(description="The object's name.")]
KindFilter = Annotated[str | None, Query(description="Only records about objects of this kind.")]
KindsFilter = Annotated[
    list[str] | None,
    Query(alias="kind", description="Only records about objects of these kinds (repeat for more)."),
]
NamespaceFilter = Annotated[str | None, Query(description="Only records about objects in this namespace.")]
NameFilter = Annotated[str | None, Query(description="Only records about objects of this name.")]
TypeFilter = Annotated[
    list[RecordType] | None, Query(alias="type", description="Only records of these types (repeat for more).")
]


class Include(enum.StrEnum):
    """What a phase history leaves out unless asked for."""

    REAFFIRMED = "reaffirmed"


Includes = Annotated[
    list[Include] | None,
    Query(
        description="reaffirmed: also the items that re-affirm a phase (from = to), journaled but not "
        "phase changes; left out by default."
    ),
]


def _reaffirmed(include: list[Include] | None) -> bool:
    return Include.REAFFIRMED in (include or ())


HISTORY = {**errors.NOT_MODIFIED, **errors.PROBLEMS}
STREAM_RETRY = 5  # seconds a client refused a stream is told to wait
STREAMS_FULL: dict[int | str, dict[str, Any]] = {
    503: {
        "model": Problem,
        "description": "As many journal streams are open as the server allows: retry after the seconds in "
        "Retry-After.",
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    },
}
LOADING: dict[int | str, dict[str, Any]] = {
    503: {
        "model": Problem,
        "description": "The phase history is still being loaded from the journal: retry after the seconds "
        "in Retry-After.",
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    },
}


@contextlib.contextmanager
def _loaded() -> Iterator[None]:
    """``phases.Loading`` as a 503 with Retry-After and a one-line detail."""
    try:
        yield
    except phases.Loading as exc:
        raise HTTPException(
            status_code=503, detail=str(exc), headers={"Retry-After": str(exc.retry_after)}
        ) from None


@router.get(
    "/namespaces/{namespace}/{plural}/{name}/phases",
    response_model=PhasePage,
    responses={**HISTORY, **errors.NOT_FOUND},
    summary="One object's phase history, oldest first",
)
async def object_phases(
    state: State,
    namespace: Namespace,
    plural: Plural,
    name: Name,
    if_none_match: IfNoneMatch = None,
    after: After = 0,
    limit: Limit = 100,
    include: Includes = None,
) -> Response:
    kind = plural.kind
    if not await phases.known(state.journal, kind=kind, namespace=namespace, name=name):
        raise HTTPException(
            status_code=404,
            detail=f"the journal holds nothing about {kind} {namespace}/{name}; check the namespace and name",
        )
    found = await phases.served_page(
        state.phases,
        state.journal,
        after=after,
        limit=limit,
        kind=kind,
        namespace=namespace,
        name=name,
        reaffirmed=_reaffirmed(include),
    )
    return _history(state, found, if_none_match)


AT: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "The object did not exist at that position."},
    410: {"model": Problem, "description": "Retention pruned the records that would say."},
}


@router.get(
    "/namespaces/{namespace}/{plural}/{name}/at",
    response_model=ObjectAt,
    responses={**HISTORY, **AT},
    summary="One object as arcsm had observed and decided it at a journal position",
)
async def object_at(
    request: Request,
    state: State,
    namespace: Namespace,
    plural: Plural,
    name: Name,
    seq: Annotated[
        int | None,
        Query(ge=1, le=MAX_SEQ, description="The journal position (past the last record: the last record)."),
    ] = None,
    time: Annotated[
        datetime | None,
        Query(
            description="An RFC 3339 time, standing for the whole of its last digit: the last record "
            "journaled at or before it (with seq too: the earlier of the two positions; with neither: the "
            "last record)."
        ),
    ] = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    try:
        position = seq if seq is not None else MAX_SEQ
        if time is not None:
            # As written: a time stands for the whole of its last digit, as ``arcsm history --at`` reads it.
            moment = positions.parse_time(request.query_params.get("time") or time.isoformat())
            position = min(position, await positions.seq_of_time(state.journal, moment))
        found = await positions.state_at(
            state.journal, kind=plural.kind, namespace=namespace, name=name, seq=position
        )
    except positions.NotThere as exc:
        raise HTTPException(status_code=exc.status, detail=str(exc)) from None
    return etags.respond(found, if_none_match)


@router.get(
    "/phases",
    response_model=PhasePage,
    responses={**HISTORY, **LOADING},
    summary="Phase transitions across objects, oldest first",
)
async def all_phases(
    state: State,
    namespace: Annotated[str | None, Query(description="Only objects in this namespace.")] = None,
    kind: Annotated[Kind | None, Query(description="Only objects of this kind.")] = None,
    if_none_match: IfNoneMatch = None,
    after: After = 0,
    limit: Limit = 100,
    include: Includes = None,
) -> Response:
    with _loaded():
        found = await phases.served_page(
            state.phases,
            state.journal,
            after=after,
            limit=limit,
            kind=kind,
            namespace=namespace,
            reaffirmed=_reaffirmed(include),
        )
    return _history(state, found, if_none_match)


def _history(state: ApiState, found: PhasePage, if_none_match: str | None) -> Response:
    """A phase history page that says which replica answers and what its history lacks, in its body
    (``answeredBy``) and in the headers ``X-Arcsm-Replica`` and ``X-Arcsm-Role``: each replica serves its
    own journal, and a client behind a Service cannot tell which one it reached otherwise."""
    replica = answering(state)
    if replica is None:
        return etags.respond(found, if_none_match)
    headers = {"X-Arcsm-Replica": replica.identity, "X-Arcsm-Role": replica.role}
    page = found.model_copy(update={"answered_by": replica})
    return etags.respond(page, if_none_match, headers=headers)


def answering(state: ApiState) -> Replica | None:
    """The replica that answers, from the readiness report; None with no controller beside the API."""
    report = state.readiness.report()
    if report.identity is None or report.role == "none":
        return None
    leader = report.leader or None
    if report.role == "leader":
        return Replica(identity=report.identity, role=report.role, leader=leader)
    ask = f"ask the leader, {leader}," if leader else "ask the leader (no replica holds the Lease now)"
    lacks = (
        "decisions: this replica stands by while another decides, so its history holds the phase changes "
        "it observed (source observed, their reason the Ready condition's) and the decisions of its own "
        f"terms of leadership, none from before its journal's first record; {ask} for every decision "
        "with its trigger and reason"
    )
    return Replica(identity=report.identity, role=report.role, leader=leader, lacks=lacks)


@router.get(
    "/journal", response_model=JournalPage, responses=HISTORY, summary="Journal records, oldest first"
)
async def journal_records(
    state: State,
    kind: KindFilter = None,
    namespace: NamespaceFilter = None,
    name: NameFilter = None,
    types: TypeFilter = None,
    if_none_match: IfNoneMatch = None,
    after: After = 0,
    limit: Limit = 100,
) -> Response:
    found = await journalfeed.page(
        state.journal, after=after, limit=limit, kind=kind, namespace=namespace, name=name, types=types
    )
    return etags.respond(found, if_none_match)


@router.get(
    "/journal/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-sent events: one `record` event per record (its id the seq), data the "
            "record as /api/v1/journal serves it; the stream follows new records until the server stops.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **errors.PROBLEMS,
        **STREAMS_FULL,
    },
    summary="Journal records as server-sent events, following new ones",
)
async def journal_stream(
    state: State,
    kinds: KindsFilter = None,
    namespace: NamespaceFilter = None,
    name: NameFilter = None,
    types: TypeFilter = None,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_SEQ, description="Start after this seq (default: the first record).")
    ] = None,
    last_event_id: Annotated[
        str | None, Header(description="Set by a reconnecting EventSource: resume after this seq.")
    ] = None,
) -> StreamingResponse:
    # A reconnecting EventSource repeats the URL's ?after= and adds the last id it saw: the later wins.
    start = max(after or 0, _seq(last_event_id))
    if not state.streams.admit():
        log.warning("the HTTP API refused a journal stream: %d open, its bound", state.streams.limit)
        raise HTTPException(
            status_code=503,
            detail=f"the HTTP API has {state.streams.limit} journal streams open, its bound: retry later, "
            "or raise --http-max-streams",
            headers={"Retry-After": str(STREAM_RETRY)},
        )
    events = journalfeed.stream(
        state.journal, state.streams, after=start, kinds=kinds, namespace=namespace, name=name, types=types
    )
    return _EventStream(
        events,
        state.streams,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


class _EventStream(StreamingResponse):
    """A stream that counts itself out of ``streams`` once answered, however it ended (even before its
    first event, when the client went away at once and the generator never ran)."""

    def __init__(self, content: Any, streams: journalfeed.Streams, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._streams.release()


def _seq(text: str | None) -> int:
    """A Last-Event-ID as a seq; anything else starts from the beginning."""
    if text is not None and text.strip().isdigit():
        return min(int(text.strip()), MAX_SEQ)
    return 0


@router.get(
    "/namespaces/{namespace}/autoscalingrunnersets/{name}",
    response_model=ScaleSetView,
    responses={**HISTORY, **errors.NOT_FOUND},
    summary="A scale set as arcsm sees it now",
)
async def scale_set(
    state: State, namespace: Namespace, name: Name, if_none_match: IfNoneMatch = None
) -> Response:
    found = await scalesets.view(state.journal, namespace, name, index=state.phases)
    if found is None:
        raise HTTPException(status_code=404, detail=await _gone(state, namespace, name))
    return etags.respond(found, if_none_match)


Offset = Annotated[int, Query(ge=0, le=MAX_SEQ, description="Skip this many items of the list.")]


class ReadyStatus(enum.StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


@router.get(
    "/fleet",
    response_model=FleetPage,
    responses=HISTORY,
    summary="Every scale set with what to check first, filtered and paged; the fleet counted",
)
async def fleet_overview(
    state: State,
    namespace: Annotated[str | None, Query(description="Only scale sets in this namespace.")] = None,
    search: Annotated[
        str | None, Query(max_length=253, description="Only scale sets whose name holds this text.")
    ] = None,
    phase: Annotated[
        str | None, Query(max_length=63, description='Only scale sets in this phase ("": none yet).')
    ] = None,
    ready: Annotated[
        ReadyStatus | None, Query(description="Only scale sets whose Ready condition has this status.")
    ] = None,
    order: Annotated[
        fleet.Order,
        Query(
            description="attention: Outdated or badly configured first, then not Ready, then with failed "
            "runners, each by namespace and name; name; changed: the newest change first."
        ),
    ] = fleet.Order.ATTENTION,
    offset: Offset = 0,
    limit: Limit = 100,
    if_none_match: IfNoneMatch = None,
) -> Response:
    found = await fleet.overview(
        state.journal,
        state.phases,
        namespace=namespace,
        search=search,
        phase=phase,
        ready=None if ready is None else ready.value,
        order=order,
        offset=offset,
        limit=limit,
    )
    return etags.respond(found, if_none_match)


@router.get(
    "/namespaces/{namespace}/autoscalingrunnersets/{name}/runners",
    response_model=RunnerPage,
    responses={**HISTORY, **errors.NOT_FOUND},
    summary="A scale set's runners, alive or deleted, a page at a time",
)
async def scale_set_runners(
    state: State,
    namespace: Namespace,
    name: Name,
    listed: Annotated[
        runners.Listed,
        Query(
            alias="state",
            description="live: the runners that exist now, failed first, then pending, running, the rest; "
            "deleted: those its runner set saw deleted, newest first.",
        ),
    ] = runners.Listed.LIVE,
    offset: Offset = 0,
    limit: Limit = 100,
    if_none_match: IfNoneMatch = None,
) -> Response:
    found = await runners.page(state.journal, namespace, name, listed=listed, offset=offset, limit=limit)
    if found is None:
        raise HTTPException(status_code=404, detail=await _gone(state, namespace, name))
    return etags.respond(found, if_none_match)


async def _gone(state: ApiState, namespace: str, name: str) -> str:
    """Why the scale set view has nothing to show: deleted (its history's end), or never observed."""
    kind = Kind.AUTOSCALING_RUNNER_SET
    ended = await phases.served_last(
        state.phases, state.journal, kind=kind, namespace=namespace, name=name, count=1
    )
    if ended and ended[-1].to is None:
        return (
            f"{kind} {namespace}/{name} was deleted (seq {ended[-1].seq}); its history stays at "
            f"GET /api/v1/namespaces/{namespace}/{Plural.AUTOSCALINGRUNNERSETS}/{name}/phases"
        )
    return f"no {kind} {namespace}/{name} is observed now; list them with GET /api/v1/phases?kind={kind}"
