"""The fake Azure served over HTTPS (``service.AzureFake``): Microsoft Entra's token endpoint and Key
Vault's secrets API on one port, with a certificate for ``login.microsoftonline.com`` and
``*.vault.azure.net`` (and the loopback names) from a CA of its own, made once per process.

    async with serving(fake) as azure:          # azure.port, azure.ca_pem, azure.vault_url("arcsm")
        async with tunnel.serving(azure) as proxy:   # the proxy that reaches those names
            ...

A client reaches the public names through ``sim.keyvault.tunnel`` (nothing here resolves them) and
trusts ``ca_pem``. The token endpoint's audience is its public URL, as Entra's is.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web

from sim import certificates
from sim.keyvault.service import AUTHORITY_HOST, AzureFake

VAULT_DOMAIN = "vault.azure.net"
DNS_NAMES = (AUTHORITY_HOST, f"*.{VAULT_DOMAIN}", "localhost")


@functools.cache
def keys() -> certificates.KeyMaterial:
    return certificates.make(
        dns_names=DNS_NAMES,
        ip_addresses=("127.0.0.1",),
        ca_common_name="arcsm emulated Azure root",
        common_name=f"*.{VAULT_DOMAIN}",
    )


@dataclass
class Served:
    fake: AzureFake
    host: str
    port: int

    @property
    def ca_pem(self) -> bytes:
        """The CA a client must trust to reach the fake."""
        return keys().ca_cert

    @staticmethod
    def vault_url(name: str) -> str:
        return f"https://{name}.{VAULT_DOMAIN}/"


def application(fake: AzureFake) -> web.Application:
    async def token(request: web.Request) -> web.Response:
        tenant = request.match_info["tenant"]
        form = {k: str(v) for k, v in (await request.post()).items()}
        answer = fake.token(tenant, form, f"https://{AUTHORITY_HOST}/{tenant}/oauth2/v2.0/token")
        return web.json_response(answer.body, status=answer.status, headers=answer.headers)

    async def secret(request: web.Request) -> web.Response:
        host = (request.host or "").rsplit(":", 1)[0]
        answer = fake.get_secret(
            request.match_info["name"], request.headers.get("Authorization", ""), f"https://{host}"
        )
        return web.json_response(answer.body, status=answer.status, headers=answer.headers)

    app = web.Application()
    app.router.add_post("/{tenant}/oauth2/v2.0/token", token)
    app.router.add_get("/secrets/{name}", secret)
    app.router.add_get("/secrets/{name}/", secret)
    app.router.add_get("/secrets/{name}/{version}", secret)
    return app


@contextlib.asynccontextmanager
async def serving(fake: AzureFake, host: str = "127.0.0.1") -> AsyncIterator[Served]:
    """``fake`` over HTTPS on a free port of ``host`` until the block ends."""
    runner = web.AppRunner(application(fake), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0, ssl_context=certificates.serving_context(keys()))
    await site.start()
    try:
        sockets = getattr(site._server, "sockets", None) or []
        yield Served(fake, host, sockets[0].getsockname()[1])
    finally:
        await runner.cleanup()
