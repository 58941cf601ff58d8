"""List+watch loops per kind. They only append ``observed`` (and ``sync``) records to the journal; they
never decide, and they import nothing of the project but ``store``, of the machines' package the table of
ARC kinds (``statemachines.kinds``) and the JSON helpers (``statemachines.jsonvalues``), and the Kubernetes
error model (``kube``): an import-linter contract in ``pyproject.toml`` holds them to it.

    supervising.Watchers(api=..., journal=journal, known=journal.projection, settings=WatchSettings(...))

Modules: ``kinds`` (the watched kinds), ``settings``, ``ports`` (what they need of the projection; of the
journal they need ``store.ports.JournalWriter``), ``objects`` (the cache of what was journaled),
``slimming`` (what is journaled of an observed object: the fields the controller reads; a Pod without its
spec), ``listing`` (lists read page by page and the diff a list reveals), ``resyncs`` (each watch's point in
the resync period), ``streams`` (watch streams to records), ``requesting`` and ``errors`` (the HTTP edge),
``retrying`` (backoff), ``watching`` (one watcher's loop), ``supervising`` (all of them).

The package exports the kinds, ports and settings; the loops (``supervising.Watchers``,
``watching.Watcher``) are imported from their modules, so reading the settings does not bring in
kubernetes_asyncio's client.
"""

from watchers.kinds import KINDS, WatchedKind
from watchers.ports import Known
from watchers.settings import Backoff, WatchSettings

__all__ = ["KINDS", "Backoff", "Known", "WatchSettings", "WatchedKind"]
