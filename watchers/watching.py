"""One watcher: the list+watch loop of one kind in one namespace (or across all namespaces).

    seed the cache from the journal's projection
    loop:
        list page by page, appending each page's differences before asking for the next; then append
        the deletions the whole list revealed and a SYNC record in one append
        watch from the list's resourceVersion; append each batch of events as it arrives;
        on a clean end or a broken stream, watch again from the last resourceVersion (bookmarks move it);
        on 410 Expired, or at the watch's next resync slot (``watchers.resyncs``), list again

Failed requests are retried with backoff (``watchers.retrying``). Anything else (a journal that refuses
an append, a bug) is logged and the loop starts over from a list after a backoff: the cache only ever
holds what the journal accepted, so nothing is lost and nothing is journaled twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from typing import NoReturn

import tenacity
from kubernetes_asyncio import client

from store.ports import JournalWriter
from store.records import Record, RecordType
from watchers import errors, listing, objects, resyncs, retrying, streams
from watchers.kinds import WatchedKind
from watchers.ports import Known
from watchers.settings import WatchSettings

log = logging.getLogger("arcsm.watchers")


class Reason(enum.StrEnum):
    """Why a list happened (the ``reason`` of its SYNC record)."""

    START = "start"
    EXPIRED = "expired"  # the watch answered 410
    RESYNC = "resync"  # the periodic re-list
    RECOVERY = "recovery"  # after an unexpected failure


class Ended(enum.Enum):
    """How one watch request ended when it did not fail."""

    CLEANLY = enum.auto()  # the server closed it (timeout, restart), or it broke after delivering events
    EXPIRED = enum.auto()
    RESYNC = enum.auto()


class Watcher:
    def __init__(
        self,
        *,
        kind: WatchedKind,
        namespace: str | None,
        api: client.ApiClient,
        journal: JournalWriter,
        known: Known,
        settings: WatchSettings,
        slot: resyncs.Slot | None = None,
    ) -> None:
        """``slot``: when this watch re-lists periodically (``watchers.resyncs``); by default at the start
        of each period of ``settings.resync``, and never when that is None."""
        self.kind = kind
        self.namespace = namespace
        self.synced = asyncio.Event()  # set once the first list is journaled
        self._call = kind.list_call(api, namespace)
        self._journal = journal
        self._known = known
        self._settings = settings
        self._cache: objects.Cache = {}
        self._resource_version = ""
        self._reason = Reason.START
        if slot is None and settings.resync is not None:
            slot = resyncs.Slot(settings.resync, 0.0)
        self.slot = slot
        self._changed = 0  # records the current list has journaled so far
        self._anchor = 0.0  # the loop's time when the watch started: where its slots count from
        self._listed_at = 0.0
        self._log = logging.LoggerAdapter(log, {"kind": kind.kind, "namespace": namespace or ""})

    @property
    def name(self) -> str:
        return f"watch {self.kind.kind} in {self.namespace or 'all namespaces'}"

    @property
    def resource_version(self) -> str:
        """Where the next watch starts: the last resourceVersion listed, seen in an event or bookmarked."""
        return self._resource_version

    async def run(self) -> NoReturn:
        self._anchor = asyncio.get_running_loop().time()
        self._cache = objects.seed(self._known.items(self.kind.kind, self.namespace))
        recovering = retrying.policy(self._settings.backoff, retry_on=_unexpected, logger=log, what=self.name)
        # Attempts count over the watcher's life: a failure that keeps coming back is retried at the
        # maximum backoff, the right pace for a bug or a journal that refuses appends.
        await recovering(self._loop)
        raise AssertionError("unreachable: the watch loop never returns")

    async def _loop(self) -> NoReturn:
        try:
            while True:
                await self._relist(self._reason)
                self._reason = await self._watch()
        except Exception:
            self._reason = Reason.RECOVERY
            raise

    # -- list ------------------------------------------------------------------------------------------

    async def _relist(self, reason: Reason) -> None:
        retry = self._retrying(f"{self.name}: list")
        self._changed = 0
        while True:
            try:
                listed, diff = await self._pages(retry)
                break
            except errors.Expired as exc:  # a continue token outlived the history: start over
                self._log.info("%s: list expired (%s); listing again", self.name, exc)
        gone = diff.rest()
        changed = self._changed + len(gone)
        sync = Record(
            type=RecordType.SYNC,
            kind=self.kind.kind,
            namespace=self.namespace or "",
            resource_version=diff.resource_version,
            body={
                "reason": str(reason),
                "namespace": self.namespace,
                "objects": listed,
                "changes": changed,
            },
        )
        await self._journal.append([*gone, sync])
        objects.fold(self._cache, gone)
        self._resource_version = diff.resource_version
        self._listed_at = asyncio.get_running_loop().time()
        self.synced.set()
        level = logging.INFO if reason is not Reason.RESYNC or changed else logging.DEBUG
        self._log.log(
            level,
            "%s: listed %d objects at %s (%s), %d changes journaled",
            self.name,
            listed,
            diff.resource_version,
            reason,
            changed,
        )

    async def _pages(self, retry: tenacity.AsyncRetrying) -> tuple[int, listing.Diff]:
        """Read one list page by page, journaling each page's differences before the next is asked for;
        the objects listed and the diff, whose ``rest`` are the deletions the list revealed. Raises
        ``Expired`` when the snapshot is gone (what was journaled stays: the cache holds it)."""
        listed = 0
        diff: listing.Diff | None = None
        found = listing.pages(
            self.kind,
            self._call,
            page_size=self._settings.page_size,
            timeout=self._settings.request_timeout,
            retry=retry,
            slim=self._settings.slim,
        )
        async with contextlib.aclosing(found):
            async for page in found:
                if diff is None:
                    diff = listing.Diff(
                        self.kind, self._cache, page.resource_version, slim=self._settings.slim
                    )
                records = diff.page(page.items)
                listed += len(page.items)
                if records:
                    await self._journal.append(records)
                    objects.fold(self._cache, records)
                    self._changed += len(records)
        assert diff is not None, "a list has at least one page"
        return listed, diff

    # -- watch -----------------------------------------------------------------------------------------

    async def _watch(self) -> Reason:
        """Watch until a re-list is due; return why it is."""
        slot = self.slot
        deadline = None if slot is None else slot.next_after(self._listed_at, anchor=self._anchor)
        retry = self._retrying(f"{self.name}: watch")
        while True:
            ended: Ended = await retry(self._session, deadline)
            if ended is Ended.EXPIRED:
                return Reason.EXPIRED
            if ended is Ended.RESYNC:
                return Reason.RESYNC

    async def _session(self, deadline: float | None) -> Ended:
        """One watch request from the current resourceVersion, read to its end."""
        delivered = False
        try:
            resp = await streams.open_watch(
                self._call,
                resource_version=self._resource_version,
                timeout_seconds=self._settings.timeout_seconds,
                grace=self._settings.request_timeout,
            )
            try:
                lines = streams.Lines(resp)
                while True:
                    try:
                        async with asyncio.timeout_at(deadline) as timer:
                            batch = await lines.batch()
                    except TimeoutError:
                        if timer.expired():
                            return Ended.RESYNC
                        raise
                    if not batch:
                        return Ended.CLEANLY
                    await self._observe(batch)
                    delivered = True
            finally:
                resp.close()
        except errors.Expired as exc:
            self._log.info("%s: %s; listing again", self.name, exc)
            return Ended.EXPIRED
        except (errors.TransportError, errors.ApiError) as exc:
            if not delivered:
                raise
            # A stream that delivered before it broke resumes at once; backoff is for failing requests.
            self._log.info("%s: the watch broke (%s); resuming at %s", self.name, exc, self._resource_version)
            return Ended.CLEANLY

    async def _observe(self, lines: list[bytes]) -> None:
        """Journal a batch of watch lines; raise the error an ERROR event carried, after what came before."""
        batch = streams.translate(self.kind, self._cache, lines, slim=self._settings.slim)
        if batch.records:
            await self._journal.append(batch.records)
            objects.fold(self._cache, batch.records)
        self._resource_version = batch.resource_version or self._resource_version
        if batch.error is not None:
            raise batch.error

    def _retrying(self, what: str) -> tenacity.AsyncRetrying:
        return retrying.policy(self._settings.backoff, logger=log, what=what)


def _unexpected(exc: BaseException) -> bool:
    return isinstance(exc, Exception)
