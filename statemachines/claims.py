"""One AutoscalingRunnerSet per Actions scale set: who holds it when two name the same one.

The Actions service keys a scale set by its runner group and name within the scope of a config URL (spec
§6.5), and the scale set step finds one by that key before creating one (§2.1 step 6: GetRunnerScaleSet,
then CreateRunnerScaleSet, as upstream does). So two AutoscalingRunnerSets whose specs name the same config
URL, runner group and ``runnerScaleSetName`` (in one namespace or two) would find the same scale set and
annotate the same id. Upstream lets them share it: the second listener's session is refused (409) for
ever, and deleting either deletes the scale set the other still runs on. Here one of them holds it:

* A scale set's **claim** is ``host/scope | runner group | name`` of its spec, compared as GitHub compares
  them (case-insensitively; no runner group is the default group; no ``runnerScaleSetName`` is the object's
  name). ``CLAIMS`` files every scale set under its claim, so a snapshot carries its first **peer** (another
  scale set of the same claim, ``rank`` first) and a change of one wakes the others.
* The **owner** of a claim is, by ``rank``: one that holds a scale set id (so a running scale set is never
  displaced by a newcomer, whatever their ages), then the oldest (creationTimestamp), then by
  namespace/name. Being deleted does not give the claim up: it passes on once the owner is gone, and its
  scale set with it when it was the last to use it.
* Every other claimant is **refused** (``refusal``): ``ConfigurationValid`` False with
  ``ScaleSetNameTaken`` naming the owner, before anything is asked of the Actions service. One that holds
  the owner's scale set id already (two that were sharing before this rule) drops the id, its listener and
  its runners, and leaves the scale set to the owner.
* Deleting a scale set deletes its Actions scale set only when no other scale set that is not being deleted
  holds the same id (``kept_for``); otherwise it only drops its own id annotation.

Pure: reads the snapshot and the objects the lookup files.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from statemachines import arsconditions, declaring, desired, kinds, naming
from statemachines.arsconditions import Problem
from statemachines.jsonvalues import JsonObject, section
from statemachines.snapshots import Snapshot

PEER = "claim_peer"
DEFAULT_GROUP = "default"
_CLAIM = "actions-scale-set"


def scale_set_name(obj: JsonObject) -> str:
    """The scale set name the spec asks for: ``spec.runnerScaleSetName``, else the object's name."""
    return str(section(obj, "spec").get("runnerScaleSetName") or section(obj, "metadata").get("name") or "")


def runner_group(obj: JsonObject) -> str:
    return str(section(obj, "spec").get("runnerGroup") or "") or DEFAULT_GROUP


def claim(obj: JsonObject) -> str | None:
    """The claim of a scale set (see the module docstring); None when its config URL names no scope."""
    url = str(section(obj, "spec").get("githubConfigUrl") or "")
    try:
        scope = naming.url_scope(url)
    except naming.InvalidConfigUrl:
        return None
    name = scale_set_name(obj)
    if not name:
        return None
    where = "/".join((urlsplit(url).netloc, scope["enterprise"], scope["organization"], scope["repository"]))
    return f"{where}|{runner_group(obj)}|{name}".lower()


def _claim_keys(key: declaring.ObjectKey, obj: JsonObject) -> Iterable[declaring.NameRef]:
    found = claim(obj)
    if found is not None:
        yield _CLAIM, found


CLAIMS = declaring.ReverseLookup("scale sets by the Actions scale set they claim", kinds.ARS, _claim_keys)


def _holds_id(obj: JsonObject) -> bool:
    held = desired.scale_set_id(obj)
    return held is not None and held > 0


def rank(obj: JsonObject) -> tuple[object, ...]:
    """The order of the claimants of one claim: the first is its owner."""
    meta = section(obj, "metadata")
    created = str(meta.get("creationTimestamp") or "")
    return (not _holds_id(obj), created, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def where(obj: JsonObject) -> str:
    meta = section(obj, "metadata")
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def owner(s: Snapshot) -> JsonObject | None:
    """The scale set that holds the claim of ``s`` when it is not ``s``; None when ``s`` holds it."""
    peer = s.get(PEER)
    if peer is None or s.obj is None or claim(peer) != claim(s.obj):
        return None
    return peer if rank(peer) < rank(s.obj) else None


def refusal(s: Snapshot) -> Problem | None:
    """The problem of a scale set whose claim another one holds, naming that one; None when it may go on."""
    first = owner(s)
    if first is None or s.obj is None:
        return None
    group = str(section(s.obj, "spec").get("runnerGroup") or "") or "the default runner group"
    url = str(section(s.obj, "spec").get("githubConfigUrl") or "")
    message = (
        f"the Actions scale set {scale_set_name(s.obj)!r} in {group} of {url} is already used by the "
        f"AutoscalingRunnerSet {where(first)}; set spec.runnerScaleSetName to a name of its own, or delete "
        f"{where(first)}"
    )
    return Problem(arsconditions.Reason.SCALE_SET_NAME_TAKEN, message)


def kept_for(s: Snapshot) -> JsonObject | None:
    """The scale set, not being deleted, that still uses the Actions scale set of ``s`` (same claim, same
    id); None when deleting ``s`` may delete it."""
    peer, held = s.get(PEER), desired.scale_set_id(s.obj or {})
    if peer is None or held is None or section(peer, "metadata").get("deletionTimestamp"):
        return None
    return peer if desired.scale_set_id(peer) == held else None
