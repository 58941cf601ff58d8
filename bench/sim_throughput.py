"""Benchmark: how fast the emulated API server answers, as a ratio to a plain aiohttp echo server.

Both servers run as subprocesses on loopback and are driven by the same aiohttp client with the same
concurrency, in the same run, so the ratio cancels out the machine. Reported:

* create / merge-patch / server-side apply / get of ConfigMaps-sized objects: requests per second, and
  sim ÷ echo (the apply changes one value of an object a create made, as the merge patch does, so the two
  rows compare the JSON path with the apply path: its field sets, merge, conflict check and
  ``managedFields``);
* the same create and get in protobuf (``application/vnd.kubernetes.protobuf``, the body encoded once
  with ``sim.protobuf`` before the clock starts, ``Accept`` protobuf): what the protobuf codec costs
  beside the JSON path;
* create of a runner Pod as the fleet writes it, in JSON and in protobuf: a Pod body is decoded field by
  field as kube-apiserver decodes it (``sim.decoding``), so these rows show what decoding a large
  built-in object costs (the pods name a scheduler that does not exist, so they stay Pending and the
  scheduler and kubelet add no work);
* watch fan-out: events per second delivered to 10 concurrent watchers while one writer patches an
  object, and the same count of lines streamed by the echo server to 10 readers;
* a job through the fake Actions service while 200 other scale sets' sessions long-poll: queue a job
  for one set, its session's long poll answers, the message is deleted (three requests), per second,
  against the same three requests to the echo server.

Run: ``.venv/bin/python bench/sim_throughput.py [--requests N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from sim import protobuf

ROOT = Path(__file__).resolve().parent.parent
CONCURRENCY = 8
WATCHERS = 10
IDLE_POLLS = 200
PAT = "ghp_simThroughputBenchmarkToken0000000001"


def start(cmd: list[str], prefix: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(prefix):
            return proc, line.split()[-1]
    raise RuntimeError(f"{cmd[0]} did not start")


async def run_many(n: int, call: Callable[[int], Awaitable[None]]) -> float:
    """Run ``call(i)`` for i in range(n) with fixed concurrency; returns calls per second."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            await call(queue.get_nowait())

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return n / (time.perf_counter() - began)


def configmap(i: int, prefix: str = "cm") -> dict[str, object]:
    return {"metadata": {"name": f"{prefix}-{i}", "labels": {"app": "bench"}}, "data": {"k": "v" * 200}}


def runner_pod(i: int) -> dict[str, Any]:
    """A runner Pod shaped like the ones the controller creates for an EphemeralRunner."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"bench-runner-{i}",
            "labels": {
                "actions-ephemeral-runner": "True",
                "actions.github.com/scale-set-name": "bench",
                "actions.github.com/scale-set-namespace": "default",
                "app.kubernetes.io/component": "runner",
                "app.kubernetes.io/part-of": "gha-runner-scale-set",
            },
            "annotations": {"actions.github.com/runner-spec-hash": "5b8d7c9f6"},
        },
        "spec": {
            "schedulerName": "bench-unscheduled",
            "restartPolicy": "Never",
            "serviceAccountName": "default",
            "securityContext": {"fsGroup": 1001},
            "containers": [
                {
                    "name": "runner",
                    "image": "ghcr.io/actions/actions-runner:2.321.0",
                    "command": ["/home/runner/run.sh"],
                    "env": [
                        {
                            "name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
                            "valueFrom": {"secretKeyRef": {"name": f"bench-runner-{i}", "key": "jitToken"}},
                        },
                        {"name": "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT", "value": "arcsm/0.1"},
                        {"name": "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER", "value": "false"},
                    ],
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                        "limits": {"cpu": "2", "memory": "4Gi"},
                    },
                    "volumeMounts": [{"name": "work", "mountPath": "/home/runner/_work"}],
                    "securityContext": {"runAsUser": 1001, "runAsNonRoot": True},
                }
            ],
            "volumes": [{"name": "work", "emptyDir": {}}],
        },
    }


async def requests_per_second(session: aiohttp.ClientSession, base: str, n: int) -> dict[str, float]:
    coll = f"{base}/api/v1/namespaces/default/configmaps"
    json_h = {"Content-Type": "application/json"}
    merge_h = {"Content-Type": "application/merge-patch+json"}
    apply_h = {"Content-Type": "application/apply-patch+yaml"}
    proto_h = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": protobuf.MEDIA_TYPE}
    pods = f"{base}/api/v1/namespaces/default/pods"
    # Bodies built before the clock starts: the rows time the server, not the client's encoder.
    proto_cms = [
        protobuf.encode({"apiVersion": "v1", "kind": "ConfigMap", **configmap(i, "pb")}) for i in range(n)
    ]
    json_pods = [json.dumps(runner_pod(i)) for i in range(n)]
    proto_pods = [protobuf.encode(runner_pod(n + i)) for i in range(n)]
    sample = protobuf.decode(proto_pods[0])
    assert sample == runner_pod(n), f"the protobuf Pod is not the JSON Pod: {sample}"

    async def create(i: int) -> None:
        async with session.post(coll, data=json.dumps(configmap(i)), headers=json_h) as r:
            assert r.status in (200, 201), await r.text()
            await r.read()

    async def patch(i: int) -> None:
        body = json.dumps({"data": {"k": f"v{i}"}})
        async with session.patch(f"{coll}/cm-{i}", data=body, headers=merge_h) as r:
            assert r.status == 200, await r.text()
            await r.read()

    async def apply(i: int) -> None:
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", **configmap(i), "data": {"k": f"a{i}"}})
        async with session.patch(
            f"{coll}/cm-{i}?fieldManager=bench&force=true", data=body, headers=apply_h
        ) as r:
            assert r.status == 200, await r.text()
            await r.read()

    async def get(i: int) -> None:
        async with session.get(f"{coll}/cm-{i}") as r:
            assert r.status == 200, await r.text()
            await r.read()

    async def create_pb(i: int) -> None:
        async with session.post(coll, data=proto_cms[i], headers=proto_h) as r:
            assert r.status in (200, 201), await r.text()
            await r.read()

    async def get_pb(i: int) -> None:
        async with session.get(f"{coll}/pb-{i}", headers={"Accept": protobuf.MEDIA_TYPE}) as r:
            assert r.status == 200, await r.text()
            await r.read()

    async def pod_json(i: int) -> None:
        async with session.post(pods, data=json_pods[i], headers=json_h) as r:
            assert r.status in (200, 201), await r.text()
            await r.read()

    async def pod_pb(i: int) -> None:
        async with session.post(pods, data=proto_pods[i], headers=proto_h) as r:
            assert r.status in (200, 201), await r.text()
            await r.read()

    return {
        "create": await run_many(n, create),
        "patch": await run_many(n, patch),
        "apply": await run_many(n, apply),
        "get": await run_many(n, get),
        "create pb": await run_many(n, create_pb),
        "get pb": await run_many(n, get_pb),
        "pod json": await run_many(n, pod_json),
        "pod pb": await run_many(n, pod_pb),
    }


async def check_protobuf(session: aiohttp.ClientSession, base: str, n: int) -> None:
    """The protobuf rows measured protobuf: the emulator answers in it, with what the creates sent."""
    for path, name in (("configmaps", "pb-0"), ("pods", f"bench-runner-{n}")):
        url = f"{base}/api/v1/namespaces/default/{path}/{name}"
        async with session.get(url, headers={"Accept": protobuf.MEDIA_TYPE}) as r:
            assert r.content_type == protobuf.MEDIA_TYPE, r.content_type
            got = protobuf.decode(await r.read())
        assert got["metadata"]["name"] == name and got["metadata"]["labels"], got


async def sim_fanout(session: aiohttp.ClientSession, base: str, n: int) -> float:
    coll = f"{base}/api/v1/namespaces/default/configmaps"
    async with session.post(
        coll,
        data=json.dumps(configmap(-1) | {"metadata": {"name": "fan"}}),
        headers={"Content-Type": "application/json"},
    ) as r:
        rv = (await r.json())["metadata"]["resourceVersion"]
    got = 0
    done = asyncio.Event()

    async def watcher() -> None:
        nonlocal got
        url = f"{coll}?watch=1&resourceVersion={rv}&fieldSelector=metadata.name%3Dfan&timeoutSeconds=120"
        seen = 0
        async with session.get(url) as r:
            async for _line in r.content:
                seen += 1
                got += 1
                if seen >= n:
                    break
        if got >= n * WATCHERS:
            done.set()

    tasks = [asyncio.create_task(watcher()) for _ in range(WATCHERS)]
    await asyncio.sleep(0.2)  # let the watches connect before the clock starts
    began = time.perf_counter()

    async def write(i: int) -> None:
        async with session.patch(
            f"{coll}/fan",
            data=json.dumps({"data": {"k": str(i)}}),
            headers={"Content-Type": "application/merge-patch+json"},
        ) as r:
            await r.read()

    await run_many(n, write)
    await done.wait()
    elapsed = time.perf_counter() - began
    await asyncio.gather(*tasks)
    return got / elapsed


async def echo_fanout(session: aiohttp.ClientSession, base: str, n: int) -> float:
    async def reader() -> int:
        seen = 0
        async with session.get(f"{base}/stream?n={n}") as r:
            async for _line in r.content:
                seen += 1
        return seen

    began = time.perf_counter()
    counts = await asyncio.gather(*(reader() for _ in range(WATCHERS)))
    return sum(counts) / (time.perf_counter() - began)


async def sim_jobs(session: aiohttp.ClientSession, github: str, n: int) -> float:
    """Jobs per second for one scale set while ``IDLE_POLLS`` other sets' sessions long-poll."""
    from actions.client import ActionsClient
    from actions.credentials import PersonalAccessToken
    from actions.models import RunnerScaleSet
    from actions.redaction import SecretStr

    credentials = PersonalAccessToken(token=SecretStr(PAT))
    async with ActionsClient(config_url=f"{github}/org", credentials=credentials) as actions:
        sets = [
            await actions.create_runner_scale_set(RunnerScaleSet(name=f"bench-{i}", runner_group_id=1))
            for i in range(IDLE_POLLS + 1)
        ]
        queues = [await actions.create_message_session(s.id, f"bench-{s.id}") for s in sets]

    def headers(i: int) -> dict[str, str]:
        token = queues[i].message_queue_access_token.reveal()
        return {"Authorization": f"Bearer {token}", "X-ScaleSetMaxCapacity": "10"}

    async def idle(i: int) -> None:
        while True:
            async with waiting.get(queues[i].message_queue_url, headers=headers(i)) as r:
                await r.read()

    # The idle polls on a client of their own, without a connection limit, as each listener has.
    waiting = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    polls = [asyncio.create_task(idle(i)) for i in range(1, IDLE_POLLS + 1)]
    await asyncio.sleep(1.0)  # every idle poll open before the clock starts
    began = time.perf_counter()
    try:
        for _ in range(n):
            body = json.dumps({"scaleSetId": sets[0].id, "count": 1})
            async with session.post(f"{github}/_sim/jobs", data=body) as r:
                assert r.status == 201, await r.text()
            async with session.get(queues[0].message_queue_url, headers=headers(0)) as r:
                assert r.status == 200, await r.text()
                message = await r.json()
            url = f"{queues[0].message_queue_url}/{message['messageId']}"
            async with session.delete(url, headers=headers(0)) as r:
                assert r.status == 204, await r.text()
        return n / (time.perf_counter() - began)
    finally:
        for poll in polls:
            poll.cancel()
        await asyncio.gather(*polls, return_exceptions=True)
        await waiting.close()


async def echo_jobs(session: aiohttp.ClientSession, base: str, n: int) -> float:
    began = time.perf_counter()
    for i in range(n):
        for method in ("POST", "GET", "DELETE"):
            async with session.request(method, f"{base}/jobs/{i}", data=b"{}") as r:
                await r.read()
    return n / (time.perf_counter() - began)


async def main(n: int) -> None:
    sim_cmd = [sys.executable, "-m", "controller.commands.cli", "sim"]
    sim_proc, sim_url = start(sim_cmd, "arcsm sim: kubernetes")
    assert sim_proc.stdout is not None
    github_url = next(line.split()[-1] for line in sim_proc.stdout if line.startswith("arcsm sim: github"))
    echo_proc, echo_url = start([sys.executable, str(ROOT / "bench" / "echo_server.py")], "echo:")
    try:
        connector = aiohttp.TCPConnector(limit=64)
        async with aiohttp.ClientSession(connector=connector) as session:
            echo = await requests_per_second(session, echo_url, n)
            sim = await requests_per_second(session, sim_url, n)
            await check_protobuf(session, sim_url, n)
            print(f"{'operation':<12}{'sim req/s':>12}{'echo req/s':>12}{'sim/echo':>10}")
            for op in sim:
                print(f"{op:<12}{sim[op]:>12.0f}{echo[op]:>12.0f}{sim[op] / echo[op]:>10.2f}")
            fan_sim = await sim_fanout(session, sim_url, n // 2)
            fan_echo = await echo_fanout(session, echo_url, n // 2)
            print(
                f"{'watch x10':<12}{fan_sim:>12.0f}{fan_echo:>12.0f}{fan_sim / fan_echo:>10.2f}"
                "   (events/s delivered)"
            )
            jobs_sim = await sim_jobs(session, github_url, n // 4)
            jobs_echo = await echo_jobs(session, echo_url, n // 4)
            print(
                f"{'job x200':<12}{jobs_sim:>12.0f}{jobs_echo:>12.0f}{jobs_sim / jobs_echo:>10.2f}"
                f"   (jobs/s, {IDLE_POLLS} other sessions long-polling)"
            )
    finally:
        for proc in (sim_proc, echo_proc):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000)
    asyncio.run(main(parser.parse_args().requests))
