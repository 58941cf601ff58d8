"""JIT runner configurations: what ``generatejitconfig`` returns and a simulated runner starts from.

The shape follows the real runner's: base64 of a JSON object mapping the runner's configuration files
(``.runner``, ``.credentials``, ``.credentials_rsaparams``) to base64 of their JSON. ``.runner`` names
the agent (id, name, pool, URLs, work folder); the credential is a random secret standing in for the
runner's RSA key, which the fake checks when the runner connects. A JIT config is a secret: never log it.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from sim.github.records import Agent

POOL_ID = 1
POOL_NAME = "Default"


@dataclass(frozen=True)
class JitIdentity:
    agent_id: int
    agent_name: str
    secret: str


def _b64json(value: Any) -> str:
    return base64.b64encode(json.dumps(value, separators=(",", ":")).encode()).decode()


def encode(agent: Agent, *, server_url: str, github_url: str) -> str:
    files = {
        ".runner": _b64json(
            {
                "agentId": agent.id,
                "agentName": agent.name,
                "poolId": POOL_ID,
                "poolName": POOL_NAME,
                "serverUrl": server_url,
                "gitHubUrl": github_url,
                "workFolder": agent.work_folder,
                "ephemeral": True,
                "disableUpdate": True,
            }
        ),
        ".credentials": _b64json(
            {
                "scheme": "OAuth",
                "data": {
                    "clientId": f"sim-runner-{agent.id}",
                    "authorizationUrl": f"{server_url}_apis/oauth2/token",
                    "requireFipsCryptography": "False",
                },
            }
        ),
        ".credentials_rsaparams": _b64json({"simSecret": agent.secret}),
    }
    return _b64json(files)


def decode(encoded: str) -> JitIdentity:
    """The agent a JIT config belongs to and its credential; ``ValueError`` for anything malformed."""
    try:
        files = json.loads(base64.b64decode(encoded, validate=True))
        runner = json.loads(base64.b64decode(files[".runner"], validate=True))
        params = json.loads(base64.b64decode(files[".credentials_rsaparams"], validate=True))
        return JitIdentity(int(runner["agentId"]), str(runner["agentName"]), str(params["simSecret"]))
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise ValueError("not a JIT runner configuration issued by this fake") from exc
