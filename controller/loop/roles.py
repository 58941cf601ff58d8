"""The part this replica plays now: ``leader`` while a Reconciler decides, else ``standby``.

``running`` starts a Reconciler for each term of leadership (one term, for the whole run, without leader
election) and tells ``Role``; the HTTP API reads the role for ``/readyz`` and the loop's counters for
``/metrics``. The counters add up across terms, so they only ever grow.
"""

from __future__ import annotations

from controller.loop.reconciling import Reconciler

LEADER = "leader"
STANDBY = "standby"


class Role:
    def __init__(self) -> None:
        self.reconciler: Reconciler | None = None
        self._reconciles = 0
        self._decisions = 0

    @property
    def name(self) -> str:
        return LEADER if self.reconciler is not None else STANDBY

    def lead(self, reconciler: Reconciler) -> None:
        self.reconciler = reconciler

    def stand_by(self) -> None:
        if self.reconciler is not None:
            self._reconciles += self.reconciler.reconciles
            self._decisions += self.reconciler.decisions
        self.reconciler = None

    @property
    def reconciles(self) -> int:
        current = self.reconciler
        return self._reconciles + (current.reconciles if current is not None else 0)

    @property
    def decisions(self) -> int:
        current = self.reconciler
        return self._decisions + (current.decisions if current is not None else 0)
