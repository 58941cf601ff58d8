"""How the journal commits, snapshots and forgets: small frozen settings, validated when built.

Retention has two tiers. ``retention`` bounds the raw records (observed events, timers, syncs,
snapshot markers); ``history_retention`` bounds the record types in ``kept_longer`` (decisions, their
effects and effect results), which are never pruned before the raw records around them. ``max_bytes``
bounds the journal's whole footprint on disk (database file with its free pages, write-ahead log and its
index; ``retention``): raw records go first, history only once no raw record is left to prune.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from store.records import RecordType

DAY = timedelta(days=1)


def _check_positive(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if isinstance(value, timedelta) and value <= timedelta(0):
            raise ValueError(f"{name} must be positive, not {value}")
        if isinstance(value, int) and value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")


@dataclass(frozen=True)
class RetentionSettings:
    """Bounds of the raw records; any one exceeded prunes the oldest. ``None`` leaves a bound off.

    ``max_records`` keeps the newest N seqs; ``max_bytes`` bounds what the journal takes on disk: a pass
    starts once the footprint passes 90% of it and brings the records back under 80% of it, less what
    the write-ahead log is allowed (``retention.wal_allowance``).
    """

    max_age: timedelta | None = None
    max_records: int | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        _check_positive(self, "max_age", "max_records", "max_bytes")


@dataclass(frozen=True)
class HistoryRetention:
    """Bounds of the kept-longer records: their age, and how many of them are kept."""

    max_age: timedelta | None = None
    max_records: int | None = None

    def __post_init__(self) -> None:
        _check_positive(self, "max_age", "max_records")


@dataclass(frozen=True)
class JournalSettings:
    # Group commit: appends that arrive while a transaction is being written go into the next one.
    # A window above zero waits that long for more before writing (throughput over latency).
    group_commit_window: timedelta = timedelta(0)
    max_batch_records: int = 10_000
    # FULL syncs the write-ahead log on every commit (durable across power loss); NORMAL only across
    # a crash of the process.
    durable: bool = True
    # A projection snapshot every N records bounds the replay on start; None takes them only when
    # retention needs one.
    snapshot_every: int | None = 50_000
    snapshots_kept: int = 2
    retention: RetentionSettings = RetentionSettings(max_age=7 * DAY, max_bytes=1 << 30)
    history_retention: HistoryRetention = HistoryRetention(max_age=90 * DAY)
    kept_longer: frozenset[RecordType] = field(
        default_factory=lambda: frozenset({RecordType.DECISION, RecordType.EFFECT, RecordType.EFFECT_RESULT})
    )
    # Pruning deletes at most this many records per transaction, so appends are never held up long.
    prune_chunk: int = 10_000
    # Recently committed records kept in memory for tails that have caught up, at most this many and
    # at most this much JSON (a record holds a small multiple of its JSON in memory); a tail further
    # behind reads from the database.
    tail_buffer: int = 10_000
    tail_buffer_bytes: int = 4 << 20

    def __post_init__(self) -> None:
        if self.group_commit_window < timedelta(0):
            raise ValueError("group_commit_window must not be negative")
        _check_positive(
            self,
            "max_batch_records",
            "snapshot_every",
            "snapshots_kept",
            "prune_chunk",
            "tail_buffer",
            "tail_buffer_bytes",
        )
