"""ARC's ``gha_controller_*`` gauges (``api.arcgauges``) from a projection: which runners count as pending,
running and failed, which listeners run, and the labels upstream gives them.

Inputs: objects folded into the real ``store.projection.Projection`` as watch events would be (owner
references link runners to their runner set). Outputs: the families ``collect`` yields, read as samples.
"""

from __future__ import annotations

from typing import Any

from prometheus_client.core import Metric

from api import arcgauges
from statemachines import naming
from store.projection import Projection
from store.records import observed

NS, CONTROLLER_NS = "runners", "arc-systems"
URL = "https://github.com/org/.github"
LABELS = {"name": "arc", "namespace": NS, "repository": ".github", "organization": "org", "enterprise": ""}


def runner_set(name: str, *, scale_set: str = "arc", url: str = URL) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": {naming.LABEL_SCALE_SET_NAME: scale_set, naming.LABEL_SCALE_SET_NAMESPACE: NS},
        },
        "spec": {"ephemeralRunnerSpec": {"githubConfigUrl": url}},
    }


def runner(name: str, owner: str, phase: str | None, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "ownerReferences": [{"uid": f"uid-{owner}", "kind": "EphemeralRunnerSet", "name": owner}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {} if phase is None else {"phase": phase}}


def listener(name: str, url: str = URL) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": CONTROLLER_NS}, "spec": {"githubConfigUrl": url}}


def pod(name: str, state: str, *, reason: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"containerStatuses": [{"name": "listener", "state": {state: {}}}]}
    if reason:
        status["reason"] = reason
    return {"metadata": {"name": name, "namespace": CONTROLLER_NS}, "status": status}


def projection(*objects: tuple[str, dict[str, Any]]) -> Projection:
    folded = Projection()
    for kind, obj in objects:
        folded.apply(observed("ADDED", kind, obj))
    return folded


def samples(objects: Projection) -> dict[str, list[tuple[dict[str, str], float]]]:
    families: list[Metric] = list(arcgauges.collect(objects))
    return {f.name: [(s.labels, s.value) for s in f.samples] for f in families}


def test_runners_count_by_phase_as_upstream_sorts_them() -> None:
    phases = ["Pending", None, "Unknown", "Running", "Running", "Failed", "Succeeded", "Outdated"]
    objects = projection(
        ("EphemeralRunnerSet", runner_set("arc-ers")),
        *(("EphemeralRunner", runner(f"r{i}", "arc-ers", phase)) for i, phase in enumerate(phases)),
        ("EphemeralRunner", runner("leaving", "arc-ers", "Running", deleting=True)),
    )
    found = samples(objects)
    assert found["gha_controller_pending_ephemeral_runners"] == [(LABELS, 3)]  # Pending, none, unknown
    assert found["gha_controller_running_ephemeral_runners"] == [(LABELS, 2)]  # not the one deleting
    assert found["gha_controller_failed_ephemeral_runners"] == [(LABELS, 1)]


def test_runner_sets_of_one_scale_set_add_up_and_a_bad_url_has_no_series() -> None:
    objects = projection(
        ("EphemeralRunnerSet", runner_set("arc-old")),
        ("EphemeralRunnerSet", runner_set("arc-new")),
        ("EphemeralRunnerSet", runner_set("bad", scale_set="bad", url="https://github.com")),
        ("EphemeralRunner", runner("a", "arc-old", "Running")),
        ("EphemeralRunner", runner("b", "arc-new", "Running")),
        ("EphemeralRunner", runner("c", "bad", "Running")),
    )
    assert samples(objects)["gha_controller_running_ephemeral_runners"] == [(LABELS, 2)]


def test_an_enterprise_scope_fills_the_enterprise_label() -> None:
    url = "https://ghes.example.com/enterprises/big-co"
    found = samples(projection(("EphemeralRunnerSet", runner_set("arc-ers", url=url))))
    labels = {**LABELS, "repository": "", "organization": "", "enterprise": "big-co"}
    assert found["gha_controller_pending_ephemeral_runners"] == [(labels, 0)]


def test_a_listener_runs_while_its_container_runs_and_its_pod_was_not_evicted() -> None:
    objects = projection(
        ("AutoscalingListener", listener("up")),
        ("Pod", pod("up", "running")),
        ("AutoscalingListener", listener("waiting")),
        ("Pod", pod("waiting", "waiting")),
        ("AutoscalingListener", listener("evicted")),
        ("Pod", pod("evicted", "running", reason="Evicted")),
        ("AutoscalingListener", listener("no-pod")),
        ("AutoscalingListener", listener("bad-url", url="not a url")),
    )
    running = {
        labels["name"]: value for labels, value in samples(objects)["gha_controller_running_listeners"]
    }
    assert running == {"up": 1, "waiting": 0, "evicted": 0, "no-pod": 0}
    labels = {**LABELS, "name": "up", "namespace": CONTROLLER_NS}
    assert (labels, 1) in samples(objects)["gha_controller_running_listeners"]


def test_every_gauge_is_declared_with_upstreams_help_when_nothing_is_there() -> None:
    families = list(arcgauges.collect(Projection()))
    assert {f.name: f.documentation for f in families} == {
        "gha_controller_pending_ephemeral_runners": "Number of ephemeral runners in a pending state.",
        "gha_controller_running_ephemeral_runners": "Number of ephemeral runners in a running state.",
        "gha_controller_failed_ephemeral_runners": "Number of ephemeral runners in a failed state.",
        "gha_controller_running_listeners": "Number of listeners in a running state.",
    }
    assert all(f.type == "gauge" and not f.samples for f in families)
