"""``arcsm run --debug-endpoints``: where every thread and task of the running controller is, over HTTP.

Real composition root (``controller.loop.running.run`` with ``settings.http`` and its debug routes), real
journal, the emulated cluster (``tests/e2e/controller/harness.py``). The stack dump names the
controller's own tasks where they are suspended, and a task of the same event loop holding a token in
a local variable is shown by its code, never by the token; a profile samples every thread but its own,
one profile at a time. Without the flag the paths are 404 (``test_api_in_controller``).
"""

from __future__ import annotations

import asyncio
import re
import secrets
from pathlib import Path

import httpx

from tests.e2e.controller import harness
from tests.helpers import eventually

TIMEOUT = 60.0


async def hold(token: str, gate: asyncio.Event) -> int:
    """Keep ``token`` in a local variable while suspended, as a client holding a credential would."""
    held = [token]
    await gate.wait()
    return len(held)


def block(dump: str, title: str) -> str:
    """The lines of ``dump`` under ``title``, up to the blank line that ends them."""
    start = dump.index(title + "\n")
    end = dump.find("\n\n", start)
    return dump[start : None if end < 0 else end]


async def leading(http: httpx.AsyncClient) -> None:
    async def ready() -> bool:
        answer = await http.get("/readyz")
        return answer.status_code == 200 and answer.json()["role"] == "leader"

    await eventually(ready, timeout=TIMEOUT, what="/readyz 200 as the leader")


async def test_the_stack_dump_names_the_controller_s_tasks_and_never_a_value(tmp_path: Path) -> None:
    token = secrets.token_hex(20)  # made here, so no line of source holds it
    gate = asyncio.Event()
    async with (
        harness.github_world() as world,
        harness.serving(world, tmp_path, TIMEOUT, debug_endpoints=True) as (_, url),
        httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http,
    ):
        holder = asyncio.create_task(hold(token, gate), name="holds a token")
        try:
            await leading(http)
            answer = await http.get("/debug/stacks")
        finally:
            gate.set()
            assert await holder == 1
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    dump = answer.text
    assert dump.startswith("arcsm stacks at ")
    # The controller's own supervised tasks, each down to the line it waits on, through `async for` too.
    tail = block(dump, "task 'journal tail':")
    assert ", in Reconciler._tail\n    async for record in self.journal.tail(" in tail
    assert ", in Journal.tail\n" in tail and tail.endswith("  awaiting a Future")
    assert ", in Reconciler.run\n" in block(dump, "task 'reconcile loop':")
    held = block(dump, "task 'holds a token':")
    assert ", in hold\n    await gate.wait()\n" in held
    assert ", in Event.wait\n" in held and held.endswith("  awaiting a Future")
    # The thread answering is the event loop's, caught in the dump itself.
    answering = re.search(
        r"^thread 'MainThread' \(ident \d+, the event loop answering this request\):$", dump, re.M
    )
    assert answering is not None
    assert ", in dump\n" in dump[answering.end() :]
    assert token not in dump


async def test_a_profile_samples_every_thread_but_its_own_one_at_a_time(tmp_path: Path) -> None:
    async with (
        harness.github_world() as world,
        harness.serving(world, tmp_path, TIMEOUT, debug_endpoints=True) as (_, url),
        httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http,
    ):
        await leading(http)
        first = asyncio.create_task(http.get("/debug/profile", params={"seconds": 5}))

        async def sampling() -> bool:
            # A thread's title starts its line; this test's own lines of source, shown on its task's
            # stack, are indented.
            dump = (await http.get("/debug/stacks")).text
            return re.search(r"^thread 'arcsm profile' \(ident \d+, daemon\):$", dump, re.M) is not None

        await eventually(sampling, timeout=TIMEOUT, what="the profile's thread sampling")
        second = await http.get("/debug/profile", params={"seconds": 1})
        assert second.status_code == 409
        assert second.json() == {"detail": "a profile is being taken; ask again when it has ended"}
        answer = await first
        for seconds in ("0", "61", "soon"):
            refused = await http.get("/debug/profile", params={"seconds": seconds})
            assert refused.status_code == 422 and "seconds" in refused.json()["detail"], refused.text
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    counts: dict[str, int] = {}
    for line in answer.text.splitlines():
        stack, _, count = line.rpartition(" ")
        counts[stack] = int(count)
    assert list(counts.values()) == sorted(counts.values(), reverse=True)  # busiest first
    threads = {stack.split(";", 1)[0] for stack in counts}
    assert "MainThread" in threads and "arcsm profile" not in threads
    loop = [stack for stack in counts if stack.startswith("MainThread;")]
    assert any(";BaseEventLoop.run_forever (asyncio/base_events.py:" in stack for stack in loop), loop[:3]
