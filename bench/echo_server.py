"""The baseline for the emulator benchmark: a plain aiohttp server that answers every request with its body.

It prints ``echo: http://HOST:PORT`` once it accepts requests. ``GET /stream?n=N`` streams N JSON lines
(the baseline for watch fan-out).
"""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web


async def echo(request: web.Request) -> web.Response:
    body = await request.read()
    return web.Response(body=body or b"{}", content_type="application/json")


async def stream(request: web.Request) -> web.StreamResponse:
    n = int(request.query.get("n", "0"))
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    line = b'{"type":"MODIFIED","object":{"metadata":{"name":"x"}}}\n'
    for _ in range(n):
        await resp.write(line)
    await resp.write_eof()
    return resp


async def main() -> None:
    app = web.Application()
    app.router.add_get("/stream", stream)
    app.router.add_route("*", "/{tail:.*}", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"echo: http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
