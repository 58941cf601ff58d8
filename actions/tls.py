"""The TLS contexts the Actions clients verify the service with: one per extra root CA, shared.

Building an ``ssl.SSLContext`` loads a whole trust store into it (certifi's bundle takes about 0.8 MB of
native memory per context), and ``httpx.AsyncClient(verify=True)`` builds one per client and per proxy
transport. A controller keeps an Actions client per scale set's credentials, so it held one trust store
per scale set. A context can be shared by any number of clients and connections, and none is changed
once built here, so every client with the same extra root CA (or none) verifies with the same one.
"""

from __future__ import annotations

import functools
import ssl

import httpx

# Distinct root CAs kept built; a rotated CA's old context goes once this many newer ones were asked for.
CACHED: int = 32


@functools.lru_cache(maxsize=CACHED)
def context(root_ca: str = "") -> ssl.SSLContext:
    """Without ``root_ca``: httpx's default trust store (certifi's bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``), as ``verify=True`` gives. With it: the system trust store plus ``root_ca`` (PEM),
    as spec §2.0 appends githubServerTLS. Raises ``ssl.SSLError`` for a ``root_ca`` that is not PEM."""
    if not root_ca:
        return httpx.create_ssl_context()
    built = ssl.create_default_context()
    built.load_verify_locations(cadata=root_ca)
    return built
