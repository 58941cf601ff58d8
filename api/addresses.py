"""``HOST:PORT`` as a user writes it for ``--http``, parsed, in a module of its own so that checking the
option does not import the HTTP server (``api.serving`` brings uvicorn and FastAPI)."""

from __future__ import annotations


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6; ``:8080`` for every interface) as (host, port).

    Raises ``ValueError`` with a one-line message for anything else.
    """
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:8080, or port 0 for a free one)")
    host = host.removeprefix("[").removesuffix("]") or "0.0.0.0"
    return host, int(port_text)
