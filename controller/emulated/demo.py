"""``arcsm demo``: the emulated world, the controller, the listener and the HTTP API in one process, playing
the seed's story while the timeline page shows it; or, with ``--in-cluster``, arcsm installed with its
Helm chart on the emulated cluster and run there (``controller.emulated.clusterdemo``).

    arcsm demo [--journal PATH] [--http HOST:PORT] [--http-max-streams N] [...] [--once]
               [--pace SECONDS] [--step-timeout SECONDS]
    arcsm demo --in-cluster [--http HOST:PORT] [--once] [--pace SECONDS] [--step-timeout SECONDS]

It starts ``sim.world.World`` with the fake GitHub (refusing runners older than
``demostory.MINIMUM_VERSION``; its kubelet runs listener pods as arcsm's own listener, in process),
``controller.loop.running.run`` on a journal (in a temporary directory unless ``--journal`` names one) and the
HTTP API, then plays ``demostory.Story``: one line on stdout per step as it happens. Afterwards it keeps
running until SIGINT or SIGTERM, or ends at once with ``--once``. Exit status 0 when the story played, 1
when a step timed out or failed (the line says which), 2 for bad options. The HTTP API keeps to the
bounds of ``arcsm run``'s, set by the same ``--http-*`` flags (not with ``--in-cluster``: there the
chart's ``http`` values set them).

The story is paced for a person (``demostory.Pace``): before each thing it does it waits ``--pace`` seconds,
by default ``PACE`` when stdout is a terminal and none otherwise. Played at the controller's speed the story
is over within seconds of the timeline page being reachable, before anyone has opened it; whoever
runs the demo at a terminal is there to watch it, while a script, a test or CI that pipes its output wants
it over as soon as the controller has done it. The pace is no part of a step's ``--step-timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer
from kubernetes_asyncio import client

from api.addresses import parse_address
from api.limits import HttpLimits
from controller.commands.logformat import LEVELS, configure_logging
from controller.emulated import demostory
from controller.loop import declared, running
from controller.loop.kubeconfigs import Source
from controller.loop.settings import ControllerSettings, HttpSettings, QueueSettings
from kube.clients import api_client
from sim.github.fake import GitHubFake, GitHubSettings
from sim.world import World
from statemachines.snapshots import Settings as MachineSettings
from store.settings import JournalSettings
from watchers.settings import WatchSettings

PREFIX = "arcsm demo:"
LIMITS = HttpLimits()  # arcsm run's defaults, for the help
INTERRUPTED = 130  # the shell's status for a process ended by SIGINT
STOP_TIMEOUT = 30.0
PACE = 3.0  # seconds before each step of the story when stdout is a terminal (a person watches)


def say(line: str) -> None:
    print(f"{PREFIX} {line}", flush=True)


def refuse(line: str) -> None:
    """Why the demo could not go on: on stderr, where a refusal goes (``say`` tells the story)."""
    print(f"{PREFIX} {line}", file=sys.stderr, flush=True)


def demo(
    journal: Annotated[
        Path | None,
        typer.Option(
            "--journal",
            help="Keep the journal in this file (default: a temporary directory).",
            dir_okay=False,
        ),
    ] = None,
    http: Annotated[
        str,
        typer.Option("--http", help="Serve the timeline and the API on HOST:PORT; port 0 picks a free one."),
    ] = "127.0.0.1:8080",
    http_max_connections: Annotated[
        int | None,
        typer.Option(
            metavar="N", help=f"HTTP connections open at once, as arcsm run's ({LIMITS.max_connections})."
        ),
    ] = None,
    http_max_streams: Annotated[
        int | None,
        typer.Option(
            metavar="N", help=f"Journal event streams open at once, as arcsm run's ({LIMITS.max_streams})."
        ),
    ] = None,
    http_header_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS", help=f"Seconds for a request head, as arcsm run's ({LIMITS.header_timeout:g})."
        ),
    ] = None,
    http_idle_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help=f"Seconds a kept-alive connection may idle, as arcsm run's ({LIMITS.idle_timeout:g}).",
        ),
    ] = None,
    http_write_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help=f"Seconds a client that stopped reading is waited for, as arcsm run's "
            f"({LIMITS.write_timeout:g}).",
        ),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="End after the story instead of running on.")] = False,
    pace: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help=f"Wait this long before each step the story takes, to watch it on the timeline page "
            f"(default: {PACE:g} when stdout is a terminal, else 0; not counted in --step-timeout).",
        ),
    ] = None,
    step_timeout: Annotated[
        float, typer.Option(help="How long each step of the story may take before the demo gives up.")
    ] = 60.0,
    log_level: Annotated[
        str, typer.Option(help="Controller logs on stderr: debug, info, warn or error.")
    ] = "warn",
    in_cluster: Annotated[
        bool,
        typer.Option(
            "--in-cluster",
            help="Install arcsm with its Helm chart on the emulated cluster and run it there, as a real "
            "in-cluster process (the HTTP API on --http's port of its pod), then run a job on a scale set "
            "made as upstream's gha-runner-scale-set chart makes it. Needs the 'helm' extra and root.",
        ),
    ] = False,
) -> None:
    """Play the Outdated story in an emulated cluster: a runner image refused, the scale set parked in
    Outdated without churn, the image fixed and the scale set recovered; watch it on the timeline page.

    With --in-cluster: install arcsm with its Helm chart on the emulated cluster, run it there as a real
    in-cluster process, and run a job on a scale set installed as upstream's scale-set chart does."""
    try:
        host, port = parse_address(http)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--http") from None
    if step_timeout <= 0:
        raise typer.BadParameter("must be positive", param_hint="--step-timeout")
    if pace is not None and not (math.isfinite(pace) and pace >= 0):
        raise typer.BadParameter("must be 0 or more seconds", param_hint="--pace")
    if log_level not in LEVELS:
        raise typer.BadParameter(f"must be one of {', '.join(LEVELS)}", param_hint="--log-level")
    given = (
        http_max_connections,
        http_max_streams,
        http_header_timeout,
        http_idle_timeout,
        http_write_timeout,
    )
    if in_cluster and any(value is not None for value in given):
        raise typer.BadParameter(
            "set the chart's http values instead", param_hint="--http-* with --in-cluster"
        )
    try:
        limits = _limits(*given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--http-*") from None
    if in_cluster and journal is not None:
        raise typer.BadParameter(
            "the in-cluster controller keeps its journal on its pod's volume", param_hint="--journal"
        )
    if journal is not None and journal.exists():
        typer.echo(f"arcsm demo: {journal} already exists; name a new journal file or remove it", err=True)
        raise typer.Exit(2)
    configure_logging(log_level)
    paced = demostory.Pace(pace_for(pace, terminal=sys.stdout.isatty()))
    if in_cluster:
        code = asyncio.run(play_in_cluster(port=port, once=once, step_timeout=step_timeout, pace=paced))
    else:
        code = asyncio.run(
            play(
                journal=journal,
                host=host,
                port=port,
                once=once,
                step_timeout=step_timeout,
                limits=limits,
                pace=paced,
            )
        )
    raise typer.Exit(code)


def pace_for(given: float | None, *, terminal: bool) -> float:
    """The pause before each step: ``given``, else ``PACE`` when stdout is a ``terminal``, else none."""
    if given is not None:
        return given
    return PACE if terminal else 0.0


def _announce(pace: demostory.Pace) -> None:
    if pace.seconds > 0:
        say(
            f"the story waits {pace.seconds:g} s before each step, to watch it on the timeline page "
            "(--pace SECONDS to change it, 0 for none)"
        )


def _limits(
    max_connections: int | None,
    max_streams: int | None,
    header_timeout: float | None,
    idle_timeout: float | None,
    write_timeout: float | None,
) -> HttpLimits:
    """The HTTP API's bounds: those given, arcsm run's defaults for the rest."""
    return HttpLimits(
        max_connections=LIMITS.max_connections if max_connections is None else max_connections,
        max_streams=LIMITS.max_streams if max_streams is None else max_streams,
        header_timeout=LIMITS.header_timeout if header_timeout is None else header_timeout,
        idle_timeout=LIMITS.idle_timeout if idle_timeout is None else idle_timeout,
        write_timeout=LIMITS.write_timeout if write_timeout is None else write_timeout,
    )


async def play(
    *,
    journal: Path | None,
    host: str,
    port: int,
    once: bool,
    step_timeout: float,
    limits: HttpLimits | None = None,
    pace: demostory.Pace | None = None,
) -> int:
    """Run everything, play the story (at ``pace``), then wait for a signal (or not, with ``once``); the exit
    status."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    try:
        with tempfile.TemporaryDirectory(prefix="arcsm-demo-") as scratch:
            directory = Path(scratch)
            journal_path = journal if journal is not None else directory / "journal.db"
            try:
                running_demo = _running(
                    directory, journal_path, HttpSettings(host, port, limits or HttpLimits())
                )
                async with running_demo as (story, controller):
                    story.timeout = step_timeout
                    story.pace = pace or demostory.Pace()
                    _announce(story.pace)
                    code = await _until_first(story.play(), stopping, once=once, controller=controller)
            except demostory.DemoFailed as exc:
                refuse(str(exc))
                code = 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    say("stopped")
    return code


async def play_in_cluster(
    *, port: int, once: bool, step_timeout: float, pace: demostory.Pace | None = None
) -> int:
    """``--in-cluster``: ``clusterdemo``'s steps, then run on until a signal (or not, ``once``)."""
    from controller.emulated import clusterdemo
    from controller.installation import manifests

    try:
        manifests.helm()
    except manifests.RenderError as exc:
        refuse(str(exc))
        return 1
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    github = GitHubFake(host="127.0.0.1")
    try:
        async with clusterdemo.world(github) as world, api_client(world.configuration()) as kube:
            github.allow_pat(demostory.DEMO_PAT)
            say(f"emulated cluster at {world.url} (pods: {world.https_url}), fake GitHub {world.github_url}")
            story = clusterdemo.InClusterStory(world, kube, say, port=port)
            story.timeout = step_timeout
            story.pace = pace or demostory.Pace()
            _announce(story.pace)
            code = await _until_first(story.play(), stopping, once=once)
            await _uninstall(kube)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    say("stopped")
    return code


async def _uninstall(kube: client.ApiClient) -> None:
    """Stop the controller (its Deployment deleted: SIGTERM, then exit), then every pod, while the fake
    service still answers."""
    with contextlib.suppress(client.ApiException):
        await client.AppsV1Api(kube).delete_namespaced_deployment("arcsm", demostory.CONTROLLER_NAMESPACE)
    core = client.CoreV1Api(kube)

    async def controller_gone() -> bool:
        pods = await core.list_namespaced_pod(
            demostory.CONTROLLER_NAMESPACE, label_selector="app.kubernetes.io/name=arcsm"
        )
        return not pods.items

    try:
        await demostory.until(controller_gone, step="the controller stopped", timeout=STOP_TIMEOUT)
    except demostory.StepTimedOut as exc:
        refuse(str(exc))
    from controller.emulated import clusterdemo

    await _stop_pods(kube, namespaces=(clusterdemo.NAMESPACE, demostory.CONTROLLER_NAMESPACE))


def _failure(exc: Exception) -> str:
    """The line that says why the story did not end."""
    if isinstance(exc, demostory.StepTimedOut):
        return f"{exc}; the controller's log on stderr (--log-level info) says what it did"
    if isinstance(exc, demostory.StoryFailed):
        return f"the story failed: {exc}"
    if isinstance(exc, demostory.DemoFailed):
        return str(exc)
    # The cluster or the journal failed under the story: say so, in one line.
    return f"the story stopped on an error: {type(exc).__name__}: {exc}"


async def _until_first(
    play: Coroutine[Any, Any, None],
    stopping: asyncio.Event,
    *,
    once: bool,
    controller: asyncio.Task[int] | None = None,
) -> int:
    """Play the story unless interrupted or the controller (when it runs in this process) ends first;
    then, without ``once``, wait for the signal."""
    played = asyncio.create_task(play, name="demo story")
    interrupted = asyncio.create_task(stopping.wait(), name="demo signal")
    others = {interrupted} if controller is None else {interrupted, controller}
    try:
        await asyncio.wait({played, *others}, return_when=asyncio.FIRST_COMPLETED)
        if controller is not None and controller.done():
            refuse(f"the controller stopped unexpectedly: {_ended(controller)}")
            return 1
        if not played.done():
            say("interrupted before the story ended")
            return INTERRUPTED
        if (exc := played.exception()) is not None:
            refuse(_failure(exc) if isinstance(exc, Exception) else str(exc))
            return 1
        say("the story is over" + ("" if once else "; the demo runs on until interrupted (Ctrl-C)"))
        if not once:
            await asyncio.wait(others, return_when=asyncio.FIRST_COMPLETED)
            if controller is not None and controller.done():
                refuse(f"the controller stopped unexpectedly: {_ended(controller)}")
                return 1
        return 0
    finally:
        for task in (played, interrupted):
            task.cancel()
        await asyncio.gather(played, interrupted, return_exceptions=True)


def _ended(task: asyncio.Task[int]) -> str:
    if task.cancelled():
        return "cancelled"
    exc = task.exception()
    return f"exit status {task.result()}" if exc is None else str(exc) or type(exc).__name__


@contextlib.asynccontextmanager
async def _running(
    directory: Path, journal_path: Path, http: HttpSettings
) -> AsyncIterator[tuple[demostory.Story, asyncio.Task[int]]]:
    """The world, then the controller serving the HTTP API; stopped in reverse: the controller, then the
    pods while the fake service still answers (so the listener ends cleanly), then the world."""
    github = GitHubFake(
        host="127.0.0.1", settings=GitHubSettings(min_runner_version=demostory.MINIMUM_VERSION)
    )
    async with World(github=github) as world:
        github.allow_pat(demostory.DEMO_PAT)
        say(f"emulated cluster at {world.url}, fake GitHub at {world.github_url}")
        settings = ControllerSettings(
            journal_path=journal_path,
            cluster=Source.kubeconfig(world.write_kubeconfig(directory / "kubeconfig")),
            journal=JournalSettings(durable=False),
            watch=WatchSettings(kinds=declared.WATCHED, resync=None),
            queue=QueueSettings(workers=4),
            machines=MachineSettings(
                controller_namespace=demostory.CONTROLLER_NAMESPACE, listener_image="arcsm:demo"
            ),
            http=http,
        )
        stop = asyncio.Event()
        served: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        controller = asyncio.create_task(
            running.run(settings, stop=stop, on_http=served.set_result), name="arcsm run"
        )
        watch = demostory.JournalWatch(journal_path)
        try:
            say(f"controller started, journal {journal_path}")
            await asyncio.wait((served, controller), return_when=asyncio.FIRST_COMPLETED)
            if not served.done():
                raise demostory.DemoFailed(
                    f"the controller stopped before serving HTTP: {_ended(controller)}"
                )
            _print_urls(served.result())
            async with api_client(world.configuration()) as kube:
                try:
                    yield demostory.Story(world, kube, watch, say), controller
                finally:
                    # The controller first, or it would bring back the pods deleted next.
                    await _stop_controller(stop, controller)
                    await _stop_pods(kube)
        finally:
            served.cancel()
            await watch.close()
            await _stop_controller(stop, controller)


async def _stop_controller(stop: asyncio.Event, controller: asyncio.Task[int]) -> None:
    """Stop the controller as SIGTERM would; cancel it if it has not stopped after ``STOP_TIMEOUT``."""
    stop.set()
    await asyncio.wait((controller,), timeout=STOP_TIMEOUT)
    if not controller.done():
        refuse("the controller did not stop in time; cancelling it")
        controller.cancel()
    await asyncio.gather(controller, return_exceptions=True)


def _print_urls(url: str) -> None:
    say(f"timeline page: {url}/")
    say(f"phase history: curl -s '{url}/api/v1/phases?kind=AutoscalingRunnerSet'")
    say(
        "this scale set: curl -s "
        f"'{url}/api/v1/namespaces/{demostory.NAMESPACE}/autoscalingrunnersets/{demostory.NAME}/phases'"
    )
    say(f"journal stream: curl -sN '{url}/api/v1/journal/stream?after=0'")


async def _stop_pods(
    kube: client.ApiClient,
    namespaces: tuple[str, ...] = (demostory.NAMESPACE, demostory.CONTROLLER_NAMESPACE),
) -> None:
    """Delete every pod and wait until they are gone, so runners and the listener end while the fake GitHub
    still answers."""
    core = client.CoreV1Api(kube)
    try:
        for namespace in namespaces:
            await core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)

        async def gone() -> bool:
            return not any([(await core.list_namespaced_pod(ns)).items for ns in namespaces])

        await demostory.until(gone, step="the pods stopped", timeout=10)
    except (demostory.StepTimedOut, client.ApiException) as exc:
        refuse(f"could not stop the pods cleanly: {exc}")
