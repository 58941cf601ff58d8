"""The outbox: effects recorded with their decision but never answered by an ``effect_result``.

A decision and its effects are one atomic append; each effect's result is appended once it is performed
(a timer's once it fires). A controller that stopped in between leaves effects without a result, and
performs them again on start, in the order they were recorded: effects are idempotent by their key
(creates treat AlreadyExists as success, deletes NotFound), so doing one twice is safe, and never doing
it is not. The exception is an effect that issues something only its result would have told about (a JIT
config: the service registered a runner, but its Secret may not have been written): the reconciler answers
it ``Interrupted`` instead (``reconciling.INTERRUPTIBLE``), and the next decision looks up what the
service holds before asking again.
"""

from __future__ import annotations

from store.ports import JournalReader
from store.records import Record, RecordType

PAGE = 1_000
TYPES = frozenset({RecordType.EFFECT, RecordType.EFFECT_RESULT})


async def unanswered(journal: JournalReader, *, through: int) -> list[Record]:
    """The ``effect`` records up to seq ``through`` that no ``effect_result`` answers, oldest first."""
    effects: dict[int, Record] = {}
    after = 0
    while True:
        page = await journal.read(after=after, through=through, limit=PAGE, types=TYPES)
        for record in page:
            assert record.seq is not None
            if record.type is RecordType.EFFECT:
                effects[record.seq] = record
            else:
                answered = record.body.get("effectSeq")
                if isinstance(answered, int):
                    effects.pop(answered, None)
        if len(page) < PAGE:
            break
        after = page[-1].seq or after
    return [effects[seq] for seq in sorted(effects)]
