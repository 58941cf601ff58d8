"""What the watchers need of the projection, as a small port; what they need of the journal is
``store.ports.JournalWriter`` (they only append).

``store.journal.Journal``'s ``projection`` satisfies ``Known``; tests may pass anything else that does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class Known(Protocol):
    def items(self, kind: str, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        """The latest journaled object of every live (not deleted) object of ``kind`` in ``namespace``
        (None: every namespace), as the Kubernetes JSON last observed."""
        ...
