"""Liveness and readiness.

``/healthz`` answers 200 while the process serves requests, and 503 once the journal's writer stopped
for good (``writer_failure``: its task failed, or another writer wrote the file behind its back), which
only a restart recovers: the kubelet's liveness probe then restarts the process. ``/readyz`` answers
200 when the journal takes appends and every watch has listed its kind, else 503; either way the body
states each part and the role (``leader``, ``standby``, or ``none`` with no controller beside the API),
and ``journalError`` why the journal takes no appends when it does not (closed, or its writes fail: a
full disk). A journal whose last write failed is not writable until a write commits again.

``JournalReadiness`` is what an API over a journal alone reports: the journal's ``append_refusal`` (asked
without appending), and the kinds the projection has seen a ``sync`` record for standing in for the
watches.
"""

from __future__ import annotations

from api.phases import Kind
from api.ports import JournalView, ReadinessReport


class JournalReadiness:
    def __init__(self, journal: JournalView) -> None:
        self._journal = journal

    def report(self) -> ReadinessReport:
        synced = all(self._journal.projection.is_synced(kind) for kind in Kind)
        failure = self._journal.append_refusal
        return ReadinessReport(
            journal_writable=failure is None,
            synced=synced,
            role="none",
            journal_error=failure,
            writer_failure=self._journal.writer_failure,
        )
