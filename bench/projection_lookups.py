"""Benchmark: what one event's lookups in the projection cost as the fleet grows, indexed against a scan.

A projection holds N scale sets (each an AutoscalingRunnerSet, ten to a namespace, with its
EphemeralRunnerSet, its AutoscalingListener in the controller namespace and its credentials Secret),
folded from observed records as the controller folds them. For N = 100, 1,000 and 10,000 (``--sizes``),
each lookup an event makes is timed two ways in the same run:

* indexed — what the controller calls now (``controller.loop.declared.referrers`` of
  ``LISTENERS_BY_SCALE_SET``, ``mapping.keys_for`` of a credentials Secret's change, ``Projection.items``
  of one namespace);
* scan — the code these replaced, kept here verbatim: a walk of every listener (and of the namespace's
  scale sets), and ``sorted`` of a kind's keys on every ``items`` call.

Also timed, as the price of the indexes on the write path: folding one observed change of a listener,
and the create and delete of a Pod (whose kind was listed once), against
the same records folded into a projection where no index was built and no kind listed (the write path
before). There the scan column is that baseline and a ratio below 1 is what the upkeep costs.

Each figure is CPU time per call (steadier than wall-clock time on a busy machine), the best of
``--repeat`` runs of a loop long enough to take ``--seconds``; "flat" is the indexed cost at N over its
cost at the smallest N (1.0: no growth). Before timing, the indexed and the scanning lookups are
checked to give the same answers.

Run: ``.venv/bin/python bench/projection_lookups.py [--sizes 100 1000 10000] [--repeat R] [--seconds S]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from controller.loop import declared, mapping
from statemachines import listenerobjects
from statemachines.effects import ObjectRef
from statemachines.kinds import AL, ARS, ERS
from store.projection import Projection
from store.records import observed

CONTROLLER_NS = "arc-systems"
PER_NAMESPACE = 10  # scale sets in each namespace: a fleet of N spans N / 10 namespaces


def _meta(name: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "uid": f"{namespace}/{name}", **extra}


def listener(i: int, version: int = 0) -> dict[str, Any]:
    return {
        "kind": AL,
        "metadata": _meta(f"set-{i}-listener", CONTROLLER_NS, resourceVersion=str(version)),
        "spec": {
            "autoscalingRunnerSetNamespace": f"ns-{i // PER_NAMESPACE}",
            "autoscalingRunnerSetName": f"set-{i}",
            "githubConfigSecret": f"creds-{i}",
            "githubConfigUrl": "https://github.com/org",
        },
    }


def fleet(n: int) -> Projection:
    projection = Projection()
    for i in range(n):
        namespace = f"ns-{i // PER_NAMESPACE}"
        ars = {
            "kind": ARS,
            "metadata": _meta(f"set-{i}", namespace),
            "spec": {"githubConfigSecret": f"creds-{i}", "githubConfigUrl": "https://github.com/org"},
        }
        owner = [{"kind": ARS, "name": f"set-{i}", "uid": f"{namespace}/set-{i}"}]
        ers = {"kind": ERS, "metadata": _meta(f"set-{i}", namespace, ownerReferences=owner)}
        secret = {"kind": "Secret", "metadata": _meta(f"creds-{i}", namespace)}
        pod = {"kind": "Pod", "metadata": _meta(f"set-{i}-listener", CONTROLLER_NS)}
        for kind, obj in ((ARS, ars), (ERS, ers), ("Secret", secret), (AL, listener(i)), ("Pod", pod)):
            projection.apply(observed("ADDED", kind, obj))
    return projection


# -- the scans the indexes replaced (as they were) -------------------------------------------------------


def scan_items(projection: Projection, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
    objects = projection._objects.get(kind, {})
    return [objects[key] for key in sorted(objects) if namespace is None or key[0] == namespace]


def scan_listeners_of(projection: Projection, namespace: str, name: str) -> list[Mapping[str, Any]]:
    return [
        listener
        for listener in scan_items(projection, AL)
        if listenerobjects.ars_namespace(listener) == namespace
        and str(listenerobjects.spec(listener).get("autoscalingRunnerSetName") or "") == name
    ]


def scan_credential_users(projection: Projection, namespace: str, name: str) -> Iterable[ObjectRef]:
    for listener in scan_items(projection, AL):
        spec = listenerobjects.spec(listener)
        if listenerobjects.ars_namespace(listener) == namespace and spec.get("githubConfigSecret") == name:
            yield ObjectRef(AL, CONTROLLER_NS, str(listener["metadata"]["name"]))
    for scale_set in scan_items(projection, ARS, namespace):
        if scale_set["spec"].get("githubConfigSecret") == name:
            yield ObjectRef(ARS, namespace, str(scale_set["metadata"]["name"]))


# -- timing ----------------------------------------------------------------------------------------------


def per_call(work: Callable[[int], object], *, seconds: float, repeat: int) -> float:
    """Seconds per call of ``work(i)``: the best of ``repeat`` loops, each sized to take about ``seconds``."""
    count = 1
    while True:
        start = time.process_time()
        for i in range(count):
            work(i)
        elapsed = time.process_time() - start
        if elapsed >= seconds / 4:
            break
        count *= 4
    count = max(1, int(count * seconds / elapsed))
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for i in range(count):
            work(i)
        best = min(best, (time.process_time() - start) / count)
    return best


def lookups(n: int) -> dict[str, tuple[Callable[[int], object], Callable[[int], object]]]:
    """Per lookup: (indexed, scan), each taking a counter that picks which scale set the event is about."""
    projection = fleet(n)
    bare = fleet(n)  # folds the same changes with no index built (the write path before)

    def ref(i: int) -> tuple[str, str]:
        return f"ns-{i % n // PER_NAMESPACE}", f"set-{i % n}"

    def secret_change(i: int) -> mapping.Change:
        namespace, _ = ref(i)
        secret = {"kind": "Secret", "metadata": _meta(f"creds-{i % n}", namespace)}
        return mapping.Change("Secret", namespace, f"creds-{i % n}", old=secret, new=secret)

    def check(i: int) -> None:
        assert declared.referrers(
            projection, listenerobjects.LISTENERS_BY_SCALE_SET, *ref(i)
        ) == scan_listeners_of(projection, *ref(i))
        change = secret_change(i)
        users = list(scan_credential_users(projection, change.namespace, change.name))
        assert mapping.keys_for(change, projection) == users and len(users) == 2
        assert projection.items(ARS, ref(i)[0]) == scan_items(projection, ARS, ref(i)[0])

    for i in range(0, n, max(1, n // 10)):
        check(i)
    projection.items("Pod")  # listed once, as a watcher's start does

    def churn(into: Projection, i: int) -> None:
        pod = {"kind": "Pod", "metadata": _meta(f"runner-{i}", CONTROLLER_NS)}
        into.apply(observed("ADDED", "Pod", pod))
        into.apply(observed("DELETED", "Pod", pod))

    return {
        "a scale set's listeners (each ARS event and decision)": (
            lambda i: declared.referrers(projection, listenerobjects.LISTENERS_BY_SCALE_SET, *ref(i)),
            lambda i: scan_listeners_of(projection, *ref(i)),
        ),
        "a Secret's credential users (each Secret event)": (
            lambda i: mapping.keys_for(secret_change(i), projection),
            lambda i: list(scan_credential_users(projection, *ref(i)[:1], f"creds-{i % n}")),
        ),
        "items(ARS, namespace) (10 in it)": (
            lambda i: projection.items(ARS, ref(i)[0]),
            lambda i: scan_items(projection, ARS, ref(i)[0]),
        ),
        "fold a listener update (index upkeep)": (
            lambda i: projection.apply(observed("MODIFIED", AL, listener(i % n, i))),
            lambda i: bare.apply(observed("MODIFIED", AL, listener(i % n, i))),
        ),
        "fold a Pod create + delete (index upkeep)": (
            lambda i: churn(projection, i),
            lambda i: churn(bare, i),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3)
    args = parser.parse_args()

    rows: dict[str, list[tuple[int, float, float]]] = {}
    for n in args.sizes:
        for name, (indexed, scan) in lookups(n).items():
            fast = per_call(indexed, seconds=args.seconds, repeat=args.repeat)
            slow = per_call(scan, seconds=args.seconds, repeat=args.repeat)
            rows.setdefault(name, []).append((n, fast, slow))

    print("| lookup | scale sets | indexed µs | scan µs | scan / indexed | indexed, flat (× smallest N) |")
    print("|---|---|---|---|---|---|")
    for name, measured in rows.items():
        smallest = measured[0][1]
        for n, fast, slow in measured:
            print(
                f"| {name} | {n:,} | {fast * 1e6:,.2f} | {slow * 1e6:,.2f} | {slow / fast:,.2f} "
                f"| {fast / smallest:.2f} |"
            )


if __name__ == "__main__":
    main()
