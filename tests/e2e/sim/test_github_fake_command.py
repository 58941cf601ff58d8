"""``arcsm sim`` with the fake GitHub: it prints ``arcsm sim: github http://HOST:PORT`` after the
kubernetes line once the fake accepts requests, and honours ``--github-port``, ``--long-poll-seconds``,
``--min-runner-version`` and ``--job-seconds``.

Nothing is mocked: the installed console script runs as a subprocess and is driven over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

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


@contextlib.asynccontextmanager
async def sim(*args: str) -> AsyncIterator[tuple[str, str]]:
    """``arcsm sim ARGS`` in a subprocess: (its kubernetes line, its github line); it must end 0
    on SIGTERM when the block ends without an error."""
    proc = await asyncio.create_subprocess_exec(
        ARCSM, "sim", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        kube = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        github = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        yield kube, github
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_sim_serves_the_fake_github_with_its_flags() -> None:
    github_port = free_port()
    flags = ("--long-poll-seconds", "0.3", "--min-runner-version", "2.330.0", "--job-seconds", "0.5")
    async with sim("--github-port", str(github_port), *flags) as (kube, github):
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


async def test_arcsm_jobs_queues_jobs_for_a_scale_set_by_name_or_id() -> None:
    async with sim() as (_kube, github):
        url = github.split()[-1]
        async with httpx.AsyncClient(timeout=10) as http:
            admin = await register(http, _Url(url))
            scale_set = await admin.create_scale_set("arc-runners")

            async def arcsm_jobs(*args: str) -> tuple[int, str, str]:
                run = await asyncio.create_subprocess_exec(
                    ARCSM,
                    "jobs",
                    "--github",
                    url,
                    *args,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, err = await asyncio.wait_for(run.communicate(), 60)
                assert run.returncode is not None
                return run.returncode, out.decode(), err.decode()

            code, out, err = await arcsm_jobs("--scale-set", "arc-runners", "--count", "2")
            assert code == 0, err
            assert out.splitlines() == [
                f"queued job {job['runnerRequestId']} for scale set arc-runners ({scale_set['id']})"
                for job in (await http.get(f"{url}/_sim/jobs")).json()
            ]
            code, out, _ = await arcsm_jobs("--scale-set", str(scale_set["id"]), "--repository", "acme/app")
            assert code == 0 and len(out.splitlines()) == 1
            jobs = (await http.get(f"{url}/_sim/jobs")).json()
            assert len(jobs) == 3 and {j["scaleSetId"] for j in jobs} == {scale_set["id"]}
            assert jobs[-1]["repositoryName"] == "app" and jobs[-1]["ownerName"] == "acme"

            code, out, err = await arcsm_jobs("--scale-set", "nope")
            assert (code, out) == (1, "")
            assert err.splitlines() == [
                f"arcsm jobs: no scale set 'nope' at the fake GitHub; it has arc-runners ({scale_set['id']})"
            ]
