"""kube-apiserver's audit log, read back as the emulator's request log.

The emulator keeps every request it answered (``sim.faults.LoggedRequest``, ``World.requests``): tests
read from it who asked what and whether it was refused. A real kube-apiserver says the same in its audit
log, so the control plane (``sim.controlplane.cluster``) runs with ``POLICY``: every request at the
Metadata level (who, which verb on which path, the answer's code; never a body), one line per request
once its answer is complete, the control plane's own components and the kube-system accounts
kube-controller-manager acts as left out to keep the log small. ``requests(path)`` reads it as
``LoggedRequest`` entries.

What the audit log does not hold: the request's content type and the Warning headers of the answer (both
are empty here), and a watch or a ``follow`` log stream still open (it is logged once it ends). A
request refused before it is authenticated (401) is logged without a user.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from sim.faults import LoggedRequest

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    users: [system:kube-controller-manager, system:kube-scheduler, system:apiserver]
  - level: None
    userGroups: [system:serviceaccounts:kube-system]
  - level: Metadata
"""

# The HTTP method of each verb the audit log names (a ``list`` and a ``watch`` are GETs).
METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


def requests(log: Path) -> list[LoggedRequest]:
    """The requests the audit log at ``log`` holds so far, oldest first."""
    try:
        lines = log.read_text().splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:  # a line still being written
            continue
        url = urlsplit(str(event.get("requestURI") or ""))
        verb = str(event.get("verb") or "")
        found.append(
            LoggedRequest(
                METHODS.get(verb, verb.upper()),
                url.path,
                url.query,
                verb,
                "",
                int((event.get("responseStatus") or {}).get("code") or 0),
                user=str((event.get("user") or {}).get("username") or ""),
            )
        )
    return found
