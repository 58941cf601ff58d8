"""A request of the HTTP client the listener and the controller use searches for no module.

httpcore asks ``sniffio`` which async library runs on every request; when it is not installed the
import fails each time after searching every entry of ``sys.path``, a cost paid per Actions call.

Inputs: the fake GitHub on loopback and a plain ``httpx.AsyncClient`` (its real transport).
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import httpx

from sim.github import GitHubFake


class Lookups(importlib.abc.MetaPathFinder):
    """Records every module name the import system is asked to find (and finds none itself)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        self.names.append(fullname)
        return None


async def test_steady_requests_look_up_no_module() -> None:
    async with GitHubFake(seed=1) as fake, httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(f"{fake.url}/_sim/state")).status_code == 200  # imports done once
        lookups = Lookups()
        sys.meta_path.insert(0, lookups)
        try:
            for _ in range(3):
                assert (await http.get(f"{fake.url}/_sim/state")).status_code == 200
        finally:
            sys.meta_path.remove(lookups)
    assert lookups.names == []
