"""The floor of ``bench/fleet.py``: the least a controller can do to run the same jobs, as a process.

For N scale sets it registers each with the Actions service (one shared PAT and config URL), opens its
message session and long-polls it as a listener does; every JobAvailable it acquires, and for every job
acquired it asks for a JIT config and creates one runner Pod with it (the runner template: a container
named ``runner``, ``restartPolicy: Never``, the config in ``ACTIONS_RUNNER_INPUT_JITCONFIG``). One watch
on those Pods deletes each once it has Succeeded or Failed. No journal, no machines, no custom
resources, no retries beyond the Actions client's own: what is left of a controller's work when
everything it decides is dropped, so ``bench/fleet.py`` can report arcsm's figures as ratios to it.

Run by ``bench/fleet.py`` (``python bench/fleetfloor.py --kubeconfig K --config-url URL --token T --sets
N``): it prints ``started`` once imported, waits for a line on its standard input, prints ``ready
{"seconds": S}`` once every session is open (S from that line), runs until its standard input closes,
deletes its sessions and prints ``done {"pods": P}``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from kubernetes_asyncio import client, config  # noqa: E402

from actions.client import ActionsClient, ClientSettings, RateLimit  # noqa: E402
from actions.credentials import PersonalAccessToken  # noqa: E402
from actions.messages import JobAvailable  # noqa: E402
from actions.models import RunnerScaleSet  # noqa: E402
from actions.redaction import SecretStr  # noqa: E402
from actions.sessions import MessageQueue  # noqa: E402

LABEL = "fleet-floor"
JIT_CONFIG_ENV = "ACTIONS_RUNNER_INPUT_JITCONFIG"
DONE_PHASES = ("Succeeded", "Failed")


class Floor:
    def __init__(self, kube: client.ApiClient, actions: ActionsClient, args: argparse.Namespace) -> None:
        self.core = client.CoreV1Api(kube)
        self.actions = actions
        self.namespace: str = args.namespace
        self.image: str = args.image
        self.max_runners: int = args.max_runners
        self.names = itertools.count()
        self.pods = 0
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def runner(self, scale_set: RunnerScaleSet) -> None:
        name = f"{scale_set.name}-{next(self.names)}"
        jit = await self.actions.generate_jit_runner_config(scale_set.id, name)
        body = {
            "metadata": {"name": name, "namespace": self.namespace, "labels": {LABEL: scale_set.name}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "runner",
                        "image": self.image,
                        "env": [{"name": JIT_CONFIG_ENV, "value": jit.encoded_jit_config.reveal()}],
                    }
                ],
            },
        }
        await self.core.create_namespaced_pod(self.namespace, body)
        self.pods += 1

    async def listen(self, scale_set: RunnerScaleSet, queue: MessageQueue) -> None:
        last = 0
        while True:
            message = await queue.get_message(last_message_id=last, max_capacity=self.max_runners)
            if message is None:
                continue
            last = message.message_id
            available = [j.runner_request_id for j in message.jobs if isinstance(j, JobAvailable)]
            if available:
                for _ in await queue.acquire_jobs(available):
                    self.spawn(self.runner(scale_set))

    async def reap(self) -> None:
        """Delete every runner Pod that has finished, for as long as the floor runs. The watch is read as
        plain JSON: decoding every event into the client's models would make the floor the slow part."""
        listed = await self.core.list_namespaced_pod(
            self.namespace, label_selector=LABEL, _preload_content=False
        )
        body = json.loads(await listed.read())
        version = body["metadata"]["resourceVersion"]
        for pod in body["items"]:
            await self.finished(pod)
        while True:
            response = await self.core.list_namespaced_pod(
                self.namespace,
                label_selector=LABEL,
                watch=True,
                resource_version=version,
                allow_watch_bookmarks=True,
                timeout_seconds=300,
                _preload_content=False,
            )
            async with response:
                async for line in response.content:
                    event = json.loads(line)
                    pod = event["object"]
                    version = pod["metadata"]["resourceVersion"]
                    if event["type"] in ("ADDED", "MODIFIED"):
                        await self.finished(pod)

    async def finished(self, pod: dict[str, Any]) -> None:
        phase = (pod.get("status") or {}).get("phase")
        if phase in DONE_PHASES and not pod["metadata"].get("deletionTimestamp"):
            try:
                await self.core.delete_namespaced_pod(pod["metadata"]["name"], self.namespace)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise


async def main(args: argparse.Namespace) -> None:
    kube = await config.new_client_from_config(config_file=args.kubeconfig)
    settings = ClientSettings(rate_limit=RateLimit(max_rate=args.actions_rate))
    credentials = PersonalAccessToken(token=SecretStr(args.token))
    # Every scale set keeps a long poll open, as each listener does from its own pod: no pool limit.
    transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=None))
    actions = ActionsClient(
        config_url=args.config_url, credentials=credentials, settings=settings, transport=transport
    )
    async with kube, actions:
        floor = Floor(kube, actions, args)
        print("started", flush=True)
        await asyncio.to_thread(sys.stdin.readline)  # the benchmark's go, once it has counted
        started = asyncio.get_running_loop().time()
        group = await actions.get_runner_group_by_name("Default")
        gate = asyncio.Semaphore(16)

        async def register(i: int) -> tuple[RunnerScaleSet, MessageQueue]:
            async with gate:
                wanted = RunnerScaleSet(
                    name=f"{args.prefix}{i}", runner_group_id=group.id, disable_update=True
                )
                scale_set = await actions.create_runner_scale_set(wanted)
                queue = await MessageQueue.open(actions, scale_set_id=scale_set.id, owner_name="fleet-floor")
                return scale_set, queue

        registered = await asyncio.gather(*(register(i) for i in range(args.sets)))
        reaper = asyncio.create_task(floor.reap())
        listeners = [asyncio.create_task(floor.listen(s, q)) for s, q in registered]
        seconds = asyncio.get_running_loop().time() - started
        print("ready " + json.dumps({"seconds": seconds}), flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the benchmark closes it
        for task in [reaper, *listeners, *floor.tasks]:
            task.cancel()
        await asyncio.gather(reaper, *listeners, *floor.tasks, return_exceptions=True)
        await asyncio.gather(*(q.close() for _, q in registered), return_exceptions=True)
        print("done " + json.dumps({"pods": floor.pods}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--config-url", required=True)
    parser.add_argument("--token", required=True, help="a PAT the Actions service accepts")
    parser.add_argument("--sets", type=int, required=True, help="scale sets to register")
    parser.add_argument("--prefix", default="fleet-", help="scale set names are PREFIX0, PREFIX1, ...")
    parser.add_argument("--namespace", default="default", help="where runner Pods go")
    parser.add_argument("--image", default="ghcr.io/actions/actions-runner:2.330.0")
    parser.add_argument("--max-runners", type=int, default=10, help="capacity announced in each poll")
    parser.add_argument("--actions-rate", type=float, default=1000.0, help="Actions calls per second")
    asyncio.run(main(parser.parse_args()))
