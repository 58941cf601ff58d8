"""The arithmetic and the status of a Deployment's rollout (kube-controller-manager's
``deployment_util.go`` and ``progress.go``), for ``sim.deployments``.

Pure functions over stored Deployments and ReplicaSets; ``now`` comes in as a formatted timestamp or
a ``datetime``. Nothing here writes.

* ``scaled_value`` - an int-or-percent of a total, rounded up (``maxSurge``) or down
  (``maxUnavailable``), as ``GetScaledValueFromIntOrPercent``; ``fenceposts`` resolves both and turns
  0/0 into 0/1 as ``ResolveFenceposts`` does.
* ``new_set_replicas``, ``saturated``, ``proportion`` - how far the new set may grow, and each set's
  share of a scaling event (``GetProportion``, rounding half away from zero).
* ``set_condition`` / ``remove_condition`` - ``SetDeploymentCondition``: a condition with the same
  status and reason is left alone, one whose reason changes keeps its ``lastTransitionTime``, and the
  condition written moves to the end of the list.
* ``calculate_status`` and ``rollout_status`` - ``calculateStatus`` (counts and the Available
  condition) and ``syncRolloutStatus`` (the Progressing condition: NewReplicaSetAvailable once
  complete, ReplicaSetUpdated on progress, ProgressDeadlineExceeded once the deadline has passed
  without any, and the ReplicaFailure condition copied from the sets).
* ``omit_empty`` - a status as Go encodes it (zero counts and empty lists left out).

Known limits: ``terminatingReplicas`` (alpha in 1.34, DeploymentReplicaSetTerminatingReplicas) is not
counted; ``maxSurge``/``maxUnavailable`` strings that are not percentages raise ``ValueError`` (the API
server's validation keeps them out).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from sim import podcontrol
from sim.store import Obj
from sim.workqueue import meta

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"

# Condition reasons (deployment_util.go).
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
FAILED_RS_CREATE = "ReplicaSetCreateError"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"

Status = dict[str, Any]


# -- sizes ------------------------------------------------------------------------------------------------


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an int as is, ``"N%"`` of ``total`` rounded up or down."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage ({text})")
    percent = int(text[:-1])
    return -(-percent * total // 100) if round_up else percent * total // 100


def replicas(obj: Obj | None) -> int:
    return int(((obj or {}).get("spec") or {}).get("replicas") or 0)


def strategy(d: Obj) -> dict[str, Any]:
    return dict((d.get("spec") or {}).get("strategy") or {})


def is_rolling(d: Obj) -> bool:
    return strategy(d).get("type") == "RollingUpdate"


def fenceposts(d: Obj) -> tuple[int, int]:
    """``ResolveFenceposts``: (maxSurge, maxUnavailable) of a rolling Deployment."""
    rolling = strategy(d).get("rollingUpdate") or {}
    desired = replicas(d)
    surge = scaled_value(rolling.get("maxSurge", 0), desired, round_up=True)
    unavailable = scaled_value(rolling.get("maxUnavailable", 0), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling(d) or replicas(d) == 0:
        return 0
    return min(fenceposts(d)[1], replicas(d))


def revision(rs: Obj) -> int:
    try:
        return int((meta(rs).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def annotation_int(rs: Obj, key: str) -> int | None:
    try:
        return int((meta(rs).get("annotations") or {})[key])
    except (KeyError, ValueError):
        return None


def without_hash(template: Any) -> Any:
    """A template without the ``pod-template-hash`` label (what ``EqualIgnoreHash`` compares)."""
    if not isinstance(template, dict):
        return template
    tmeta = dict(template.get("metadata") or {})
    tmeta["labels"] = {k: v for k, v in (tmeta.get("labels") or {}).items() if k != HASH_LABEL}
    return {**template, "metadata": tmeta}


def same_template(rs: Obj, d: Obj) -> bool:
    """``EqualIgnoreHash`` of the set's and the Deployment's pod templates."""
    return podcontrol.semantically_equal(
        without_hash((rs.get("spec") or {}).get("template")),
        without_hash((d.get("spec") or {}).get("template")),
    )


def sum_of(sets: list[Obj], field: str) -> int:
    """A status count (``replicas``, ``readyReplicas``, ``availableReplicas``) summed over sets."""
    return sum(int((rs.get("status") or {}).get(field) or 0) for rs in sets)


def spec_sum(sets: list[Obj]) -> int:
    """``GetReplicaCountForReplicaSets``."""
    return sum(replicas(rs) for rs in sets)


def active(sets: list[Obj]) -> list[Obj]:
    """``FilterActiveReplicaSets``: the sets with replicas to run."""
    return [rs for rs in sets if replicas(rs) > 0]


def new_set_replicas(d: Obj, all_sets: list[Obj], new: Obj) -> int:
    """``NewRSNewReplicas``: the new set's size this step (Recreate: all at once)."""
    if not is_rolling(d):
        return replicas(d)
    max_total = replicas(d) + max_surge(d)
    current = spec_sum(all_sets)
    if current >= max_total:
        return replicas(new)
    return replicas(new) + min(max_total - current, replicas(d) - replicas(new))


def saturated(d: Obj, rs: Obj) -> bool:
    """``IsSaturated``: the set runs all the Deployment's replicas, all available."""
    desired = replicas(d)
    return (
        replicas(rs) == desired
        and annotation_int(rs, DESIRED_REPLICAS) == desired
        and int((rs.get("status") or {}).get("availableReplicas") or 0) == desired
    )


def proportion(d: Obj, rs: Obj, to_add: int, added: int) -> int:
    """``GetProportion``: this set's share of the replicas to add (negative: to remove)."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    if replicas(d) == 0:
        fraction = -replicas(rs)
    else:
        total = replicas(d) + max_surge(d)
        annotated = annotation_int(rs, MAX_REPLICAS)
        if annotated is None:
            annotated = int((d.get("status") or {}).get("replicas") or 0)
        # integer.RoundToInt32: half away from zero.
        fraction = math.floor(replicas(rs) * total / annotated + 0.5) - replicas(rs) if annotated else 0
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


# -- conditions and status ----------------------------------------------------------------------------


def condition(status: Status, ctype: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == ctype), None)


def set_condition(
    status: Status,
    ctype: str,
    value: str,
    reason: str,
    message: str,
    now: str,
    *,
    transition: str | None = None,
) -> None:
    """``SetDeploymentCondition`` (``transition``: the lastTransitionTime of a new condition)."""
    current = condition(status, ctype)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return
    kept = current is not None and current.get("status") == value
    new = {
        "type": ctype,
        "status": value,
        "lastUpdateTime": now,
        "lastTransitionTime": current["lastTransitionTime"]
        if current is not None and kept
        else transition or now,
        "reason": reason,
        "message": message,
    }
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != ctype] + [new]


def remove_condition(status: Status, ctype: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != ctype]


def omit_empty(status: Status) -> Status:
    """A status as Go's ``omitempty`` encodes it (``collisionCount`` is a pointer: 0 is kept)."""
    return {k: v for k, v in status.items() if v or (k == "collisionCount" and v is not None)}


def calculate_status(d: Obj, new: Obj | None, old: list[Obj], now: str) -> Status:
    """``calculateStatus``: the counts over all sets and the Available condition."""
    everything = [*old, *([new] if new is not None else [])]
    available = sum_of(everything, "availableReplicas")
    current: Status = dict(d.get("status") or {})
    status: Status = {
        "observedGeneration": meta(d).get("generation"),
        "replicas": sum_of(everything, "replicas"),
        "updatedReplicas": sum_of([new], "replicas") if new is not None else 0,
        "readyReplicas": sum_of(everything, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(spec_sum(everything) - available, 0),
        "conditions": [dict(c) for c in current.get("conditions") or []],
    }
    if current.get("collisionCount") is not None:
        status["collisionCount"] = current["collisionCount"]
    if available >= replicas(d) - max_unavailable(d):
        set_condition(status, "Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now)
    else:
        message = "Deployment does not have minimum availability."
        set_condition(status, "Available", "False", MIN_UNAVAILABLE, message, now)
    return status


def complete(d: Obj, status: Status) -> bool:
    """``DeploymentComplete``: every replica updated and available, none old, the spec observed."""
    want = replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(meta(d).get("generation") or 0)
    )


def progressing(old: Status, new: Status) -> bool:
    """``DeploymentProgressing``: more updated, ready or available pods, or fewer old ones."""

    def count(status: Status, field: str) -> int:
        return int(status.get(field) or 0)

    old_old = count(old, "replicas") - count(old, "updatedReplicas")
    new_old = count(new, "replicas") - count(new, "updatedReplicas")
    return (
        count(new, "updatedReplicas") > count(old, "updatedReplicas")
        or new_old < old_old
        or count(new, "readyReplicas") > count(old, "readyReplicas")
        or count(new, "availableReplicas") > count(old, "availableReplicas")
    )


def deadline(d: Obj) -> int | None:
    value = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return None if value is None or value == 2**31 - 1 else int(value)


def timed_out(d: Obj, status: Status, now: datetime) -> bool:
    """``DeploymentTimedOut``: the Progressing condition was last updated longer ago than the deadline."""
    seconds = deadline(d)
    cond = condition(status, "Progressing")
    if seconds is None or cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = podcontrol.parse_time(cond.get("lastUpdateTime"))
    return since is not None and since + timedelta(seconds=seconds) < now


def rollout_status(d: Obj, new: Obj | None, old: list[Obj], now: datetime, stamp: str) -> Status:
    """``syncRolloutStatus``: ``calculate_status`` plus the Progressing and ReplicaFailure conditions."""
    old_status: Status = dict(d.get("status") or {})
    status = calculate_status(d, new, old, stamp)
    if deadline(d) is None:
        remove_condition(status, "Progressing")
    current = condition(old_status, "Progressing")
    settled = (
        status["replicas"] == status["updatedReplicas"]
        and current is not None
        and current.get("reason") == NEW_RS_AVAILABLE
    )
    subject = f'ReplicaSet "{meta(new)["name"]}"' if new is not None else f'Deployment "{meta(d)["name"]}"'
    if deadline(d) is not None and not settled:
        if complete(d, status):
            message = f"{subject} has successfully progressed."
            set_condition(status, "Progressing", "True", NEW_RS_AVAILABLE, message, stamp)
        elif progressing(old_status, status):
            # Progress refreshes lastUpdateTime even with the same reason; a True condition keeps its
            # lastTransitionTime.
            transition = (
                current["lastTransitionTime"] if current and current.get("status") == "True" else None
            )
            remove_condition(status, "Progressing")
            message = f"{subject} is progressing."
            set_condition(status, "Progressing", "True", RS_UPDATED, message, stamp, transition=transition)
        elif timed_out(d, status, now):
            message = f"{subject} has timed out progressing."
            set_condition(status, "Progressing", "False", TIMED_OUT, message, stamp)
    failures = [
        c
        for rs in ([new] if new is not None else []) + old
        for c in (rs.get("status") or {}).get("conditions") or []
        if c.get("type") == "ReplicaFailure"
    ]
    if failures:
        f = failures[0]
        since = str(f.get("lastTransitionTime") or stamp)
        set_condition(
            status,
            "ReplicaFailure",
            f["status"],
            f.get("reason", ""),
            f.get("message", ""),
            since,
            transition=since,
        )
    else:
        remove_condition(status, "ReplicaFailure")
    return status


def progress_check_in(d: Obj, status: Status, now: datetime) -> float | None:
    """``requeueStuckDeployment``: seconds until the deadline of a rollout without progress would pass
    (None when there is nothing to check)."""
    seconds = deadline(d)
    cond = condition(dict(d.get("status") or {}), "Progressing")
    if seconds is None or cond is None or complete(d, status) or cond.get("reason") == TIMED_OUT:
        return None
    since = podcontrol.parse_time(cond.get("lastUpdateTime"))
    if since is None:
        return None
    return max((since + timedelta(seconds=seconds) - now).total_seconds(), 0.0)


def surplus_sets(d: Obj, old: list[Obj]) -> list[Obj]:
    """``cleanupDeployment``: the old sets to delete, beyond ``revisionHistoryLimit``, oldest revision
    first, skipping any that still has (or may still have) pods."""
    limit = (d.get("spec") or {}).get("revisionHistoryLimit")
    if limit is None or limit == 2**31 - 1:
        return []
    alive = [rs for rs in old if not meta(rs).get("deletionTimestamp")]
    surplus = len(alive) - int(limit)
    if surplus <= 0:
        return []
    alive.sort(key=lambda rs: (revision(rs), *podcontrol.creation_key(rs)))
    out = []
    for rs in alive[:surplus]:
        status = rs.get("status") or {}
        if (
            int(status.get("replicas") or 0) == 0
            and replicas(rs) == 0
            and int(meta(rs).get("generation") or 0) <= int(status.get("observedGeneration") or 0)
        ):
            out.append(rs)
    return out
