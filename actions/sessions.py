"""``MessageQueue``: a listener's message session, with the refresh-once rule of §6.4.

    async with await MessageQueue.open(client, scale_set_id=7, owner_name=hostname) as queue:
        message = await queue.get_message(last_message_id=0, max_capacity=10)

GetMessage, DeleteMessage and AcquireJobs carry the session's message-queue token. When the queue
answers 401 the token has expired: the session is refreshed (``PATCH …/sessions/{id}``, which returns a
new token) and the call is made once more; a second 401 is raised as ``MessageQueueTokenExpired``.
Leaving the ``async with`` deletes the session, so the next listener can open one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from types import TracebackType
from typing import TypeVar

from actions import errors
from actions.client import ActionsClient
from actions.messages import MessageSession, RunnerScaleSetMessage

log = logging.getLogger(__name__)

T = TypeVar("T")


class MessageQueue:
    def __init__(self, client: ActionsClient, *, scale_set_id: int, session: MessageSession) -> None:
        self._client = client
        self.scale_set_id = scale_set_id
        self.session = session

    @classmethod
    async def open(cls, client: ActionsClient, *, scale_set_id: int, owner_name: str) -> MessageQueue:
        session = await client.create_message_session(scale_set_id, owner_name)
        return cls(client, scale_set_id=scale_set_id, session=session)

    async def __aenter__(self) -> MessageQueue:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Delete the session."""
        await self._client.delete_message_session(self.scale_set_id, self.session.session_id)

    async def refresh(self) -> MessageSession:
        self.session = await self._client.refresh_message_session(self.scale_set_id, self.session.session_id)
        return self.session

    async def get_message(self, *, last_message_id: int, max_capacity: int) -> RunnerScaleSetMessage | None:
        return await self._with_refresh(
            lambda s: self._client.get_message(
                s.message_queue_url,
                s.message_queue_access_token,
                last_message_id=last_message_id,
                max_capacity=max_capacity,
            )
        )

    async def delete_message(self, message_id: int) -> None:
        await self._with_refresh(
            lambda s: self._client.delete_message(
                s.message_queue_url, s.message_queue_access_token, message_id
            )
        )

    async def acquire_jobs(self, request_ids: Collection[int]) -> tuple[int, ...]:
        return await self._with_refresh(
            lambda s: self._client.acquire_jobs(self.scale_set_id, s.message_queue_access_token, request_ids)
        )

    async def _with_refresh(self, call: Callable[[MessageSession], Awaitable[T]]) -> T:
        try:
            return await call(self.session)
        except errors.MessageQueueTokenExpired:
            log.info("message queue token expired; refreshing session %s", self.session.session_id)
        return await call(await self.refresh())
