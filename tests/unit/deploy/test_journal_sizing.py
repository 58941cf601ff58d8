"""The default install bounds its journal well inside the journal's volume.

Read from the chart's default rendering (``deploy/arcsm.yaml``, which ``test_chart`` keeps current): the
claim's storage request and the controller's ``--journal-retain-bytes``. The bound covers the whole
footprint on disk (``tests/e2e/store/test_journal_footprint.py`` holds it under sustained appends); with
the write-ahead log's allowance it must leave a tenth of the volume free. The chart's default is also the
command's own, so a journal run by hand is bounded as an installed one is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

import deploy
from controller.commands import runflags
from store import retention
from store.settings import JournalSettings

RENDERED = Path(deploy.__file__).parent / "arcsm.yaml"


def documents() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(RENDERED.read_text()) if doc]


def test_the_default_size_bound_leaves_a_tenth_of_the_journal_volume_free() -> None:
    docs = documents()
    (claim,) = [doc for doc in docs if doc["kind"] == "PersistentVolumeClaim"]
    volume = runflags.size(claim["spec"]["resources"]["requests"]["storage"], "storage")
    (controller,) = [doc for doc in docs if doc["kind"] in ("Deployment", "StatefulSet")]
    (container,) = [c for c in controller["spec"]["template"]["spec"]["containers"] if c["name"] == "arcsm"]
    flags = dict(arg.removeprefix("--").split("=", 1) for arg in container["args"] if "=" in arg)
    bound = runflags.size(flags["journal-retain-bytes"], "--journal-retain-bytes")
    assert volume is not None and bound is not None, "the default install must bound its journal"
    assert bound + retention.wal_allowance(bound) <= 0.9 * volume
    assert bound == JournalSettings().retention.max_bytes
