"""The read-only HTTP API over the journal: phase history, journal queries, health, metrics, timeline.

It reads the journal and never writes it. Modules, by what they hold:

* ``app`` — ``create_app(journal, *, readiness=None, stats=None)``; ``serving`` — ``ApiServer`` /
  ``serving(app, host=, port=)``, uvicorn inside a running event loop, within ``limits`` (``HttpLimits``)
  kept by ``connections`` (the accept loop, the header timeout), repeated errors summarised by
  ``summarising``; ``addresses`` — ``parse_address``;
* ``routes`` — the /api/v1 routes; ``probes`` — /healthz, /readyz, /metrics; ``pages`` — the timeline;
  ``debugging`` — /debug/stacks and /debug/profile, when asked for, over ``stacks`` (where every thread
  and task is, and a sampling profile of them);
* ``phases`` — phase history pages, from decision records and the observed phase changes between them
  (``phasehistory`` folds them; ``phaseindex`` keeps them in memory per app); ``journalfeed`` — raw
  records as served, and their event stream; ``scalesets`` — a scale set as the projection shows it now;
  ``fleet`` — every scale set with what to check first, paged; ``runners`` — a scale set's runners,
  alive or deleted, paged;
* ``models`` — the JSON shapes (the contract); ``etags``, ``errors``, ``health``, ``metrics``;
* ``ports`` — what the API reads (the journal, readiness, the controller's counters). A journal file read
  beside the controller that holds it (``arcsm history``) is ``store.readonly.ReadOnlyJournal``.
"""
