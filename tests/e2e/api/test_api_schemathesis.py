"""Property-based checks of the API against its own OpenAPI document (schemathesis).

The app is served by uvicorn on loopback over a real journal (a recorded controller run) from a thread
with its own event loop, since schemathesis calls it synchronously. schemathesis reads
``/openapi.json``, generates valid and invalid requests for every operation, and checks each answer:
no 5xx, a documented status code, content type and headers, and a body matching the declared schema.
The event stream is left out: it never ends by design; ``test_api_http`` covers it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from api.app import create_app
from api.serving import ApiServer
from tests.e2e.api.apiworld import recorded_journal

STREAM = "/api/v1/journal/stream"
EXAMPLES = 25  # per operation and generation mode


class ServedInThread:
    """The API over a recorded journal, served from a thread's event loop until ``stop``."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self.url = ""
        self._thread = threading.Thread(target=self._run, name="api under test", daemon=True)

    def start(self) -> str:
        self._thread.start()
        if not self._ready.wait(timeout=30) or self._failure is not None:
            raise RuntimeError(f"the API did not start: {self._failure!r}")
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        journal = await recorded_journal(self._directory)
        try:
            server = await ApiServer.start(create_app(journal), host="127.0.0.1", port=0)
            self.url = server.url
            self._ready.set()
            await self._stop.wait()
            await server.stop()
        finally:
            await journal.close()


@pytest.fixture
def api_url(tmp_path: Path) -> Iterator[str]:
    served = ServedInThread(tmp_path)
    url = served.start()
    yield url
    served.stop()


# schemathesis's pytest plugin does not run on this pytest; its Python API drives hypothesis directly.
def test_every_answer_matches_the_openapi_document(api_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{api_url}/openapi.json").exclude(path=STREAM)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {"/api/v1/phases", "/api/v1/journal", "/readyz", "/metrics"}
    rejected: set[str] = set()
    for operation in operations:
        run(operation, GenerationMode.POSITIVE)
        try:
            run(operation, GenerationMode.NEGATIVE)
        except Unsatisfiable:
            continue  # no invalid request exists for it (no parameters, or strings only)
        rejected.add(operation.path)
    # The parameters that can be wrong (seqs, limits, kinds, types) were sent wrong too.
    assert {"/api/v1/phases", "/api/v1/journal"} <= rejected


def run(operation: schemathesis.APIOperation, mode: GenerationMode) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate()

    check()
