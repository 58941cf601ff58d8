"""The read-only HTTP API over the journal: phase history, journal queries, health, metrics, timeline.

It reads the journal and never writes it. Modules, by what they hold:

* ``app`` — ``create_app(journal, *, readiness=None, stats=None)``; ``serving`` — ``ApiServer`` /
  ``serving(app, host=, port=)``, uvicorn inside a running event loop, and ``parse_address``;
* ``routes`` — the /api/v1 routes; ``probes`` — /healthz, /readyz, /metrics; ``pages`` — the timeline;
* ``phases`` — phase transitions read from decision records, paged; ``records`` — raw records as served,
  and their event stream; ``scalesets`` — a scale set as the projection shows it now;
* ``models`` — the JSON shapes (the contract); ``etags``, ``errors``, ``health``, ``metrics``;
* ``ports`` — what the API reads (the journal, readiness, the controller's counters);
  ``readonly`` — a journal file read beside the controller that holds it (``arcsm history``).
"""
