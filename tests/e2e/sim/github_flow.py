"""Raw-HTTP steps against the fake GitHub, shared by the ``test_github_fake*`` modules: the §6.2
registration flow, admin calls under the returned Actions base, and the message queue.

Nothing here is a client library: each step is the one request the spec describes, so a test reads as
the wire conversation it checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

API_VERSION = {"api-version": "6.0-preview"}
PAT = "ghp_sim_test_token"


class Where(Protocol):
    """Where a fake GitHub answers: a ``GitHubFake``, or the URLs of one in another process."""

    @property
    def url(self) -> str: ...

    @property
    def api_url(self) -> str: ...

    def config_url(self, scope: str) -> str: ...


@dataclass
class Admin:
    """An admin connection: the Actions base URL and admin JWT runner-registration returned."""

    http: httpx.AsyncClient
    base: str
    token: str

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}

    async def call(self, method: str, path: str, body: Any = None, **query: Any) -> httpx.Response:
        return await self.http.request(
            method,
            self.base + path,
            params={**API_VERSION, **query},
            headers=self._headers(),
            content=None if body is None else json.dumps(body),
        )

    async def create_scale_set(self, name: str = "arc-runners", group_id: int = 1) -> dict[str, Any]:
        resp = await self.call(
            "POST",
            "_apis/runtime/runnerscalesets",
            {
                "name": name,
                "runnerGroupId": group_id,
                "labels": [{"name": name, "type": "System"}],
                "RunnerSetting": {"disableUpdate": True},
            },
        )
        assert resp.status_code == 200, resp.text
        created: dict[str, Any] = resp.json()
        return created

    async def jit_config(self, scale_set_id: int, name: str) -> dict[str, Any]:
        resp = await self.call(
            "POST",
            f"_apis/runtime/runnerscalesets/{scale_set_id}/generatejitconfig",
            {"name": name, "workFolder": ""},
        )
        assert resp.status_code == 200, resp.text
        config: dict[str, Any] = resp.json()
        return config

    async def open_session(self, scale_set_id: int, owner: str = "listener-pod") -> Session:
        resp = await self.call(
            "POST", f"_apis/runtime/runnerscalesets/{scale_set_id}/sessions", {"ownerName": owner}
        )
        assert resp.status_code == 200, resp.text
        return Session(self, scale_set_id, resp.json())


@dataclass
class Session:
    admin: Admin
    scale_set_id: int
    body: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.body["sessionId"])

    def _queue_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.body['messageQueueAccessToken']}"}

    async def get_message(self, last_message_id: int = 0, capacity: int = 10) -> httpx.Response:
        url = httpx.URL(str(self.body["messageQueueUrl"]))
        if last_message_id > 0:
            url = url.copy_merge_params({"lastMessageId": str(last_message_id)})
        headers = {
            **self._queue_headers(),
            "Accept": "application/json; api-version=6.0-preview",
            "X-ScaleSetMaxCapacity": str(capacity),
        }
        return await self.admin.http.get(url, headers=headers)

    async def delete_message(self, message_id: int) -> httpx.Response:
        url = httpx.URL(str(self.body["messageQueueUrl"]))
        url = url.copy_with(path=f"{url.path}/{message_id}")
        return await self.admin.http.delete(url, headers=self._queue_headers())

    async def acquire(self, request_ids: list[int]) -> httpx.Response:
        return await self.admin.http.post(
            self.admin.base + f"_apis/runtime/runnerscalesets/{self.scale_set_id}/acquirejobs",
            params=API_VERSION,
            headers={**self._queue_headers(), "Content-Type": "application/json"},
            content=json.dumps(request_ids),
        )

    async def refresh(self) -> httpx.Response:
        resp = await self.admin.call(
            "PATCH", f"_apis/runtime/runnerscalesets/{self.scale_set_id}/sessions/{self.id}"
        )
        if resp.status_code == 200:
            self.body = resp.json()
        return resp

    async def next_jobs(self, capacity: int = 10) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Poll until a message comes, acknowledge it, return it and its job messages."""
        while True:
            resp = await self.get_message(capacity=capacity)
            if resp.status_code == 200:
                message: dict[str, Any] = resp.json()
                assert (await self.delete_message(message["messageId"])).status_code == 204
                return message, json.loads(message["body"])
            assert resp.status_code == 202, resp.text


async def registration_token(
    http: httpx.AsyncClient, fake: Where, path: str, credential: str
) -> httpx.Response:
    return await http.post(
        f"{fake.api_url}/{path}/actions/runners/registration-token",
        headers={"Authorization": f"Bearer {credential}", "Content-Type": "application/vnd.github.v3+json"},
    )


async def runner_registration(
    http: httpx.AsyncClient, fake: Where, config_url: str, token: str
) -> httpx.Response:
    return await http.post(
        f"{fake.api_url}/actions/runner-registration",
        headers={"Authorization": f"RemoteAuth {token}", "Content-Type": "application/json"},
        content=json.dumps({"url": config_url, "runner_event": "register"}),
    )


async def register(http: httpx.AsyncClient, fake: Where, scope: str = "acme", credential: str = PAT) -> Admin:
    """Steps 2 and 3 of §6.2 with a PAT (or installation token) for ``scope`` (``org`` or ``owner/repo``)."""
    path = f"orgs/{scope}" if "/" not in scope else f"repos/{scope}"
    reg = await registration_token(http, fake, path, credential)
    assert reg.status_code == 201, reg.text
    admin = await runner_registration(http, fake, fake.config_url(scope), reg.json()["token"])
    assert admin.status_code == 201, admin.text
    return Admin(http, admin.json()["url"], admin.json()["token"])
