"""``api.stacks.Sampler``: a profile whose asker goes away (the client disconnects, its request task is
cancelled) ends quietly on its own thread and frees the sampler for the next one.

Inputs: a real sampler thread over this process's threads. Outputs: no exception escapes the sampler's
thread (``threading.excepthook`` would print its traceback in the controller's log), and the next
profile is taken.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from api import stacks
from tests.helpers import eventually


async def test_a_profile_cancelled_by_its_asker_ends_quietly_and_frees_the_sampler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    escaped: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    sampler = stacks.Sampler()
    asking = asyncio.create_task(sampler.profile(0.3))

    def sampling() -> bool:
        return any(thread.name == "arcsm profile" for thread in threading.enumerate())

    await eventually(sampling, what="the profile's thread started")
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    await eventually(lambda: not sampling(), what="the profile's thread ended")
    assert escaped == []
    counts = await sampler.profile(0.05)
    assert counts is not None and any(stack.startswith("MainThread;") for stack in counts)
