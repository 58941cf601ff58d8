"""``arcsm sim`` with the fake GitHub: it prints ``arcsm sim: github http://HOST:PORT`` after the
kubernetes line once the fake accepts requests, and honours ``--github-port``, ``--long-poll-seconds``,
``--min-runner-version`` and ``--job-seconds``.

Nothing is mocked: the installed console script runs as a subprocess and is driven over HTTP.
"""

from __future__ import annotations

import asyncio
import signal

import httpx

from tests.e2e.sim.github_flow import register
from tests.helpers import ARCSM, free_port


class _Url:
    """What the flow helpers need of a fake: its URLs (the fake runs in the subprocess)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.api_url = f"{url}/api/v3"

    def config_url(self, scope: str) -> str:
        return f"{self.url}/{scope}"


async def test_sim_serves_the_fake_github_with_its_flags() -> None:
    github_port = free_port()
    proc = await asyncio.create_subprocess_exec(
        ARCSM,
        "sim",
        "--github-port",
        str(github_port),
        "--long-poll-seconds",
        "0.3",
        "--min-runner-version",
        "2.330.0",
        "--job-seconds",
        "0.5",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        kube = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        github = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        assert kube.startswith("arcsm sim: kubernetes http://127.0.0.1:")
        assert github == f"arcsm sim: github http://127.0.0.1:{github_port}"
        fake = _Url(github.rsplit(" ", 1)[1])
        async with httpx.AsyncClient(timeout=10) as http:
            admin = await register(http, fake)
            scale_set = await admin.create_scale_set("arc-runners")
            session = await admin.open_session(scale_set["id"])
            assert (await session.get_message()).status_code == 202
            config = await admin.jit_config(scale_set["id"], "runner-old")
            old = await http.post(
                f"{fake.url}/_sim/runners",
                json={"encodedJITConfig": config["encodedJITConfig"], "version": "2.329.0"},
            )
            assert old.json()["accepted"] is False
            calls = (await http.get(f"{fake.url}/_sim/calls")).json()
            assert calls[0]["path"] == "/api/v3/orgs/acme/actions/runners/registration-token"
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_sim_refuses_a_bad_runner_version() -> None:
    proc = await asyncio.create_subprocess_exec(
        ARCSM,
        "sim",
        "--min-runner-version",
        "latest",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert b"--min-runner-version" in err
