"""The runtime loop (DESIGN.md "The loop" and "Replay"): the fold over the journal's tail (``folding``,
``mapping``, ``snapshotting``), the per-kind registries derived from the machines' declarations
(``declared``), the work queue (``queueing``, ``wakeups``), the reconcile loop that decides and records
(``reconciling``), timers (``timing``), leader election and its terms (``leading``, ``terms``, ``roles``),
the composition root (``running``) with its supervised tasks, configuration (``settings``,
``settingsrecords``, ``servedschemas``, ``kubeconfigs``), metrics (``runtimemetrics``,
``requestcounting``), log keys and journal outages, the HTTP API's view of the controller (``httpapi``),
and replay (``replaying``, ``replaydiffs``).

Rule: of the controller it imports only the executor (to hand it effects); never the command line, the
installation or the emulated world. A decision reads its snapshot from the journal alone.
"""
