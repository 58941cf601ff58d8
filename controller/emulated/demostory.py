"""The story ``arcsm demo`` plays against the emulated world, one step at a time.

The seed's story (arc-controller-spec §4.5, §4.6): a scale set whose runner image the service refuses
(the runner exits 7) goes Outdated and parks at zero without churn; a late listener patch is re-pinned
instead of rebuilding anything; fixing the image recovers it through Pending to Running; then jobs are
queued so runners come, run them and go.

Every step waits on what the controller was seen to do — its journal (read through
``store.readonly.ReadOnlyJournal``, as ``arcsm history`` does), the cluster, or the fake service — with a
deadline (``controller.emulated.waiting``). A step that does not happen in time raises ``StepTimedOut`` naming
it; a check that fails raises ``StoryFailed``. Nothing here sleeps to fake progress: the short pauses between
two looks at the state are the polling interval of those waits. The story writes to the cluster through the
executor's adapter (``controller.executor.kubewriting.Kube``), so its merge patches are sent as the
controller's are.

The one other pause is the pace (``Pace``), for a person watching: before each thing the story does (create
the scale set, patch the parked runner set, fix the image, queue jobs) it waits that long on the event
loop's timer, so each one and what the controller makes of it shows on the timeline page before the next.
The controller's own reactions are never held back, and no step's deadline counts the pause.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kubernetes_asyncio import client

from controller.emulated import waiting
from controller.executor.errors import KubeError
from controller.executor.kubewriting import Kube
from sim.github.records import JobState
from sim.world import World
from statemachines import decisions, kinds
from statemachines.effects import ObjectRef
from store.errors import JournalError
from store.readonly import ReadOnlyJournal
from store.records import Record, RecordType

NAMESPACE = "default"
CONTROLLER_NAMESPACE = "arc-systems"
NAME = "arc"
SECRET = "github-config"
# The token the demo's config Secret holds; the fake accepts it (it is no credential anywhere else).
DEMO_PAT = "ghp_arcsmDemoToken000000000000000000001"
MINIMUM_VERSION = "2.330.0"
OLD_IMAGE = "ghcr.io/actions/actions-runner:2.329.0"
NEW_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"
JOBS = 3
ARS, ERS, ER, AL = kinds.ARS, kinds.ERS, kinds.ER, kinds.AL
POLL = 0.05
# The story's own requests: a handful per look at the state, on loopback.
QPS, BURST, REQUEST_TIMEOUT = 1000.0, 100, 30.0

T = TypeVar("T")

StepTimedOut = waiting.TimedOut


class DemoFailed(Exception):
    """The demo could not start or do a step (the HTTP address is taken, a step of the in-cluster story
    did not happen in time); the message says what happened, whole."""


class StoryFailed(Exception):
    """The controller did something the story says it must not (churn while parked, for one)."""


async def until(predicate: Callable[[], Awaitable[T | None]], *, step: str, timeout: float) -> T:
    """Look at the state until ``predicate`` returns something truthy; ``StepTimedOut`` after ``timeout``."""
    return await waiting.until(predicate, what=f"the step {step!r}", timeout=timeout, interval=POLL)


@dataclass(frozen=True)
class Pace:
    """How long a story waits before each thing it does (0: not at all)."""

    seconds: float = 0.0

    async def pause(self) -> None:
        if self.seconds > 0:
            await asyncio.sleep(self.seconds)


@dataclass(frozen=True)
class Taken:
    """A transition the controller journaled, with the seq of the decision record that holds it."""

    seq: int
    transition: decisions.Transition

    @property
    def kind(self) -> str:
        return self.transition.subject.kind

    @property
    def name(self) -> str:
        return self.transition.subject.name


@dataclass
class JournalWatch:
    """The controller's journal as the story reads it: transitions and observed runners, read
    incrementally through one read-only connection beside the controller that writes it."""

    path: Path
    seq: int = 0
    transitions: list[Taken] = field(default_factory=list)
    runners_added: list[tuple[int, str]] = field(default_factory=list)  # (seq, name) of each new runner
    _reader: ReadOnlyJournal | None = None

    async def refresh(self) -> None:
        if self._reader is None:
            if not self.path.exists():
                return
            self._reader = await ReadOnlyJournal.open(self.path)
        try:
            records = await self._reader.read(
                after=self.seq, namespace=NAMESPACE, types={RecordType.DECISION, RecordType.OBSERVED}
            )
        except JournalError:
            # The controller creates the tables when it opens the journal; until then there is nothing.
            if self.seq == 0:
                return
            raise
        for record in records:
            self._take(record)

    def _take(self, record: Record) -> None:
        self.seq = max(self.seq, record.seq or 0)
        if record.type == RecordType.DECISION:
            subject = ObjectRef(record.kind, record.namespace, record.name)
            self.transitions.extend(
                Taken(record.seq or 0, t) for t in decisions.transitions_from_json(record.body, subject)
            )
        elif record.kind == ER and record.body.get("event") == "ADDED":
            self.runners_added.append((record.seq or 0, record.name))

    def scale_set_transitions(self, after: int = 0) -> list[Taken]:
        return [t for t in self.transitions if t.kind == ARS and t.name == NAME and t.seq > after]

    def phase_history(self) -> list[str]:
        """The scale set's phases in order, a phase re-affirmed in place counted once."""
        return [
            phase for phase, _ in itertools.groupby(t.transition.to for t in self.scale_set_transitions())
        ]

    async def close(self) -> None:
        if self._reader is not None:
            await self._reader.close()
            self._reader = None


@dataclass
class Story:
    world: World
    kube: client.ApiClient
    journal: JournalWatch
    say: Callable[[str], None]
    timeout: float = 60.0
    pace: Pace = field(default_factory=Pace)
    objects: Kube = field(init=False)

    def __post_init__(self) -> None:
        self.objects = Kube(self.kube, qps=QPS, burst=BURST, timeout=REQUEST_TIMEOUT)

    # -- reading and writing the cluster ------------------------------------------------------------------

    async def get(self, kind: str, name: str = NAME) -> dict[str, Any] | None:
        try:
            return await self.objects.get(kind, NAMESPACE, name)
        except KubeError as exc:
            if exc.code == 404:
                return None
            raise

    async def items(self, kind: str, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
        arc = kinds.BY_KIND[kind]
        listed = await client.CustomObjectsApi(self.kube).list_namespaced_custom_object(
            arc.group, arc.version, namespace, arc.plural
        )
        return list(listed["items"])

    async def patch(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.objects.merge_patch(ObjectRef(kind, NAMESPACE, NAME), body)

    async def transition(self, dest: str, *, after: int, kind: str = ARS) -> Taken | None:
        await self.journal.refresh()
        return next(
            (
                t
                for t in self.journal.transitions
                if t.kind == kind
                and t.transition.to == dest
                and t.seq > after
                and (kind != ARS or t.name == NAME)
            ),
            None,
        )

    # -- the story ----------------------------------------------------------------------------------------

    async def play(self) -> None:
        await self.pace.pause()
        await self.create_scale_set()
        running = await until(
            lambda: self.transition("Running", after=0), step="the scale set Running", timeout=self.timeout
        )
        self.say(f"scale set {NAMESPACE}/{NAME} is Running: its listener is up ({running.transition.reason})")
        rejected = await until(
            lambda: self.transition("Outdated", after=0, kind=ER),
            step="a runner refused by the service (exit 7)",
            timeout=self.timeout,
        )
        self.say(f"runner {rejected.name} refused by the service: {rejected.transition.reason}")
        outdated = await until(
            lambda: self.transition("Outdated", after=running.seq),
            step="the scale set Outdated",
            timeout=self.timeout,
        )
        why = f"{outdated.transition.trigger}: {outdated.transition.reason}"
        self.say(f"scale set {NAMESPACE}/{NAME} is Outdated ({why})")
        created = await until(self.parked, step="the scale set parked at zero", timeout=self.timeout)
        self.say(
            f"parked: runner set pinned at 0 replicas, no listener, {created} runner(s) created so far, "
            "none idle"
        )
        parked_at = self.journal.seq
        await self.pace.pause()
        await self.late_listener_patch()
        await self.pace.pause()
        await self.fix_image(parked_at)
        await self.pace.pause()
        await self.run_jobs()
        history = self.journal.phase_history()
        self.say(f"phase history of {NAMESPACE}/{NAME}: {' → '.join(history)}")

    async def create_scale_set(self) -> None:
        secret = {"metadata": {"name": SECRET}, "stringData": {"github_token": DEMO_PAT}}
        await self.objects.create("Secret", NAMESPACE, secret)
        body = {
            "metadata": {"name": NAME},
            "spec": {
                "githubConfigUrl": self.world.github_url + "/demo-org",
                "githubConfigSecret": SECRET,
                "minRunners": 1,
                "maxRunners": JOBS,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "runner", "image": OLD_IMAGE}],
                    }
                },
            },
        }
        await self.objects.create(ARS, NAMESPACE, body)
        self.say(
            f"created Secret {NAMESPACE}/{SECRET} and AutoscalingRunnerSet {NAMESPACE}/{NAME} "
            f"(minRunners 1, image {OLD_IMAGE}; the service refuses runners older than {MINIMUM_VERSION})"
        )

    async def parked(self) -> int | None:
        """The number of runners ever created, once the scale set is Outdated with its runner set pinned at
        0/0, no listener and no runner left without a job."""
        ars, ers = await self.get(ARS), await self.get(ERS)
        if ars is None or ers is None or (ars.get("status") or {}).get("phase") != "Outdated":
            return None
        if (ers["spec"].get("replicas"), ers["spec"].get("patchID")) != (0, 0):
            return None
        if await self.items(AL, CONTROLLER_NAMESPACE):
            return None
        if any(not (r.get("status") or {}).get("jobId") for r in await self.items(ER)):
            return None
        await self.journal.refresh()
        return len(self.journal.runners_added) or None

    async def late_listener_patch(self) -> None:
        """A listener patch that lands after the park (§4.5-B) is put back to 0/0 by the next pass, and no
        runner is created for it."""
        mark = self.journal.seq
        before = len(self.journal.runners_added)
        await self.patch(ERS, {"spec": {"replicas": 2, "patchID": 7}})
        self.say("a late listener patch asks the parked runner set for 2 runners")

        async def repinned() -> bool:
            ers = await self.get(ERS)
            if ers is None or (ers["spec"].get("replicas"), ers["spec"].get("patchID")) != (0, 0):
                return False
            await self.journal.refresh()
            return any(
                t.transition.trigger == "parked" for t in self.journal.scale_set_transitions(after=mark)
            )

        await until(repinned, step="the late patch re-pinned to 0/0", timeout=self.timeout)
        if len(self.journal.runners_added) != before:
            raise StoryFailed("a runner was created for the late patch while the scale set was parked")
        self.say("re-pinned to 0/0 without creating a runner: no churn while parked")

    async def fix_image(self, parked_at: int) -> None:
        fixed = await self.patch(
            ARS, {"spec": {"template": {"spec": {"containers": [{"name": "runner", "image": NEW_IMAGE}]}}}}
        )
        mark = self.journal.seq
        self.say(f"fixed the runner image: {NEW_IMAGE} (generation {fixed['metadata']['generation']})")
        pending = await until(
            lambda: self.transition("Pending", after=mark),
            step="the scale set Pending after the fix",
            timeout=self.timeout,
        )
        why = f"{pending.transition.trigger}: {pending.transition.reason}"
        self.say(f"scale set {NAMESPACE}/{NAME} is Pending ({why})")
        await until(
            lambda: self.transition("Running", after=pending.seq),
            step="the scale set Running again",
            timeout=self.timeout,
        )
        runner = await until(self.runner_online, step="a runner registered and idle", timeout=self.timeout)
        churned = [name for seq, name in self.journal.runners_added if parked_at < seq <= mark]
        if churned:
            raise StoryFailed(f"runners were created while the scale set was parked: {', '.join(churned)}")
        self.say(f"scale set {NAMESPACE}/{NAME} recovered: Running, runner {runner} registered and idle")

    async def runner_online(self) -> str | None:
        runners = await self.items(ER)
        online = {a.name for a in self.world.github.state.agents.values() if a.online}
        return next(
            (
                r["metadata"]["name"]
                for r in runners
                if (r.get("status") or {}).get("phase") == "Running" and r["metadata"]["name"] in online
            ),
            None,
        )

    async def run_jobs(self) -> None:
        scale_set = self.world.github.scale_set(NAME)
        if scale_set is None:
            raise StoryFailed(f"the service has no scale set {NAME!r} after the recovery")
        jobs = self.world.github.queue_jobs(scale_set.id, count=JOBS)
        ids = {job.runner_request_id for job in jobs}
        self.say(f"queued {JOBS} jobs on the service")

        async def completed() -> list[str] | None:
            state = self.world.github.state.jobs
            done = [state[i] for i in ids if state[i].state == JobState.COMPLETED]
            return sorted(j.runner_name for j in done) if len(done) == len(ids) else None

        runners = await until(completed, step=f"the {JOBS} jobs completed", timeout=self.timeout)
        self.say(f"{JOBS} jobs ran on runners {', '.join(runners)}; each exited 0 when its job was done")

        async def gone() -> bool:
            names = {r["metadata"]["name"] for r in await self.items(ER)}
            return not names & set(runners) and bool(await self.runner_online())

        await until(gone, step="the runners that ran the jobs removed", timeout=self.timeout)
        self.say("the runners that ran the jobs are gone; one idle runner is kept (minRunners 1)")
