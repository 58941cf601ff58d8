"""Whatever level the controller or a listener logs at, nothing logs a response body: kubernetes_asyncio's
REST client writes every body it reads at DEBUG, a Secret's data among them.

Inputs: the controller's and the listener's logging set up at ``debug``. Outputs: the REST client's
logger is not enabled for DEBUG while the rest of the process is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest

from controller.commands import listening, logformat


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    named = {name: logging.getLogger(name).level for name in (*logformat.NOISY, *logformat.SECRET_BEARING)}
    yield
    root.handlers[:], root.level = handlers, level
    for name, previous in named.items():
        logging.getLogger(name).setLevel(previous)


@pytest.mark.parametrize(
    "configure",
    [logformat.configure_logging, listening.configure_logging],
    ids=["controller", "listener"],
)
def test_debug_logs_no_response_body(configure: Callable[[str, str], None]) -> None:
    configure("debug", "json")
    assert logging.getLogger("arcsm.controller").isEnabledFor(logging.DEBUG)
    assert not logging.getLogger("kubernetes_asyncio.client.rest").isEnabledFor(logging.DEBUG)
