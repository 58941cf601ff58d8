"""How the watchers run: which kinds in which namespaces, the watch timeout, the re-list period, the page
size of a list, the backoff after a failed request and whether observed objects are slimmed. Frozen, built
once by the controller."""

from __future__ import annotations

from dataclasses import dataclass, field

from watchers import kinds
from watchers.kinds import WatchedKind


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter after a failed request; a ``Retry-After`` from the server wins,
    up to ``retry_after_max`` seconds."""

    initial: float = 0.2
    maximum: float = 30.0
    retry_after_max: float = 300.0

    def __post_init__(self) -> None:
        if not 0 <= self.initial <= self.maximum:
            raise ValueError(f"backoff: need 0 <= initial <= maximum, got {self.initial} and {self.maximum}")


@dataclass(frozen=True)
class WatchSettings:
    # Empty: one watcher per kind across all namespaces; otherwise one per kind and namespace.
    namespaces: tuple[str, ...] = ()
    kinds: tuple[str, ...] = kinds.NAMES
    # The server ends a watch after this many seconds; the watcher resumes from the last resourceVersion.
    timeout_seconds: int = 300
    # Seconds between periodic re-lists that catch drift; None: only the lists a start or a 410 needs.
    # Each watch re-lists at its own point of the period (``watchers.resyncs``), drawn with this seed.
    resync: float | None = 900.0
    resync_seed: int = 0
    # Objects per list page (``limit``): a list is diffed and journaled a page at a time, so a page is
    # what one list holds; a page of 500 full Pods takes about 9 MB decoded, of 100 about 2
    # (bench/resync_memory.py).
    page_size: int = 100
    # Total time allowed for one list page (a watch gets timeout_seconds plus this much).
    request_timeout: float = 60.0
    backoff: Backoff = field(default_factory=Backoff)
    # Journal observed objects as ``slimming.slim`` keeps them (False: whole, as the server sent them).
    slim: bool = True

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in kinds.BY_NAME]
        if unknown:
            raise ValueError(
                f"cannot watch {', '.join(unknown)}: the watched kinds are {', '.join(kinds.NAMES)}"
            )
        if self.timeout_seconds < 1 or self.page_size < 1 or self.request_timeout <= 0:
            raise ValueError("timeout_seconds, page_size and request_timeout must be positive")
        if self.resync is not None and self.resync <= 0:
            raise ValueError(f"resync must be positive seconds or None, got {self.resync}")

    def watched(self) -> list[tuple[WatchedKind, str | None]]:
        """Every (kind, namespace) pair that gets a watcher; namespace None means all namespaces."""
        scopes: tuple[str | None, ...] = self.namespaces or (None,)
        return [(kinds.BY_NAME[name], ns) for name in self.kinds for ns in scopes]
