"""Upstream ARC's controller gauges, with its names, help texts and labels, computed from the projection
when scraped.

ARC's EphemeralRunnerSet and AutoscalingListener controllers set them as they reconcile
(``controllers/actions.github.com/metrics``); arcsm counts the same objects in the projection, so a panel
or an alert written for ARC reads the same values:

* ``gha_controller_pending_ephemeral_runners``, ``gha_controller_running_ephemeral_runners``,
  ``gha_controller_failed_ephemeral_runners``: per EphemeralRunnerSet, its EphemeralRunners that are not
  being deleted, by phase: ``Running``, ``Failed``, and pending for ``Pending``, ``Unknown``, no phase or
  any phase arcsm does not know (``Succeeded`` and ``Outdated`` runners count in none of the three).
  ``name`` and ``namespace`` are the runner set's ``actions.github.com/scale-set-name`` and
  ``scale-set-namespace`` labels (its scale set's), as upstream reads them.
* ``gha_controller_running_listeners``: per AutoscalingListener (``name`` and ``namespace`` its own, in
  the controller namespace), 1 while the ``listener`` container of its pod runs and the pod was not
  evicted, else 0.

``enterprise``, ``organization`` and ``repository`` are what the object's ``githubConfigUrl`` names, as
written (``statemachines.naming.url_scope``, upstream's ``ParseGitHubConfigFromURL``); an object whose URL
names none has no series, as upstream publishes none for it.

Where upstream differs because its gauges are set as a side effect of a reconcile: a deleted object's
series goes with it (upstream keeps its last value until the controller restarts), and runner sets with
the same scale set labels (an old one draining beside its successor) add up where upstream shows whichever
it reconciled last.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Final

from prometheus_client.core import GaugeMetricFamily

from api.ports import Objects
from statemachines import kinds, naming, pods
from statemachines.jsonvalues import section
from statemachines.phases import ErPhase

LABELS: Final = ("name", "namespace", "repository", "organization", "enterprise")
PENDING: Final = "gha_controller_pending_ephemeral_runners"
RUNNING: Final = "gha_controller_running_ephemeral_runners"
FAILED: Final = "gha_controller_failed_ephemeral_runners"
LISTENERS: Final = "gha_controller_running_listeners"

HELP: Final = {
    PENDING: "Number of ephemeral runners in a pending state.",
    RUNNING: "Number of ephemeral runners in a running state.",
    FAILED: "Number of ephemeral runners in a failed state.",
    LISTENERS: "Number of listeners in a running state.",
}

# The runner phases each gauge counts; any other phase string counts as pending (``ErPhase.of``).
_GAUGE_OF_PHASE: Final = {
    ErPhase.PENDING: PENDING,
    ErPhase.UNKNOWN: PENDING,
    ErPhase.RUNNING: RUNNING,
    ErPhase.FAILED: FAILED,
}

Labels = tuple[str, str, str, str, str]


def _labels(name: str, namespace: str, config_url: object) -> Labels | None:
    try:
        scope = naming.url_scope(str(config_url or ""))
    except naming.InvalidConfigUrl:
        return None
    return (name, namespace, scope["repository"], scope["organization"], scope["enterprise"])


def runner_counts(objects: Objects) -> dict[Labels, collections.Counter[str]]:
    """Per scale set labels, the runners counted into each of the three runner gauges."""
    counts: dict[Labels, collections.Counter[str]] = {}
    for ers in objects.items(kinds.ERS):
        meta = section(ers, "metadata")
        labels = section(meta, "labels")
        runner_spec = section(section(ers, "spec"), "ephemeralRunnerSpec")
        key = _labels(
            str(labels.get(naming.LABEL_SCALE_SET_NAME) or ""),
            str(labels.get(naming.LABEL_SCALE_SET_NAMESPACE) or ""),
            runner_spec.get("githubConfigUrl"),
        )
        if key is None:
            continue
        counted = counts.setdefault(key, collections.Counter(dict.fromkeys(_GAUGE_OF_PHASE.values(), 0)))
        for kind, namespace, name in objects.children(str(meta.get("uid") or "")):
            runner = objects.get(kind, namespace, name) if kind == kinds.ER else None
            if runner is None or pods.is_terminating(runner):
                continue
            phase = ErPhase.of(section(runner, "status").get("phase")) or ErPhase.PENDING
            gauge = _GAUGE_OF_PHASE.get(phase)
            if gauge is not None:
                counted[gauge] += 1
    return counts


def listeners_running(objects: Objects) -> dict[Labels, int]:
    """Per listener labels, 1 while its pod's listener container runs, else 0."""
    running: dict[Labels, int] = {}
    for al in objects.items(kinds.AL):
        meta = section(al, "metadata")
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        key = _labels(name, namespace, section(al, "spec").get("githubConfigUrl"))
        if key is None:
            continue
        pod = objects.get("Pod", namespace, name)
        up = pods.reason(pod) != "Evicted" and pods.is_running(
            pods.container_status(pod, pods.LISTENER_CONTAINER)
        )
        running[key] = int(up)
    return running


def collect(objects: Objects) -> Iterator[GaugeMetricFamily]:
    """The four gauges as the projection has them now."""
    families = {gauge: GaugeMetricFamily(gauge, HELP[gauge], labels=LABELS) for gauge in HELP}
    for key, counted in sorted(runner_counts(objects).items()):
        for gauge, count in counted.items():
            families[gauge].add_metric(key, count)
    for key, up in sorted(listeners_running(objects).items()):
        families[LISTENERS].add_metric(key, up)
    yield from families.values()
