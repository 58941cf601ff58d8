"""``arcsm run``: the controller, in the foreground, until SIGTERM or SIGINT (then exit 0).

    arcsm run --journal PATH [--kubeconfig PATH] [--namespace NS]... [--controller-namespace arc-systems]
              [--http HOST:PORT] [--log-level info] [--log-format auto|json|text] [...]

Every option can also be set by an environment variable ``ARCSM_<OPTION>`` (``--log-level`` is
``ARCSM_LOG_LEVEL``); a flag on the command line wins over its variable, and ``arcsm run --help`` names
each. A repeatable option's variable holds several values separated by spaces or commas
(``ARCSM_NAMESPACE="team-a team-b"``); a flag's value may hold several separated by commas. Three options
also read the variables upstream ARC's chart sets: ``CONTROLLER_MANAGER_POD_NAMESPACE``,
``CONTROLLER_MANAGER_CONTAINER_IMAGE`` and ``LISTENER_ENTRYPOINT``, when their ``ARCSM_`` one is unset.

It finds the cluster as kubectl and controller-runtime do (``kubeconfigs``): ``--kubeconfig`` (or
``ARCSM_KUBECONFIG``), else ``$KUBECONFIG`` (its files merged as kubectl merges them), else the pod's
service account when it runs in a pod, else ``~/.kube/config``; with none of them it says what it tried
in one line and exits 1. ``--namespace`` limits the watches to those namespaces (the controller
namespace, where listeners live, is always watched). Logs go to stderr (``logformat``): with
``--log-format auto``, text on a terminal and one JSON object per line otherwise, with the keys kind,
namespace, name, seq, from_phase, to_phase and trigger where they apply. A bad option is one line on
stderr and exit status 2; a failure to start is one line and exit status 1.

``--http HOST:PORT`` serves the read-only HTTP API (phase history, journal, ``/healthz``, ``/readyz``,
``/metrics``) in the controller process; it is off unless given, so nothing listens that was not asked
for (in a pod, pass ``--http 0.0.0.0:8080`` for the probes and Prometheus). It is where upstream's
``--metrics-addr`` and ``--health-probe-bind-address`` both point. It keeps to bounds, so that no client
can stop the controller: ``--http-max-connections`` (128) open at once (fewer when the descriptor limit
would leave under 160 descriptors to the controller's own clients and refusals), one more taking the
place of the connection longest waiting for a request, or answered 503 when every one is answering;
``--http-max-streams`` (32) journal event streams, one more answered 503; ``--http-header-timeout``
(10 s) for a request head to arrive, or the connection is closed; ``--http-idle-timeout`` (5 s) between
requests on a kept-alive connection; ``--http-write-timeout`` (30 s) a write may stay blocked on a client
that stopped reading (a stalled journal stream reader, say) before it is dropped and its stream freed.
Repeated errors (a client flood, descriptors exhausted) are logged once a minute with a count. At start
the soft descriptor limit is raised to the hard one, as Go programs do. ``--debug-endpoints`` adds
``/debug/stacks`` and ``/debug/profile`` to it (``api.debugging``), for an operator chasing a hang;
the chart turns it on for upstream's ``pprof.addr``.

Leader election: with ``--leader-elect`` (the default on the pod's service account, off when a kubeconfig
was found) the replica decides and writes only while it holds the Lease ``--lease-name``
(arcsm-controller) in the controller namespace; otherwise it stands by, watching and journaling. The
timings are client-go's: ``--lease-duration`` 15 s, ``--renew-deadline`` 10 s, ``--retry-period`` 2 s;
each flag also reads an environment variable (``ARCSM_LEADER_ELECT``, ``ARCSM_LEASE_NAME``,
``ARCSM_LEASE_DURATION``, ``ARCSM_RENEW_DEADLINE``, ``ARCSM_RETRY_PERIOD``). The identity is the pod name
(``HOSTNAME``) plus a random suffix. ``--no-leader-elect`` leads at once, for one replica: while another
replica holds the Lease (renewed within its duration) it refuses to start in one line (exit 1) rather
than fight that replica over the same scale sets; it does not wait as a standby, which only
``--leader-elect`` does. Otherwise it holds the Lease itself while it runs, so a replica that elects,
started beside it later, stands by; its identity there is its journal's (the host, and the journal
file's device and inode), so restarted on the same journal it takes the Lease back at once. Should
another replica take the Lease while this one could not renew it, this one stops (exit 1). On SIGTERM the
replica finishes its reconciles in flight (abandoning them after 20 s), releases the Lease and exits 0.

Reconciles: ``--workers`` bounds those in flight across all kinds; ``--runner-concurrency`` (upstream's
``--runner-max-concurrent-reconciles``) and its siblings bound those of one kind. ``--no-predicates``
delivers every update of an owned object to its owner, for benchmarks and diagnosis (the update
predicates only save reconciles: no outcome changes). The journal keeps raw
records ``--journal-retain-days`` and decisions with their effects ``--history-retain-days``, within
``--journal-retain-bytes`` (0 turns a bound off).

A scale set is never deleted over its ``app.kubernetes.io/version`` label: arcsm adopts scale sets
installed by upstream ARC's chart as they are.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer

from api.addresses import parse_address
from api.limits import HttpLimits
from controller.commands.logformat import FORMATS, LEVELS, configure_logging
from controller.commands.runflags import (
    BadOption,
    at_least_one,
    choice,
    count,
    days,
    names,
    per_kind,
    per_second,
    positive,
    readable_size,
    size,
)
from controller.executor.contexts import ExecutorSettings
from controller.loop import kubeconfigs
from controller.loop.settings import (
    ControllerSettings,
    HttpSettings,
    LeaderElectionSettings,
    QueueSettings,
    ReconcileSettings,
)
from statemachines.snapshots import Settings as MachineSettings
from store.settings import HistoryRetention, JournalSettings, RetentionSettings
from watchers.settings import WatchSettings

__all__ = ["run"]

CLUSTER, LOOP, JOURNAL, LISTENERS, OUTPUT = "Cluster", "Reconciles", "Journal", "Listeners", "Logs and HTTP"
LEADER = "Leader election"
MACHINES, JOURNALS, WATCHES = MachineSettings(), JournalSettings(), WatchSettings()
LIMITS = HttpLimits()


def run(
    journal: Annotated[
        Path,
        typer.Option(
            "--journal",
            envvar="ARCSM_JOURNAL",
            help="The journal file (created if missing).",
            dir_okay=False,
            rich_help_panel=JOURNAL,
        ),
    ],
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            envvar="ARCSM_KUBECONFIG",
            help="Reach the cluster with this kubeconfig (default: $KUBECONFIG, merged as kubectl merges "
            "it; in a pod, its service account; else ~/.kube/config).",
            rich_help_panel=CLUSTER,
        ),
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--namespace",
            envvar="ARCSM_NAMESPACE",
            metavar="NS",
            help="Watch only this namespace; repeat, or separate with commas, for more (default: all). "
            "Upstream: --watch-single-namespace.",
            rich_help_panel=CLUSTER,
        ),
    ] = None,
    controller_namespace: Annotated[
        str,
        typer.Option(
            envvar=["ARCSM_CONTROLLER_NAMESPACE", "CONTROLLER_MANAGER_POD_NAMESPACE"],
            metavar="NS",
            help="Where listeners and their objects live.",
            rich_help_panel=CLUSTER,
        ),
    ] = MACHINES.controller_namespace,
    pod_name: Annotated[
        str,
        typer.Option(
            envvar=["ARCSM_POD_NAME", "POD_NAME"],
            metavar="NAME",
            help="This replica's Pod, in the controller namespace: the object of the controller's own "
            "Events (its journal failing). The chart sets it from the downward API. Default: the Lease.",
            rich_help_panel=CLUSTER,
        ),
    ] = "",
    qps: Annotated[
        float,
        typer.Option(
            "--qps",
            envvar="ARCSM_QPS",
            help="Kubernetes requests per second, on average (upstream: --k8s-client-rate-limiter-qps).",
            rich_help_panel=CLUSTER,
        ),
    ] = ExecutorSettings.qps,
    burst: Annotated[
        int,
        typer.Option(
            "--burst",
            envvar="ARCSM_BURST",
            help="Kubernetes requests in a burst (upstream: --k8s-client-rate-limiter-burst).",
            rich_help_panel=CLUSTER,
        ),
    ] = ExecutorSettings.burst,
    resync_period: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_RESYNC_PERIOD",
            metavar="SECONDS",
            help="Re-list every watched kind this often, to catch drift (0: never; upstream: --sync-period).",
            rich_help_panel=CLUSTER,
        ),
    ] = WATCHES.resync or 0.0,
    page_size: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_PAGE_SIZE",
            metavar="N",
            help="Objects per page of a list (its limit): a list or re-list is read, diffed and journaled a "
            "page at a time, so this bounds what one list holds in memory. Each watch re-lists at its own "
            "point of --resync-period, not all at once.",
            rich_help_panel=CLUSTER,
        ),
    ] = WATCHES.page_size,
    workers: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_WORKERS",
            metavar="N",
            help="Reconciles in flight at most, across all kinds.",
            rich_help_panel=LOOP,
        ),
    ] = QueueSettings.workers,
    reconcile_rate: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_RECONCILE_RATE",
            metavar="PER_SECOND",
            help="Retries of failed reconciles per second, per kind, once --reconcile-burst is spent; each "
            "key also backs off on its own. Watch events and timers never wait on it. The default is "
            "controller-runtime's per controller: an outage that fails a whole kind is retried at upstream "
            "ARC's pace.",
            rich_help_panel=LOOP,
        ),
    ] = QueueSettings.rate,
    reconcile_burst: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_RECONCILE_BURST",
            metavar="N",
            help="Retries of failed reconciles of one kind that go at their own backoff before "
            "--reconcile-rate spaces them out (controller-runtime's default).",
            rich_help_panel=LOOP,
        ),
    ] = QueueSettings.burst,
    ars_concurrency: Annotated[
        int | None,
        typer.Option(
            envvar="ARCSM_ARS_CONCURRENCY",
            metavar="N",
            help="AutoscalingRunnerSet reconciles in flight at most (default: up to --workers).",
            rich_help_panel=LOOP,
        ),
    ] = None,
    ers_concurrency: Annotated[
        int | None,
        typer.Option(
            envvar="ARCSM_ERS_CONCURRENCY",
            metavar="N",
            help="EphemeralRunnerSet reconciles in flight at most (default: up to --workers).",
            rich_help_panel=LOOP,
        ),
    ] = None,
    runner_concurrency: Annotated[
        int | None,
        typer.Option(
            envvar="ARCSM_RUNNER_CONCURRENCY",
            metavar="N",
            help="EphemeralRunner reconciles in flight at most (default: up to --workers; upstream: "
            "--runner-max-concurrent-reconciles).",
            rich_help_panel=LOOP,
        ),
    ] = None,
    listener_concurrency: Annotated[
        int | None,
        typer.Option(
            envvar="ARCSM_LISTENER_CONCURRENCY",
            metavar="N",
            help="AutoscalingListener reconciles in flight at most (default: up to --workers).",
            rich_help_panel=LOOP,
        ),
    ] = None,
    predicates: Annotated[
        bool,
        typer.Option(
            "--predicates/--no-predicates",
            envvar="ARCSM_PREDICATES",
            help="Drop updates of owned objects that change no field the owner reads (on by default; "
            "off changes no outcome, only costs reconciles: for benchmarks and diagnosis).",
            rich_help_panel=LOOP,
        ),
    ] = ReconcileSettings.predicates,
    exclude_label_propagation_prefix: Annotated[
        list[str] | None,
        typer.Option(
            envvar="ARCSM_EXCLUDE_LABEL_PROPAGATION_PREFIX",
            metavar="PREFIX",
            help=(
                "Do not copy labels with this prefix to the objects a scale set owns (its own labels and "
                "its runner metadata labels); repeatable."
            ),
            rich_help_panel=LOOP,
        ),
    ] = None,
    journal_retain_days: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_JOURNAL_RETAIN_DAYS",
            metavar="DAYS",
            help="Keep observed events, timers and snapshots this long (0: no age bound).",
            rich_help_panel=JOURNAL,
        ),
    ] = (JOURNALS.retention.max_age or timedelta(0)) / timedelta(days=1),
    journal_retain_records: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_JOURNAL_RETAIN_RECORDS",
            metavar="N",
            help="Prune observed events, timers and snapshots older than the newest N records of any "
            "type (the cutoff is the last seq minus N; 0: no count bound).",
            rich_help_panel=JOURNAL,
        ),
    ] = JOURNALS.retention.max_records or 0,
    journal_retain_bytes: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_JOURNAL_RETAIN_BYTES",
            metavar="SIZE",
            help="Keep the journal's footprint on disk (database, write-ahead log, free pages) under this "
            "size, e.g. 512Mi or 2Gi: raw records go first, decisions only once no raw record is left "
            "(0: no size bound).",
            rich_help_panel=JOURNAL,
        ),
    ] = readable_size(JOURNALS.retention.max_bytes),
    history_retain_days: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_HISTORY_RETAIN_DAYS",
            metavar="DAYS",
            help="Keep decisions, their effects and results (the phase history) this long (0: no age bound).",
            rich_help_panel=JOURNAL,
        ),
    ] = (JOURNALS.history_retention.max_age or timedelta(0)) / timedelta(days=1),
    history_retain_records: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_HISTORY_RETAIN_RECORDS",
            metavar="N",
            help="Keep the newest N decisions, effects and results (0: no count bound).",
            rich_help_panel=JOURNAL,
        ),
    ] = JOURNALS.history_retention.max_records or 0,
    journal_tail_buffer: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_JOURNAL_TAIL_BUFFER",
            metavar="SIZE",
            help="Keep at most this much of the newest records' JSON in memory for the readers that follow "
            "the journal (the reconciler, metrics, the phase index, stream clients), e.g. 4Mi; a reader "
            "further behind reads from the database. Memory against database reads.",
            rich_help_panel=JOURNAL,
        ),
    ] = readable_size(JOURNALS.tail_buffer_bytes),
    listener_image: Annotated[
        str,
        typer.Option(
            envvar=["ARCSM_LISTENER_IMAGE", "CONTROLLER_MANAGER_CONTAINER_IMAGE"],
            metavar="IMAGE",
            help="The image listener pods run.",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_image,
    listener_entrypoint: Annotated[
        str,
        typer.Option(
            envvar=["ARCSM_LISTENER_ENTRYPOINT", "LISTENER_ENTRYPOINT"],
            metavar="PATH",
            help="The command of the listener container.",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_entrypoint,
    listener_image_pull_secret: Annotated[
        list[str] | None,
        typer.Option(
            envvar="ARCSM_LISTENER_IMAGE_PULL_SECRET",
            metavar="NAME",
            help="A Secret listener pods pull their image with; repeatable (upstream: "
            "--auto-scaler-image-pull-secrets).",
            rich_help_panel=LISTENERS,
        ),
    ] = None,
    listener_log_level: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LISTENER_LOG_LEVEL",
            metavar="LEVEL",
            help="The listeners' log level: debug, info, warn or error.",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_log_level,
    listener_log_format: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LISTENER_LOG_FORMAT",
            metavar="FORMAT",
            help="The listeners' log format: text or json.",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_log_format,
    listener_metrics_addr: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LISTENER_METRICS_ADDR",
            metavar="ADDR",
            help="Where listeners serve Prometheus metrics, e.g. :8080 (empty or 0: off).",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_metrics_addr,
    listener_metrics_endpoint: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LISTENER_METRICS_ENDPOINT",
            metavar="PATH",
            help="The path of the listeners' metrics, e.g. /metrics.",
            rich_help_panel=LISTENERS,
        ),
    ] = MACHINES.listener_metrics_endpoint,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            envvar="ARCSM_HTTP",
            metavar="HOST:PORT",
            help="Serve the read-only HTTP API (phase history, journal, /healthz, /readyz, /metrics) on "
            "this address, e.g. 127.0.0.1:8080 (port 0: a free one, logged). Default: off.",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    http_max_connections: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_HTTP_MAX_CONNECTIONS",
            metavar="N",
            help="HTTP connections open at once: one more takes the place of the longest idle, or is "
            "answered 503 when all are answering (fewer are kept when the descriptor limit would leave "
            "under 160 to the rest of the controller).",
            rich_help_panel=OUTPUT,
        ),
    ] = LIMITS.max_connections,
    http_max_streams: Annotated[
        int,
        typer.Option(
            envvar="ARCSM_HTTP_MAX_STREAMS",
            metavar="N",
            help="Journal event streams (/api/v1/journal/stream, the timeline page) open at once; one more "
            "is answered 503.",
            rich_help_panel=OUTPUT,
        ),
    ] = LIMITS.max_streams,
    http_header_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_HTTP_HEADER_TIMEOUT",
            metavar="SECONDS",
            help="Close an HTTP connection that sends no whole request head this long after connecting or "
            "after its previous answer.",
            rich_help_panel=OUTPUT,
        ),
    ] = LIMITS.header_timeout,
    http_idle_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_HTTP_IDLE_TIMEOUT",
            metavar="SECONDS",
            help="Close a kept-alive HTTP connection idle this long between requests.",
            rich_help_panel=OUTPUT,
        ),
    ] = LIMITS.idle_timeout,
    http_write_timeout: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_HTTP_WRITE_TIMEOUT",
            metavar="SECONDS",
            help="Drop an HTTP client that stopped reading (a write to it blocked this long), such as a "
            "journal stream reader gone quiet; its stream is freed.",
            rich_help_panel=OUTPUT,
        ),
    ] = LIMITS.write_timeout,
    debug_endpoints: Annotated[
        bool,
        typer.Option(
            "--debug-endpoints",
            envvar="ARCSM_DEBUG_ENDPOINTS",
            help="Also serve, on the --http address, /debug/stacks (every thread's stack and every task's "
            "await chain) and /debug/profile?seconds=N (a sampling profile), for chasing a hang: code "
            "locations only, never a value. Default: off (404).",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
    leader_elect: Annotated[
        bool | None,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            envvar="ARCSM_LEADER_ELECT",
            help="Decide only while holding the Lease (replicas stand by, journaling). "
            "Default: on with the pod's service account, off with a kubeconfig. Off, it leads at once, "
            "refuses to start while another replica holds the Lease, and holds it itself while it runs.",
            rich_help_panel=LEADER,
        ),
    ] = None,
    lease_name: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LEASE_NAME", help="The Lease, in the controller namespace.", rich_help_panel=LEADER
        ),
    ] = LeaderElectionSettings.lease_name,
    lease_duration: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_LEASE_DURATION",
            help="Seconds a standby waits on an unrenewed Lease.",
            rich_help_panel=LEADER,
        ),
    ] = LeaderElectionSettings.lease_duration,
    renew_deadline: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_RENEW_DEADLINE",
            help="Seconds the leader may fail to renew before it steps down.",
            rich_help_panel=LEADER,
        ),
    ] = LeaderElectionSettings.renew_deadline,
    retry_period: Annotated[
        float,
        typer.Option(
            envvar="ARCSM_RETRY_PERIOD",
            help="Seconds between tries to acquire or renew the Lease.",
            rich_help_panel=LEADER,
        ),
    ] = LeaderElectionSettings.retry_period,
    log_level: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LOG_LEVEL", help="debug, info, warn (or warning) or error.", rich_help_panel=OUTPUT
        ),
    ] = "info",
    log_format: Annotated[
        str,
        typer.Option(
            envvar="ARCSM_LOG_FORMAT",
            help="auto (JSON lines unless stderr is a terminal), json or text.",
            rich_help_panel=OUTPUT,
        ),
    ] = "auto",
) -> None:
    """Run the controller: watch the scale sets, decide, journal and act, until SIGTERM or SIGINT.

    An existing journal is checked first, as `arcsm journal verify` checks it, and refused when damaged.
    Every option can be set by the environment variable shown beside it; a flag wins over its variable.
    """
    # The controller's libraries are imported when it runs, not with the options above: ``arcsm run
    # --help`` and ``arcsm --help`` read only the declarations (``controller.commands.lazycommands``).
    import asyncio

    from controller.commands import lazyhttpx, lazykube

    lazykube.install()  # before anything imports kubernetes_asyncio: only the APIs and models used load
    lazyhttpx.install()  # before anything imports httpx: not its command line's libraries

    from actions import errors as actions_errors
    from actions import listenerconfig
    from controller.loop import declared, running
    from store.errors import JournalCorrupt, JournalError, JournalFormatError

    if qps <= 0 or burst < 1:
        typer.echo("arcsm run: --qps must be positive and --burst at least 1", err=True)
        raise typer.Exit(2)
    try:
        choice(log_level, tuple(LEVELS), "--log-level")
        choice(log_format, FORMATS, "--log-format")
        limits = HttpLimits(
            max_connections=at_least_one(http_max_connections, "--http-max-connections"),
            max_streams=at_least_one(http_max_streams, "--http-max-streams"),
            header_timeout=positive(http_header_timeout, "--http-header-timeout"),
            idle_timeout=positive(http_idle_timeout, "--http-idle-timeout"),
            write_timeout=positive(http_write_timeout, "--http-write-timeout"),
        )
        if debug_endpoints and http is None:
            raise BadOption("--debug-endpoints serves on the HTTP API: give --http HOST:PORT too")
        address = (
            None
            if http is None
            else HttpSettings(*parse_address(http), limits=limits, debug_endpoints=debug_endpoints)
        )
        if resync_period < 0:
            raise BadOption(f"--resync-period must not be negative (0: never), not {resync_period}")
        settings = ControllerSettings(
            journal_path=journal,
            journal=JournalSettings(
                retention=RetentionSettings(
                    max_age=days(journal_retain_days, "--journal-retain-days"),
                    max_records=count(journal_retain_records, "--journal-retain-records"),
                    max_bytes=size(journal_retain_bytes, "--journal-retain-bytes"),
                ),
                history_retention=HistoryRetention(
                    max_age=days(history_retain_days, "--history-retain-days"),
                    max_records=count(history_retain_records, "--history-retain-records"),
                ),
                tail_buffer_bytes=at_least_one(
                    size(journal_tail_buffer, "--journal-tail-buffer") or 0, "--journal-tail-buffer"
                ),
            ),
            watch=WatchSettings(
                namespaces=names(namespace),
                kinds=declared.WATCHED,
                resync=resync_period or None,
                page_size=at_least_one(page_size, "--page-size"),
            ),
            queue=QueueSettings(
                workers=at_least_one(workers, "--workers"),
                rate=per_second(reconcile_rate, "--reconcile-rate"),
                burst=at_least_one(reconcile_burst, "--reconcile-burst"),
                per_kind=per_kind(
                    {
                        "AutoscalingRunnerSet": ars_concurrency,
                        "EphemeralRunnerSet": ers_concurrency,
                        "EphemeralRunner": runner_concurrency,
                        "AutoscalingListener": listener_concurrency,
                    }
                ),
            ),
            reconcile=ReconcileSettings(predicates=predicates),
            executor=ExecutorSettings(qps=qps, burst=burst),
            machines=MachineSettings(
                controller_namespace=controller_namespace,
                listener_image=listener_image,
                listener_entrypoint=listener_entrypoint,
                exclude_label_prefixes=names(exclude_label_propagation_prefix),
                image_pull_secrets=names(listener_image_pull_secret),
                listener_log_level=choice(
                    listener_log_level, listenerconfig.LOG_LEVELS, "--listener-log-level"
                ),
                listener_log_format=choice(
                    listener_log_format, listenerconfig.LOG_FORMATS, "--listener-log-format"
                ),
                listener_metrics_addr=listener_metrics_addr,
                listener_metrics_endpoint=listener_metrics_endpoint,
            ),
            http=address,
            pod_name=pod_name,
        )
        # Checked whether or not it is on, so a bad timing is a bad option wherever the cluster is.
        election = _leader_election(
            namespace=controller_namespace,
            lease_name=lease_name,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
        )
    except ValueError as exc:
        typer.echo(f"arcsm run: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        cluster = kubeconfigs.find(kubeconfig, explicit_flag="--kubeconfig (or ARCSM_KUBECONFIG)")
    except kubeconfigs.NoCluster as exc:
        typer.echo(f"arcsm run: {exc}", err=True)
        raise typer.Exit(1) from None
    # By default a replica elects a leader where replicas run: in a pod, on its service account.
    elect = cluster.in_cluster if leader_elect is None else leader_elect
    settings = dataclasses.replace(
        settings,
        cluster=cluster,
        leader_election=election if elect else None,
        checked_lease=None if elect else election,
    )
    configure_logging(log_level, log_format)
    _descriptors_up_to_the_hard_limit()
    try:
        code = asyncio.run(running.run(settings))
    except JournalCorrupt as exc:
        typer.echo(
            f"arcsm run: journal {journal} is damaged ({exc}) and was left as it was: restore it from a "
            "backup, or move it aside to start a new one (`arcsm journal verify` says where it is damaged)",
            err=True,
        )
        code = 1
    except JournalFormatError as exc:
        typer.echo(f"arcsm run: {exc}; {journal} was left as it was", err=True)
        code = 1
    except (actions_errors.InvalidConfiguration, JournalError, OSError, RuntimeError) as exc:
        # RuntimeError: a task of the loop failed (its traceback is in the log above).
        typer.echo(f"arcsm run: {exc}", err=True)
        code = 1
    raise typer.Exit(code)


def _descriptors_up_to_the_hard_limit() -> None:
    """Raise the soft descriptor limit to the hard one, as every Go program (upstream ARC's too) does at
    start: the HTTP API's connections and the controller's own clients share the process's table, and
    a soft limit of 1024 left below a far higher hard one only makes them run out sooner."""
    import contextlib
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):  # an unlimited hard limit is refused: keep the soft
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _leader_election(
    *,
    namespace: str,
    lease_name: str,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
) -> LeaderElectionSettings:
    from controller.loop.leading import default_identity  # with the Kubernetes client: only when it runs

    return LeaderElectionSettings(
        identity=default_identity(),
        namespace=namespace,
        lease_name=lease_name,
        lease_duration=lease_duration,
        renew_deadline=renew_deadline,
        retry_period=retry_period,
    )
