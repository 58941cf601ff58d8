"""Upstream's CRDs as a user who points arcsm at an ARC cluster has them: ARC's four CRDs plus the three
new fields arcsm needs (``observedGeneration``, ``actionableRevision``, ``appliedActionableRevision``).

They are derived from arcsm's own (``deploy/charts/arcsm/crds``), which are ARC's plus those three fields
plus ``status.conditions`` and its ``Ready`` printer column, and the EphemeralRunner's
``status.jobRunnerId``: taking those out leaves upstream's schemas with the three fields, so the API
server prunes ``status.conditions`` (and the listener's ``jobRunnerId``) from every write.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from sim.world import load_crds

# Status fields of arcsm's own beyond the conditions, by kind.
ARCSM_ONLY = {"EphemeralRunner": "jobRunnerId"}


def without_conditions(crd: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(crd)
    for version in out["spec"]["versions"]:
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]
        status["properties"].pop("conditions")
        status["properties"].pop(ARCSM_ONLY.get(crd["spec"]["names"]["kind"], ""), None)
        columns = [c for c in version.get("additionalPrinterColumns") or [] if c["name"] != "Ready"]
        version["additionalPrinterColumns"] = columns
    return out


def write(directory: Path) -> Path:
    """Write upstream's CRDs (with the three new fields) into ``directory``, one file each; return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for crd in load_crds():
        path = directory / f"{crd['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(without_conditions(crd), sort_keys=False))
    return directory
