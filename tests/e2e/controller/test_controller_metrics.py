"""``/metrics`` under upstream's names, from a real run: ARC's ``gha_controller_*`` gauges and
controller-runtime's families on the controller, and the ``gha_*`` metrics of a listener running in the
emulator, scraped at its pod's address.

Real composition root with the HTTP API and the listeners' metrics on (``scraping.serving``), real
journal, the emulated cluster with the fake GitHub (the listener pod runs arcsm's listener in the
simulated kubelet); faults are injected in the emulated API server to make a reconcile fail. Values are
read from the scraped text with prometheus_client's parser. Nothing is mocked.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from kubernetes_asyncio import client
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from controller.loop import runtimemetrics
from controller.loop.settings import LeaderElectionSettings
from sim.faults import Fault
from tests.e2e.controller import harness, scraping
from tests.e2e.controller.scraping import labelled, samples, value
from tests.helpers import eventually

TIMEOUT = scraping.TIMEOUT
CONTROLLERS = ("autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner", "autoscalinglistener")
SCALE_SET = {"name": "arc", "namespace": "default", "organization": "org", "repository": "", "enterprise": ""}
ARC_LABELS = {"name", "namespace", "repository", "organization", "enterprise"}
RESULTS = {"success", "error", "requeue", "requeue_after"}
LISTENER_GAUGES = (
    "gha_assigned_jobs",
    "gha_running_jobs",
    "gha_registered_runners",
    "gha_busy_runners",
    "gha_idle_runners",
    "gha_desired_runners",
)


async def listener_name(kube: client.ApiClient) -> str:
    (al,) = await harness.items(kube, "AutoscalingListener", harness.CONTROLLER_NS)
    return str(al["metadata"]["name"])


async def test_the_controller_serves_arcs_gauges_and_controller_runtimes_families_from_its_run(
    tmp_path: Path,
) -> None:
    async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        # The runner set's first runner create fails once: a reconcile error, retried with its backoff.
        fault = world.inject(Fault(verb="create", path="/ephemeralrunners$", code=500, times=1))
        async with scraping.serving(world, kube, tmp_path) as served:
            await harness.create(kube, harness.scale_set_body(world, minRunners=1))

            async def settled() -> list[Sample] | None:
                found = samples(await served.controller())
                running = value(found, "gha_controller_running_ephemeral_runners", **SCALE_SET)
                listeners = value(found, "gha_controller_running_listeners", namespace=harness.CONTROLLER_NS)
                return found if running == 1 and listeners == 1 else None

            found = await eventually(settled, timeout=TIMEOUT, what="one runner and the listener running")
            assert fault.hits == 1

    # Upstream's Go client writes no `*_created` series for counters and histograms; nor does arcsm.
    assert not [s.name for s in found if s.name.endswith("_created")]

    # ARC's gauges: upstream's labels, the runner set's scale set and the listener's own name.
    for gauge in ("pending", "running", "failed"):
        name = f"gha_controller_{gauge}_ephemeral_runners"
        assert [set(labels) for labels in labelled(found, name)] == [ARC_LABELS]
        assert value(found, name, **SCALE_SET) == (1 if gauge == "running" else 0)
    (listener,) = labelled(found, "gha_controller_running_listeners")
    assert listener["name"].startswith("arc-") and listener["name"].endswith("-listener")
    assert {**listener, "name": "arc"} == {**SCALE_SET, "namespace": harness.CONTROLLER_NS}

    # controller-runtime's reconcile families, per controller, every result there from the start.
    for controller in CONTROLLERS:
        results = labelled(found, "controller_runtime_reconcile_total")
        assert {r["result"] for r in results if r["controller"] == controller} == RESULTS, controller
        total = value(found, "controller_runtime_reconcile_total", controller=controller)
        timed = value(found, "controller_runtime_reconcile_time_seconds_count", controller=controller)
        assert total == timed and total is not None and total > 0, controller
        errors = value(found, "controller_runtime_reconcile_errors_total", controller=controller)
        assert errors == value(
            found, "controller_runtime_reconcile_total", controller=controller, result="error"
        )
        assert value(found, "controller_runtime_reconcile_panics_total", controller=controller) == 0
        assert value(found, "controller_runtime_terminal_reconcile_errors_total", controller=controller) == 0
        assert value(found, "controller_runtime_reconcile_timeouts_total", controller=controller) == 0
        assert value(found, "controller_runtime_max_concurrent_reconciles", controller=controller) == 4
        assert value(found, "controller_runtime_active_workers", controller=controller) is not None
        # The work queue of each controller, named after it.
        queue = {"name": controller, "controller": controller}
        adds = value(found, "workqueue_adds_total", **queue)
        taken = value(found, "workqueue_queue_duration_seconds_count", **queue)
        worked = value(found, "workqueue_work_duration_seconds_count", **queue)
        assert adds is not None and taken is not None and worked is not None
        assert adds >= taken >= worked > 0, controller
        assert value(found, "workqueue_depth", **queue, priority="0") is not None
        assert value(found, "workqueue_unfinished_work_seconds", **queue) is not None
        assert value(found, "workqueue_longest_running_processor_seconds", **queue) is not None
    ers = {"controller": "ephemeralrunnerset"}
    assert value(found, "controller_runtime_reconcile_total", **ers, result="error") == 1  # the fault
    retries = value(found, "workqueue_retries_total", name="ephemeralrunnerset", **ers)
    assert retries is not None and retries >= 1  # its backoff
    # Facts only the Actions service knows decide again at once; the listener's RBAC waits on a timer.
    assert value(
        found, "controller_runtime_reconcile_total", controller="autoscalingrunnerset", result="requeue"
    )
    assert value(found, "controller_runtime_reconcile_total", controller="ephemeralrunner", result="requeue")
    assert value(
        found, "controller_runtime_reconcile_total", controller="autoscalinglistener", result="requeue_after"
    )

    # Every request of the controller's Kubernetes client, by code, verb and the server's host:port.
    host = urlsplit(world.url).netloc
    for code, method in (("200", "GET"), ("201", "POST"), ("200", "PATCH")):
        count = value(found, "rest_client_requests_total", code=code, method=method, host=host)
        assert count is not None and count > 0, (code, method)
    assert value(found, "rest_client_requests_total", code="500", method="POST", host=host) == 1


async def test_the_families_carry_controller_runtimes_help_types_and_buckets(tmp_path: Path) -> None:
    async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        async with scraping.serving(world, kube, tmp_path) as served:
            await harness.create(kube, harness.scale_set_body(world))

            async def reconciled() -> str | None:
                text = await served.controller()
                return text if value(samples(text), "workqueue_work_duration_seconds_count") else None

            text = await eventually(reconciled, timeout=TIMEOUT, what="reconciles counted")
    families = {family.name: family for family in text_string_to_metric_families(text)}
    kinds = {
        "controller_runtime_reconcile": "counter",
        "controller_runtime_reconcile_errors": "counter",
        "controller_runtime_terminal_reconcile_errors": "counter",
        "controller_runtime_reconcile_panics": "counter",
        "controller_runtime_reconcile_timeouts": "counter",
        "controller_runtime_reconcile_time_seconds": "histogram",
        "controller_runtime_max_concurrent_reconciles": "gauge",
        "controller_runtime_active_workers": "gauge",
        "workqueue_depth": "gauge",
        "workqueue_adds": "counter",
        "workqueue_queue_duration_seconds": "histogram",
        "workqueue_work_duration_seconds": "histogram",
        "workqueue_unfinished_work_seconds": "gauge",
        "workqueue_longest_running_processor_seconds": "gauge",
        "workqueue_retries": "counter",
        "rest_client_requests": "counter",
        "gha_controller_pending_ephemeral_runners": "gauge",
        "gha_controller_running_ephemeral_runners": "gauge",
        "gha_controller_failed_ephemeral_runners": "gauge",
        "gha_controller_running_listeners": "gauge",
    }
    assert {name: families[name].type for name in kinds if name in families} == kinds
    for name, help_text in runtimemetrics.HELP.items():
        if name == "leader_election_master_status":
            continue  # only with leader election: the standby test reads it
        family = families.get(name) or families[name.removesuffix("_total")]  # the parser drops _total
        assert family.documentation == help_text, name
    assert families["controller_runtime_reconcile"].documentation == (
        "Total number of reconciliations per controller"
    )

    def bounds(family: str) -> list[str]:
        found = {s.labels["le"] for s in families[family].samples if s.name.endswith("_bucket")}
        return sorted(found - {"+Inf"}, key=float)

    assert bounds("controller_runtime_reconcile_time_seconds")[:4] == ["0.005", "0.01", "0.025", "0.05"]
    assert len(bounds("controller_runtime_reconcile_time_seconds")) == 40
    # client_golang's ExponentialBuckets(10e-9, 10, 12), bound for bound.
    assert bounds("workqueue_queue_duration_seconds") == [
        "1e-08", "1e-07", "1e-06", "9.999999999999999e-06", "9.999999999999999e-05", "0.001", "0.01", "0.1",
        "1.0", "10.0", "100.0", "1000.0",
    ]  # fmt: skip


async def test_a_listener_under_the_controller_serves_its_gha_metrics_on_its_pod_address(
    tmp_path: Path,
) -> None:
    async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        async with scraping.serving(world, kube, tmp_path) as served:
            await harness.create(kube, harness.scale_set_body(world, minRunners=1))
            url = await served.listener_url()
            assert ipaddress.ip_address(str(urlsplit(url).hostname)) in ipaddress.ip_network("127.244.0.0/16")

            async def scaled() -> list[Sample] | None:
                found = samples(await served.listener())
                return found if value(found, "gha_desired_runners", **SCALE_SET) == 1 else None

            found = await eventually(scaled, timeout=TIMEOUT, what="the listener asking for minRunners")
            for gauge in LISTENER_GAUGES:
                assert labelled(found, gauge) == [SCALE_SET], gauge
            assert (value(found, "gha_min_runners"), value(found, "gha_max_runners")) == (1, 3)

            scale_set = world.github.scale_set("arc")
            assert scale_set is not None
            (job,) = world.github.queue_jobs(scale_set.id, 1)

            async def completed() -> list[Sample] | None:
                found = samples(await served.listener())
                return found if value(found, "gha_completed_jobs_total") == 1 else None

            found = await eventually(completed, timeout=TIMEOUT, what="the job counted as completed")
            job_labels = {
                "organization": job.owner,
                "repository": job.repository,
                "job_name": job.display_name,
                "event_name": job.event_name,
                "job_workflow_ref": job.workflow_ref,
                "job_workflow_name": "ci",
                "job_workflow_target": "heads/main",
            }
            assert value(found, "gha_started_jobs_total", **job_labels) == 1
            assert value(found, "gha_completed_jobs_total", **job_labels, job_result="succeeded") == 1
            assert value(found, "gha_job_startup_duration_seconds_count", **job_labels) == 1
            assert value(found, "gha_job_execution_duration_seconds_count", **job_labels) == 1
            assert not [s.name for s in found if s.name.endswith("_created")]

            # Deleting the scale set stops its listener and takes its series off the controller.
            await harness.delete(kube, "AutoscalingRunnerSet", "arc")

            async def gone() -> bool:
                found = samples(await served.controller())
                try:
                    await served.http.get(url)
                except httpx.ConnectError:
                    return not labelled(found, "gha_controller_running_listeners")
                except (httpx.RemoteProtocolError, httpx.ReadError):
                    return False  # caught mid-shutdown: the next ask finds the port closed
                return False

            await eventually(gone, timeout=TIMEOUT, what="the listener stopped and its series gone")


async def test_a_replica_that_stands_by_reports_its_lease_and_leaves_arcs_gauges_to_the_leader(
    tmp_path: Path,
) -> None:
    lease = "arcsm-controller"
    election = LeaderElectionSettings(
        identity="solo",
        namespace=harness.CONTROLLER_NS,
        lease_name=lease,
        lease_duration=2,
        renew_deadline=1,
        retry_period=0.1,
    )
    async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        settings = dataclasses.replace(scraping.settings_for(world, tmp_path), leader_election=election)
        async with scraping.serving(world, kube, tmp_path, settings) as served:
            await harness.create(kube, harness.scale_set_body(world))

            async def leading_with_gauges() -> list[Sample] | None:
                found = samples(await served.controller())
                leader = value(found, "leader_election_master_status", name=lease)
                return found if leader == 1 and labelled(found, "gha_controller_running_listeners") else None

            await eventually(leading_with_gauges, timeout=TIMEOUT, what="leading, the listener counted")

            # Renewals fail: the replica steps down; it still serves the totals of its term.
            world.inject(Fault(verb="update", path="/leases/", code=500, times=None))

            async def standing_by() -> list[Sample] | None:
                found = samples(await served.controller())
                standby = value(found, "leader_election_master_status", name=lease) == 0
                arc = [s for s in found if s.name.startswith("gha_controller_")]
                return found if standby and not arc else None

            found = await eventually(standing_by, timeout=TIMEOUT, what="standing by, no ARC gauges")
            assert value(found, "controller_runtime_reconcile_total")  # the term's totals stay
            assert value(found, "controller_runtime_active_workers") == 0
            assert value(found, "workqueue_depth") == 0

            world.clear_faults()
            await eventually(leading_with_gauges, timeout=TIMEOUT, what="leading again")
            families = {
                family.name: family for family in text_string_to_metric_families(await served.controller())
            }
            leader = families["leader_election_master_status"]
            assert (leader.type, leader.documentation) == ("gauge", runtimemetrics.HELP[leader.name])
