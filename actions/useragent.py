"""The User-Agent every request carries: a JSON object that identifies arcsm (spec §6.2 step 4).

    {"system":"arcsm","version":"0.1.0","commit_sha":"…","scale_set_id":7,"subsystem":"listener",
     "build_version":"0.1.0","build_commit_sha":"…","kind":"scaleset"}

``system``, ``version``, ``commit_sha``, ``scale_set_id`` and ``subsystem`` describe the caller (the
controller or the listener); ``build_version`` and ``build_commit_sha`` describe this client, which is
part of arcsm, so they are arcsm's own version and the caller's commit. The keys come in the order Go's
encoder writes them, compact, so the header reads the same as the upstream client's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Final

SYSTEM: Final = "arcsm"
KIND: Final = "scaleset"


@cache
def arcsm_version() -> str:
    try:
        return metadata.version("arcsm")
    except metadata.PackageNotFoundError:
        return "dev"


@dataclass(frozen=True)
class SystemInfo:
    subsystem: str = ""
    scale_set_id: int = 0
    commit_sha: str = ""
    version: str = field(default_factory=arcsm_version)
    system: str = SYSTEM


def user_agent(info: SystemInfo) -> str:
    return json.dumps(
        {
            "system": info.system,
            "version": info.version,
            "commit_sha": info.commit_sha,
            "scale_set_id": info.scale_set_id,
            "subsystem": info.subsystem,
            "build_version": arcsm_version(),
            "build_commit_sha": info.commit_sha,
            "kind": KIND,
        },
        separators=(",", ":"),
    )
