"""The GitHub REST API side of the auth flow (§6.2), served under ``/api/v3`` as GHES serves it.

1. ``POST /api/v3/app/installations/{id}/access_tokens`` with ``Bearer <App JWT>`` → 201
   ``{"token": "ghs_…", "expires_at"}``;
2. ``POST /api/v3/{orgs/o | repos/o/r | enterprises/e}/actions/runners/registration-token`` with
   ``Bearer <PAT or installation token>`` → 201 ``{"token", "expires_at"}``;
3. ``POST /api/v3/actions/runner-registration`` with ``RemoteAuth <registration token>`` and
   ``{"url": <githubConfigUrl>, "runner_event": "register"}`` → 201 ``{"url": <Actions base>,
   "token": <admin JWT with exp>}``. The registration token must be for the URL's scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from sim.github import bodies, errors, scopes
from sim.github.responses import credential, json_response, read_json
from sim.github.tokens import AdminGrant

if TYPE_CHECKING:
    from sim.github.fake import GitHubFake

API = "/api/v3"


class RestApi:
    def __init__(self, fake: GitHubFake) -> None:
        self.fake = fake

    async def access_token(self, request: web.Request) -> web.Response:
        installation_id = int(request.match_info["installation"])
        token = credential(request, "Bearer")
        if not token:
            raise errors.GitHubError(401, "A JSON web token could not be decoded")
        self.fake.tokens.verify_app_jwt(token, installation_id)
        issued, expires_at = self.fake.tokens.issue_installation_token(
            installation_id, self.fake.settings.installation_token_seconds
        )
        return json_response(
            {
                "token": issued,
                "expires_at": bodies.format_time(expires_at),
                "permissions": {"organization_self_hosted_runners": "write", "administration": "write"},
                "repository_selection": "all",
            },
            201,
        )

    async def registration_token(self, request: web.Request) -> web.Response:
        self.fake.tokens.check_github_credential(credential(request, "Bearer", "token"))
        info = request.match_info
        if "enterprise" in info:
            scope = scopes.Scope("enterprise", info["enterprise"])
        elif "repo" in info:
            scope = scopes.Scope("repository", info["owner"], info["repo"])
        else:
            scope = scopes.Scope("organization", info["org"])
        issued, expires_at = self.fake.tokens.issue_registration_token(
            scope.key, self.fake.settings.registration_token_seconds
        )
        return json_response({"token": issued, "expires_at": bodies.format_time(expires_at)}, 201)

    async def runner_registration(self, request: web.Request) -> web.Response:
        token = credential(request, "RemoteAuth")
        if not token:
            raise errors.GitHubError(401, "Requires a RemoteAuth registration token")
        scope_key = self.fake.tokens.check_registration_token(token)
        body = await read_json(request)
        url = body.get("url") if isinstance(body, dict) else None
        if not isinstance(url, str) or not url:
            raise errors.GitHubError(422, "Invalid request: 'url' is required")
        try:
            scope = scopes.from_url(url)
        except ValueError as exc:
            raise errors.GitHubError(422, f"Invalid request: {exc}") from None
        if scope.key != scope_key:
            raise errors.GitHubError(403, "The registration token was issued for another scope")
        tenant = self.fake.state.tenant(scope)
        admin = self.fake.tokens.issue_admin_token(
            AdminGrant(tenant.id, scope.key), self.fake.settings.admin_token_seconds
        )
        return json_response(
            {"url": self.fake.actions_base(tenant.id), "token": admin, "token_schema": "OAuthAccessToken"},
            201,
        )


def add_routes(app: web.Application, fake: GitHubFake) -> None:
    api = RestApi(fake)
    router = app.router
    registration = "actions/runners/registration-token"
    router.add_post(API + "/app/installations/{installation:\\d+}/access_tokens", api.access_token)
    router.add_post(API + "/orgs/{org}/" + registration, api.registration_token)
    router.add_post(API + "/repos/{owner}/{repo}/" + registration, api.registration_token)
    router.add_post(API + "/enterprises/{enterprise}/" + registration, api.registration_token)
    router.add_post(API + "/actions/runner-registration", api.runner_registration)
