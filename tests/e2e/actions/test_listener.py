"""The listener end to end in the emulated world (spec §5.3–§5.5): scaling an EphemeralRunnerSet from the
fake GitHub's message queue, riding out transient faults, and logs free of secrets.

Inputs: a ``World`` with a fake GitHub (200 ms long polls), an EphemeralRunnerSet in namespace
``arc-runners`` (replicas 0, patchID 0), a scale set in the fake, and a listener config as upstream's AL
controller writes it (PAT credentials). The listener runs in process (``run_listener``) with fast
backoffs; it talks real HTTP to the fake and patches the ERS through kubernetes_asyncio. No
EphemeralRunnerSet controller exists yet, so ``RunnerSetModel`` plays its part of §2.2 step 9.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from urllib.parse import parse_qs

import httpx
import pytest
from kubernetes_asyncio import client

from actions import listenerconfig
from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import PersonalAccessToken
from actions.kubepatching import JSON_PATCH, SESSION_ANNOTATION
from actions.listener import ListenerSettings, run_listener
from actions.listenerconfig import ListenerConfig
from actions.listenermetrics import ListenerMetrics
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from actions.retrying import RetryPolicy
from sim.faults import Fault
from sim.github import GitHubFake, GitHubFault, GitHubSettings
from sim.github.records import JobState
from sim.world import World
from tests.e2e.actions.runnersets import (
    ERS,
    GROUP,
    NS,
    PAT,
    SCALE_SET,
    VERSION,
    DroppingTransport,
    RunnerSetModel,
    config_json,
    create_namespace,
    create_runner_set,
    read_runner_set,
)
from tests.helpers import eventually

MIN, MAX = 1, 3
FAST = ListenerSettings(backoff_initial=0.01, backoff_max=0.05, session_conflict_wait=0.05, close_timeout=2)


@pytest.fixture
async def world() -> AsyncIterator[World]:
    fake = GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2, job_seconds=0.2), seed=1)
    async with World(seed=1, github=fake) as w:
        w.github.allow_pat(PAT)
        yield w


def actions_client(world: World, transport: DroppingTransport | None = None) -> ActionsClient:
    return ActionsClient(
        config_url=world.github.config_url("my-org"),
        credentials=PersonalAccessToken(token=SecretStr(PAT)),
        settings=ClientSettings(
            retry=RetryPolicy(min_wait=0.01, max_wait=0.05), rate_limit=RateLimit(max_rate=1000)
        ),
        transport=transport,
    )


@dataclass
class Setup:
    config: ListenerConfig
    scale_set_id: int
    resource_version: str
    admin: ActionsClient


@pytest.fixture
async def setup(world: World, kube: client.ApiClient) -> AsyncIterator[Setup]:
    async with actions_client(world) as admin:
        scale_set = await admin.create_runner_scale_set(RunnerScaleSet(name=SCALE_SET, runner_group_id=1))
        await create_namespace(kube)
        config_url = world.github.config_url("my-org")
        ers = await create_runner_set(kube, config_url, scale_set.id)
        raw = config_json(config_url, scale_set.id, min_runners=MIN, max_runners=MAX)
        yield Setup(
            config=listenerconfig.from_mapping(raw),
            scale_set_id=scale_set.id,
            resource_version=ers["metadata"]["resourceVersion"],
            admin=admin,
        )


@dataclass
class Running:
    task: asyncio.Task[int]
    stop: asyncio.Event
    transport: DroppingTransport
    metrics: ListenerMetrics

    async def finish(self) -> int:
        self.stop.set()
        return await asyncio.wait_for(self.task, 5)


async def start_listener(
    world: World, setup: Setup, kube: client.ApiClient, settings: ListenerSettings = FAST
) -> Running:
    transport = DroppingTransport()
    metrics = ListenerMetrics(scale_set_labels={"name": SCALE_SET, "namespace": NS, "organization": "my-org"})
    stop = asyncio.Event()
    listener_client = actions_client(world, transport)

    async def run() -> int:
        async with listener_client:
            return await run_listener(
                setup.config,
                kube=kube,
                stop=stop,
                client=listener_client,
                metrics=metrics,
                owner_name="listener-pod",
                settings=settings,
            )

    return Running(asyncio.create_task(run(), name="listener"), stop, transport, metrics)


# -- scaling ---------------------------------------------------------------------------------------------


async def test_five_jobs_scale_the_runner_set_within_its_bounds(
    world: World, kube: client.ApiClient, setup: Setup
) -> None:
    fake = world.github
    model = RunnerSetModel(kube, fake, setup.admin, setup.scale_set_id, fake.config_url("my-org"))
    observer = asyncio.create_task(model.observe(setup.resource_version), name="ers observer")
    listener = await start_listener(world, setup, kube)
    try:
        await eventually(lambda: model.trace, what="the first patch")
        assert model.trace[0] == (0, MIN)  # the first patch id is 0, at minRunners
        await eventually(lambda: len(model.live()) == MIN, what="the minimum runner")

        jobs = fake.queue_jobs(setup.scale_set_id, 5)

        async def settled() -> bool:
            """The listener has acquired what it may, every assigned job runs, and the ERS asks for
            min(minRunners + assigned, maxRunners) runners."""
            stats = fake.statistics(setup.scale_set_id)
            if stats.available and stats.assigned < MAX:
                return False
            _, replicas = await read_runner_set(kube)
            return stats.running == stats.assigned and replicas == min(MIN + stats.assigned, MAX)

        await eventually(settled, what="three jobs running", timeout=10)
        assert fake.statistics(setup.scale_set_id).assigned == MAX  # capped by X-ScaleSetMaxCapacity
        assert (await read_runner_set(kube))[1] == MAX
        for _ in jobs:
            running = next(j for j in fake.state.jobs.values() if j.state == JobState.RUNNING)
            fake.complete_job(running.runner_request_id)
            await eventually(settled, what=f"the ERS after job {running.runner_request_id}", timeout=10)
        assert all(j.state == JobState.COMPLETED for j in jobs)
        await eventually(lambda: model.trace[-1] == (0, MIN), what="idle at the minimum (patch id 0)")
        await eventually(lambda: len(model.live()) == MIN, what="one idle runner left")
    finally:
        code = await listener.finish()
        observer.cancel()
        await asyncio.gather(observer, return_exceptions=True)
        await model.close()
    assert code == 0

    trace = model.trace
    print("ERS (patchID, replicas) trace:", trace)
    assert all(MIN <= replicas <= MAX for _, replicas in trace)
    assert max(replicas for _, replicas in trace) == MAX
    positive = [patch_id for patch_id, _ in trace if patch_id > 0]
    assert positive == sorted(set(positive)), "positive patch ids increase"
    assert all(replicas == MIN for patch_id, replicas in trace if patch_id == 0)
    assert model.scale_downs == [0] * len(model.scale_downs), "only patch id 0 scales down"

    # Every started job was recorded on its EphemeralRunner's status (a JSON patch of /status that tests
    # the runner id first).
    objects = client.CustomObjectsApi(kube)
    for job in jobs:
        runner = await objects.get_namespaced_custom_object(
            GROUP, VERSION, NS, "ephemeralrunners", job.runner_name
        )
        status = runner["status"]
        assert status["jobRequestId"] == job.runner_request_id
        assert status["jobRunnerId"] == status["runnerId"] == fake.state.jobs[job.runner_request_id].runner_id
        assert status["jobRepositoryName"] == f"{job.owner}/{job.repository}"
        assert status["jobWorkflowRef"] == job.workflow_ref
        assert status["workflowRunId"] == job.workflow_run_id
    patches = [r for r in world.requests if r.method == "PATCH" and "/ephemeralrunnersets/" in r.path]
    assert patches and {r.content_type for r in patches} == {"application/merge-patch+json"}
    recorded = [
        r
        for r in world.requests
        if r.method == "PATCH" and "/ephemeralrunners/" in r.path and r.content_type == JSON_PATCH
    ]
    assert [r.status for r in recorded] == [200] * len(jobs)

    metrics = listener.metrics
    assert metrics.sample("gha_max_runners", {**_scale_set_labels()}) == MAX
    assert metrics.sample("gha_min_runners", {**_scale_set_labels()}) == MIN
    assert metrics.sample("gha_desired_runners", {**_scale_set_labels()}) == MIN
    started = [
        s.value
        for m in metrics.registry.collect()
        if m.name == "gha_started_jobs"
        for s in m.samples
        if s.name == "gha_started_jobs_total"
    ]
    assert sum(started) == 5


def _scale_set_labels() -> dict[str, str]:
    return {"name": SCALE_SET, "namespace": NS, "enterprise": "", "organization": "my-org", "repository": ""}


# -- resilience ------------------------------------------------------------------------------------------


def _windows(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(len(items) - size + 1)]


def message_polls(fake: GitHubFake) -> list[tuple[str, int, int | None]]:
    """(session id, lastMessageId, status) of each GetMessage, in order."""
    polls = []
    for call in fake.calls:
        if call.method == "GET" and call.path.endswith("/messages"):
            session = call.path.rsplit("/", 2)[-2]
            last = int(parse_qs(call.query).get("lastMessageId", ["0"])[0])
            polls.append((session, last, call.status))
    return polls


def last_message_ids_hold(fake: GitHubFake) -> bool:
    """Each GetMessage carries the id of the last message acknowledged in its session (0 before any)."""
    acked: dict[str, int] = {}
    for call in fake.calls:
        parts = call.path.rstrip("/").split("/")
        if call.method == "DELETE" and len(parts) > 2 and parts[-2] == "messages" and call.status == 204:
            acked[parts[-3]] = int(parts[-1])
        elif call.method == "GET" and call.path.endswith("/messages"):
            session = parts[-2]
            last = int(parse_qs(call.query).get("lastMessageId", ["0"])[0])
            assert last == acked.get(session, 0), f"GetMessage in {session} with lastMessageId {last}"
    return True


async def test_transient_faults_do_not_stop_the_listener(
    world: World, kube: client.ApiClient, setup: Setup
) -> None:
    fake = world.github
    listener = await start_listener(world, setup, kube)
    scale_set_id = setup.scale_set_id

    async def a_job_goes_through() -> None:
        """A job queued now is acquired by the listener (then finished, to leave room under maxRunners)."""
        (job,) = fake.queue_jobs(scale_set_id, 1)
        await eventually(lambda: job.state == JobState.ASSIGNED, what="the job acquired", timeout=10)
        fake.complete_job(job.runner_request_id)

    await eventually(lambda: fake.state.session_of(scale_set_id) is not None, what="a session")
    await a_job_goes_through()

    # 401 on the queue: the session is refreshed and the next poll keeps lastMessageId.
    fake.expire_message_queue_tokens(scale_set_id)
    await eventually(lambda: fake.calls_to("PATCH", "/sessions/"), what="a session refresh")
    refresh_at = fake.calls.index(fake.calls_to("PATCH", "/sessions/")[0])
    await eventually(
        lambda: any(c.path.endswith("/messages") and c.status for c in fake.calls[refresh_at:]),
        what="a poll after the refresh",
    )
    acked_before = max(
        int(c.path.rsplit("/", 1)[1])
        for c in fake.calls[:refresh_at]
        if c.method == "DELETE" and "/messages/" in c.path
    )
    after = next(c for c in fake.calls[refresh_at:] if c.path.endswith("/messages"))
    assert parse_qs(after.query)["lastMessageId"] == [str(acked_before)]

    # A 5xx burst that outlasts the client's own four retries, twice.
    burst = fake.inject(GitHubFault(method="GET", path=r"/messages$", status=503, times=10))
    await eventually(lambda: burst.hits == 10, what="the 5xx burst", timeout=10)
    await a_job_goes_through()

    # Long polls dropped by the network, more than the client retries.
    listener.transport.drop = 7
    await eventually(lambda: listener.transport.dropped == 7, what="dropped polls", timeout=10)
    await a_job_goes_through()

    # The Kubernetes API server fails the ERS patch: three 500s, then a conflict.
    def ers_patches() -> list[int]:
        return [r.status for r in world.requests if r.method == "PATCH" and "ephemeralrunnersets" in r.path]

    world.inject(Fault(verb="patch", path=f"/ephemeralrunnersets/{ERS}$", code=500, times=3))
    await eventually(lambda: [500, 500, 500, 200] in _windows(ers_patches(), 4), what="ERS patch retries")
    world.inject(Fault(verb="patch", path=f"/ephemeralrunnersets/{ERS}$", code=409, times=1))
    await eventually(lambda: [409, 200] in _windows(ers_patches(), 2), what="an ERS patch after a conflict")

    assert not listener.task.done()
    assert last_message_ids_hold(fake)

    # The session is lost (the service forgot it): a new one is opened, starting over at message 0.
    first_session = fake.state.session_of(scale_set_id)
    assert first_session is not None
    fake.drop_session(scale_set_id)
    await eventually(
        lambda: (s := fake.state.session_of(scale_set_id)) is not None and s.id != first_session.id,
        what="a new session",
    )
    await a_job_goes_through()
    assert len(fake.calls_to("POST", "/sessions")) == 2

    assert await listener.finish() == 0
    assert fake.state.session_of(scale_set_id) is None  # deleted on the way out
    assert last_message_ids_hold(fake)


async def test_bad_credentials_end_the_listener_with_one_line(
    world: World, kube: client.ApiClient, setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "ghp_someoneElsesToken000000000000001"  # the fake allows only PAT
    config = replace(setup.config, credentials=PersonalAccessToken(token=SecretStr(wrong)))
    caplog.set_level(logging.INFO)
    code = await asyncio.wait_for(
        run_listener(config, kube=kube, stop=asyncio.Event(), owner_name="listener-pod", settings=FAST), 10
    )
    assert code == 1
    (line,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "\n" not in line.getMessage() and "401" in line.getMessage()
    assert line.exc_info is None and wrong not in caplog.text


async def test_a_session_delete_left_unanswered_is_logged_with_its_reason(
    world: World, kube: client.ApiClient, setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    """Stopping while the service does not answer the session's DELETE says so in its one line."""
    listener = await start_listener(world, setup, kube, replace(FAST, close_timeout=0.2))
    # The service records the session before the listener has read the answer; its first poll for
    # messages comes after, once the session is the listener's to delete.
    await eventually(lambda: world.github.calls_to("GET", "/messages"), what="the session's first poll")
    # The DELETE is held unanswered until the listener has given up on it: no race with a latency.
    unanswered = world.github.inject(GitHubFault(method="DELETE", path="/sessions/", hold=True))
    caplog.set_level(logging.WARNING, logger="actions.listener")
    try:
        assert await listener.finish() == 0
    finally:
        unanswered.release()
    (line,) = [r.getMessage() for r in caplog.records if "delete message session" in r.getMessage()]
    assert line.endswith(": could not delete message session: no answer within 0.2 s")


async def test_a_missing_runner_set_ends_the_listener(
    world: World, kube: client.ApiClient, setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    await client.CustomObjectsApi(kube).delete_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunnersets", ERS
    )
    listener = await start_listener(world, setup, kube)
    assert await asyncio.wait_for(listener.task, 10) == 1
    assert any("404" in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)
    assert world.github.state.session_of(setup.scale_set_id) is None


async def test_a_session_held_by_another_listener_is_waited_for(
    world: World, kube: client.ApiClient, setup: Setup
) -> None:
    fake = world.github
    held = await setup.admin.create_message_session(setup.scale_set_id, "old-listener-pod")
    listener = await start_listener(world, setup, kube)
    await eventually(lambda: len(fake.calls_to("POST", "/sessions")) >= 3, what="409s on the session")
    assert [c.status for c in fake.calls_to("POST", "/sessions")][:3] == [200, 409, 409]
    await setup.admin.delete_message_session(setup.scale_set_id, held.session_id)
    session = await eventually(
        lambda: (
            (s := fake.state.session_of(setup.scale_set_id)) is not None and s.owner == "listener-pod" and s
        ),
        what="the listener's session",
    )
    assert session.owner == "listener-pod"
    assert await listener.finish() == 0


async def recorded(kube: client.ApiClient, session_id: str) -> bool:
    """Whether the runner set names ``session_id`` as its listener's session."""
    ers = await client.CustomObjectsApi(kube).get_namespaced_custom_object(
        GROUP, "v1alpha1", NS, "ephemeralrunnersets", ERS
    )
    return (ers["metadata"].get("annotations") or {}).get(SESSION_ANNOTATION) == session_id


async def test_a_session_left_behind_in_an_outage_is_reclaimed_by_the_next_listener(
    world: World, kube: client.ApiClient, setup: Setup
) -> None:
    """A listener stopped while the service is out leaves its session, which the service keeps until it
    has gone unpolled for minutes; its replacement deletes it and scales at once instead of meeting a
    409 every ``session_conflict_wait`` (upstream's 30 s, kept here) until the service lets it go."""
    fake = world.github
    first = await start_listener(world, setup, kube)
    stale = await eventually(lambda: fake.state.session_of(setup.scale_set_id), what="the first session")
    await eventually(lambda: recorded(kube, stale.id), what="the session recorded on the runner set")
    fake.inject(GitHubFault(path="/tenant/", status=503, times=None))
    assert await first.finish() == 0  # deleted during the outage
    assert [c.status for c in fake.calls_to("DELETE", f"/sessions/{stale.id}")][-1] == 503
    assert fake.state.session_of(setup.scale_set_id) is stale  # left behind
    fake.clear_faults()
    posts_before = len(fake.calls_to("POST", "/sessions"))

    second = await start_listener(world, setup, kube, replace(FAST, session_conflict_wait=30.0))
    session = await eventually(
        lambda: (s := fake.state.session_of(setup.scale_set_id)) is not None and s.id != stale.id and s,
        timeout=10,
        what="the replacement's session",
    )
    posts = [c.status for c in fake.calls_to("POST", "/sessions")][posts_before:]
    assert posts == [409, 200], posts  # one conflict, then the stale session is gone
    assert [c.status for c in fake.calls_to("DELETE", f"/sessions/{stale.id}")][-1] == 204
    assert session.owner == "listener-pod"

    fake.queue_jobs(setup.scale_set_id, 1)

    async def scaled() -> bool:
        _, replicas = await read_runner_set(kube)
        return replicas == MIN + 1

    await eventually(scaled, timeout=10, what="the replacement scaling the runner set")
    assert await second.finish() == 0


async def test_a_listener_whose_session_was_reclaimed_does_not_take_it_back(
    world: World, kube: client.ApiClient, setup: Setup
) -> None:
    """Two listeners of one runner set (an old pod still running beside its replacement): the new one
    reclaims the old one's session; the old one, which had a session already, only waits, and gives up
    after its bounded conflicts, so the two never take the session from each other in turn."""
    fake = world.github
    old = await start_listener(world, setup, kube)
    first = await eventually(lambda: fake.state.session_of(setup.scale_set_id), what="the old session")
    await eventually(lambda: recorded(kube, first.id), what="the old session recorded")
    new = await start_listener(world, setup, kube)
    second = await eventually(
        lambda: (s := fake.state.session_of(setup.scale_set_id)) is not None and s.id != first.id and s,
        what="the new listener's session",
    )
    assert await asyncio.wait_for(old.task, 10) == 1  # its conflicts spent
    assert fake.state.session_of(setup.scale_set_id) is second
    assert not fake.calls_to("DELETE", f"/sessions/{second.id}")
    assert await new.finish() == 0


async def test_metrics_are_served_on_metrics_addr(
    world: World, kube: client.ApiClient, setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="actions.listenermetrics")
    config = replace(setup.config, metrics_addr="127.0.0.1:0", metrics_endpoint="/metrics")
    stop = asyncio.Event()
    task = asyncio.create_task(run_listener(config, kube=kube, stop=stop, settings=FAST))
    try:
        line = await eventually(
            lambda: next(
                (r.getMessage() for r in caplog.records if "serving metrics on" in r.getMessage()), None
            ),
            what="the metrics endpoint",
        )
        url = "http://" + line.rsplit(" ", 1)[1]
        async with httpx.AsyncClient() as http:

            async def scraped() -> str | None:
                text = (await http.get(url)).text
                return text if "gha_desired_runners{" in text else None

            text = await eventually(scraped, what="the desired runners on the endpoint")
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 5) == 0
    assert 'gha_max_runners{enterprise="",name="arc-runner-set",namespace="arc-runners"' in text
    assert "gha_desired_runners{" in text


# -- secrets ---------------------------------------------------------------------------------------------


async def test_no_token_or_jit_config_in_any_log_line(
    world: World, kube: client.ApiClient, setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake = world.github
    model = RunnerSetModel(kube, fake, setup.admin, setup.scale_set_id, fake.config_url("my-org"))
    observer = asyncio.create_task(model.observe(setup.resource_version))
    listener = await start_listener(world, setup, kube)
    try:
        await eventually(lambda: len(model.live()) == MIN, what="the minimum runner")
        fake.queue_jobs(setup.scale_set_id, 2)
        fake.expire_message_queue_tokens(setup.scale_set_id)
        fake.expire_admin_tokens()
        await eventually(lambda: sum(1 for r in model.runners.values() if r.task.done()) >= 2, timeout=10)
        for job in list(fake.state.jobs.values()):
            fake.complete_job(job.runner_request_id)
        await eventually(lambda: len(fake.calls_to("PATCH", "/sessions/")) >= 1)
    finally:
        assert await listener.finish() == 0
        observer.cancel()
        await asyncio.gather(observer, return_exceptions=True)
        await model.close()

    secrets = {PAT, *listener.transport.seen, *model.jit_configs}
    assert len(listener.transport.seen) >= 3  # the PAT, a registration token, admin and queue tokens
    assert len(model.jit_configs) >= 2
    lines = [record.getMessage() for record in caplog.records]
    lines += [caplog.text]
    leaks = [(secret[:6], line) for secret in secrets for line in lines if secret in line]
    assert not leaks
