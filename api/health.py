"""Liveness and readiness.

``/healthz`` answers while the process serves requests. ``/readyz`` answers 200 when the journal takes
appends and every watch has listed its kind, else 503; either way the body states each part and the
role (``leader``, ``standby``, or ``none`` with no controller beside the API).

``JournalReadiness`` is what an API over a journal alone reports: the journal probe, and the kinds the
projection has seen a ``sync`` record for standing in for the watches.
"""

from __future__ import annotations

from api.phases import Kind
from api.ports import JournalView, ReadinessReport
from store.errors import JournalError


def journal_writable(journal: JournalView) -> bool:
    """Whether the journal still takes appends: submitting no records checks it and writes nothing."""
    try:
        journal.submit([])
    except JournalError:
        return False
    return True


class JournalReadiness:
    def __init__(self, journal: JournalView) -> None:
        self._journal = journal

    def report(self) -> ReadinessReport:
        synced = all(self._journal.projection.is_synced(kind) for kind in Kind)
        return ReadinessReport(journal_writable=journal_writable(self._journal), synced=synced, role="none")
