"""Reading the results of earlier effects (``Snapshot.results``), the one way their outcomes reach a decision.

The executor appends an ``effect_result`` record for every effect it performs; the snapshot builder hands
the latest one per effect key to the subject's next decisions, as the record body plus the record's
``at`` (the journal time it was appended, RFC 3339). This module reads each as an
``effectresults.EffectResult`` (the body's shape and the one notion of failure are documented there),
whose error ``CLASS`` is, for a Kubernetes write, the API status ``reason`` (``Invalid``,
``Forbidden``, ``AlreadyExists``, ``NotFound``, ``Conflict``, ...), and for an Actions call the
service's verdict (``RunnerExists``, ``RunnerNotFound``, ``JobStillRunning``, or the client's error
class name for anything else), or ``Interrupted`` for an effect a controller started, stopped during,
and did not perform again on start (its outcome is unknown).

Facts a decision reads: ``runnerId`` and ``runnerName`` from ``CreateJitConfigSecret``; ``runner``
(``{"id", "name", "runnerScaleSetId"}`` or ``null``) from ``GetRunnerByName``; ``runnerGroup``
(``{"id", "name"}``) from ``GetRunnerGroupByName``; ``scaleSet`` (the service's scale set JSON, or ``null``
when none was found) from ``GetRunnerScaleSet``, ``CreateRunnerScaleSet`` and ``UpdateRunnerScaleSet``.

``at`` is what makes a result usable in a replay: "retry 30 s after the quota error" is measured from the
result's own time with ``Snapshot.now``, never from a clock. A result without ``at`` is undated: a window
measured from it has always elapsed.
"""

from __future__ import annotations

from statemachines.effectresults import EffectResult
from statemachines.effectresults import Failure as Failure  # the classes decisions branch on, read here
from statemachines.effects import DeleteObject, Effect, ObjectRef
from statemachines.snapshots import Snapshot


def of(snapshot: Snapshot, effect: Effect) -> EffectResult | None:
    """The latest result of ``effect`` (matched by its key), or None when it has none yet."""
    body = snapshot.results.get(effect.key)
    return None if body is None else EffectResult.from_body(body)


def unobserved_for(snapshot: Snapshot, create: Effect, target: ObjectRef, seconds: float) -> float:
    """Seconds left to wait for an object the executor created but the watch has not shown yet.

    ``create`` made ``target``; while its success is younger than ``seconds`` and no delete of ``target``
    was recorded after it, the object exists and only its watch event is late, so a decision waits
    rather than create it again. Otherwise (0) it is gone and may be created.
    """
    created = of(snapshot, create)
    if created is None or not created.ok or created.at is None:
        return 0.0
    deleted = of(snapshot, DeleteObject(target))
    if deleted is not None and (deleted.at is None or deleted.at >= created.at):
        return 0.0
    return created.remaining(seconds, snapshot.now)
