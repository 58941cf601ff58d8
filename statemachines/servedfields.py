"""Decisions written to the schema the cluster serves: no status write carries a field it would prune.

arcsm's CRDs carry ``status.conditions`` on every kind; upstream's, with only the three new fields added,
do not, and the API server drops the list from every write (structural pruning). A machine that states a
condition compares it with the observed status, so on such a cluster it would find the list missing and
send it again on every pass: two status patches per no-op edit where arcsm's CRDs give none (I8.1).

``Settings.conditions_pruned`` names the kinds whose served schema drops the list (the controller reads
it from the CRDs at start; it is journaled with the machine settings, so a replay decides the same).
``keeping_served_fields`` wraps a machine's ``decide``: for those kinds, a status merge patch loses its
``conditions`` (and goes entirely when nothing else is left), so a settled object writes nothing.

The fallback, for those kinds: conditions are neither written nor read, so problems reach the user as
Warning Events (and the controller's error log) only. A machine emits a problem's Warning when the
observed condition does not say it yet, which without conditions would be every pass; here a Warning a
dropped condition states is emitted once per object and reason: it goes when the executor has already
recorded that Event for the object. So a problem that goes away and comes back with the same reason is not
reported again (nothing records that it went away). Phase-change Events (they carry a trigger) are kept.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace

from statemachines import outcomes
from statemachines.decisions import Decision
from statemachines.effects import Effect, EmitEvent, MergePatch
from statemachines.snapshots import Snapshot

CONDITIONS = "conditions"


def without_pruned(decision: Decision, snapshot: Snapshot) -> Decision:
    """``decision`` without the condition writes (and repeated condition Warnings) the schema prunes."""
    pruned = frozenset(snapshot.settings.conditions_pruned)
    if not pruned:
        return decision
    kept: list[Effect] = []
    reasons: set[str] = set()
    for effect in decision.effects:
        if isinstance(effect, MergePatch) and effect.subresource == "status" and effect.target.kind in pruned:
            status = effect.patch.get("status")
            if isinstance(status, Mapping) and CONDITIONS in status:
                reasons.update(_reasons(status[CONDITIONS]))
                rest = {k: v for k, v in status.items() if k != CONDITIONS}
                if not rest:
                    continue
                effect = replace(effect, patch={**effect.patch, "status": rest})
        kept.append(effect)
    kept = [e for e in kept if not _repeated_warning(e, reasons, pruned, snapshot)]
    if tuple(kept) == decision.effects:
        return decision
    return replace(decision, effects=tuple(kept))


def _reasons(entries: object) -> set[str]:
    if not isinstance(entries, list):
        return set()
    return {str(c["reason"]) for c in entries if isinstance(c, Mapping) and c.get("reason")}


def _repeated_warning(effect: Effect, reasons: set[str], pruned: frozenset[str], snapshot: Snapshot) -> bool:
    if not isinstance(effect, EmitEvent) or effect.type != "Warning" or effect.trigger:
        return False
    if effect.target.kind not in pruned or effect.reason not in reasons:
        return False
    emitted = outcomes.of(snapshot, effect)
    return emitted is not None and emitted.ok


def keeping_served_fields(decide: Callable[[Snapshot], Decision]) -> Callable[[Snapshot], Decision]:
    """``decide``, its decision passed through ``without_pruned``."""

    @functools.wraps(decide)
    def decide_served(snapshot: Snapshot) -> Decision:
        return without_pruned(decide(snapshot), snapshot)

    return decide_served
