"""What the routes of one app share, kept on ``app.state.api``."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from api.journalfeed import Streams
from api.metrics import Metrics
from api.phaseindex import PhaseIndex
from api.ports import JournalView, Readiness


@dataclass(frozen=True)
class ApiState:
    journal: JournalView
    readiness: Readiness
    metrics: Metrics
    streams: Streams
    phases: PhaseIndex


def of(request: Request) -> ApiState:
    state = request.app.state.api
    assert isinstance(state, ApiState)
    return state
