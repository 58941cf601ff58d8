"""What a machine reads of its snapshot, held against what its declaration names.

``checked(decide, declaration)`` is ``decide`` run on a copy of the snapshot whose ``related`` records
every key it is asked for (``get``, ``[]``, ``in``, iteration: every key) and whose ``children`` records
being read at all; after the decision it raises ``UndeclaredRead`` when the machine read a related key
the declaration does not name, or read ``children`` when the declaration names none. The decision is
otherwise the one ``decide`` makes: the recording mapping and tuple hold the same objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from statemachines.decisions import Decision
from statemachines.declaring import Declaration
from statemachines.snapshots import Snapshot


class UndeclaredRead(AssertionError):
    pass


class RecordingRelated(Mapping[str, Any]):
    def __init__(self, related: Mapping[str, Any], reads: set[str]) -> None:
        self._related = related
        self._reads = reads

    def __getitem__(self, key: str) -> Any:
        self._reads.add(key)
        return self._related[key]

    def __contains__(self, key: object) -> bool:
        self._reads.add(str(key))
        return key in self._related

    def __iter__(self) -> Iterator[str]:
        self._reads.update(self._related)
        return iter(self._related)

    def __len__(self) -> int:
        self._reads.update(self._related)
        return len(self._related)


class RecordingChildren(tuple[Any, ...]):
    """A tuple that notes in ``reads`` (as ``"children"``) that it was read in any way."""

    reads: set[str]

    def __new__(cls, items: tuple[Any, ...], reads: set[str]) -> RecordingChildren:
        made = super().__new__(cls, items)
        made.reads = reads
        return made

    def __iter__(self) -> Iterator[Any]:
        self.reads.add("children")
        return super().__iter__()

    def __len__(self) -> int:
        self.reads.add("children")
        return super().__len__()

    def __bool__(self) -> bool:
        self.reads.add("children")
        return super().__len__() > 0

    def __getitem__(self, index: Any) -> Any:
        self.reads.add("children")
        return super().__getitem__(index)

    def __contains__(self, item: object) -> bool:
        self.reads.add("children")
        return super().__contains__(item)


def undeclared(reads: set[str], declaration: Declaration) -> set[str]:
    """The reads ``declaration`` does not name (``"children"`` stands for ``Snapshot.children``)."""
    allowed = set(declaration.related_keys) | ({"children"} if declaration.children is not None else set())
    return reads - allowed


def checked(
    decide: Callable[[Snapshot], Decision], declaration: Declaration
) -> Callable[[Snapshot], Decision]:
    def decide_checked(snapshot: Snapshot) -> Decision:
        reads: set[str] = set()
        recording = dataclasses.replace(
            snapshot,
            related=RecordingRelated(snapshot.related, reads),
            children=RecordingChildren(tuple(snapshot.children), reads),
        )
        decision = decide(recording)
        extra = undeclared(reads, declaration)
        if extra:
            raise UndeclaredRead(
                f"{declaration.kind}'s machine read {sorted(extra)}, which its declaration does not name"
            )
        return decision

    return decide_checked
