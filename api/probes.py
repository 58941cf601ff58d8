"""Health, readiness and metrics routes (Kubernetes probes and Prometheus scrapes)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.models import Health, ReadinessBody
from api.state import of

router = APIRouter()


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "Not alive: only a restart recovers the process."}},
    summary="Alive: the process answers, and its journal's writer has not stopped for good",
)
async def healthz(request: Request) -> JSONResponse:
    failure = of(request).readiness.report().writer_failure
    body = Health(status="ok" if failure is None else "failing", journal_error=failure)
    content = body.model_dump(by_alias=True, exclude_none=True)
    return JSONResponse(status_code=200 if failure is None else 503, content=content)


@router.get(
    "/readyz",
    response_model=ReadinessBody,
    responses={503: {"model": ReadinessBody, "description": "Not ready: the body says which part is not."}},
    summary="Ready: the journal takes appends and the watches are synced",
)
async def readyz(request: Request) -> JSONResponse:
    state = of(request)
    report = state.readiness.report()
    body = ReadinessBody(
        ready=report.ready,
        journal_writable=report.journal_writable,
        synced=report.synced,
        role=report.role,
        last_seq=state.journal.last_seq,
        journal_error=report.journal_error,
    )
    content = body.model_dump(by_alias=True, exclude_none=True)
    return JSONResponse(status_code=200 if report.ready else 503, content=content)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {"schema": {"type": "string"}}}}},
    summary="Prometheus metrics",
)
async def metrics(request: Request) -> Response:
    return Response(content=generate_latest(of(request).metrics.registry), media_type=CONTENT_TYPE_LATEST)
