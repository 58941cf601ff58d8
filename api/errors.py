"""Errors as the API answers them: ``{"detail": "one line"}`` saying what is wrong and what to do.

FastAPI's own 422 body is a list of validation errors; here it becomes one line naming the first
parameter that is wrong. ``PROBLEMS`` declares these answers in the OpenAPI document of every route.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from api.models import Problem

PROBLEMS: dict[int | str, dict[str, Any]] = {
    422: {"model": Problem, "description": "A parameter is not valid."},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "The journal holds nothing about this object."},
}
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "Unchanged since the ETag sent in If-None-Match."},
}


def one_line(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "the request is not valid; check its parameters"
    first = errors[0]
    where = [str(part) for part in first.get("loc", ())]
    place = f"{where[0]} parameter {'.'.join(where[1:])}" if len(where) > 1 else "the request"
    message = str(first.get("msg", "is not valid")).splitlines()[0]
    return f"{place}: {message}; fix it and ask again"


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": one_line(exc)})


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid)
