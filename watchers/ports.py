"""What the watchers need from the journal, as two small ports.

``store.journal.Journal`` satisfies ``Appender`` and its ``projection`` satisfies ``Known``; tests may pass
anything else that does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from store.records import Record


class Appender(Protocol):
    async def append(self, records: Sequence[Record]) -> Sequence[Record]:
        """Append ``records`` in order, durably, in one commit; return them with their ``seq``.

        Raises if nothing was appended; then the watcher appends the same facts again later.
        """
        ...


class Known(Protocol):
    def items(self, kind: str, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        """The latest journaled object of every live (not deleted) object of ``kind`` in ``namespace``
        (None: every namespace), as the Kubernetes JSON last observed."""
        ...
