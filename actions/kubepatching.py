"""The listener's two Kubernetes writes (spec §5.1, §5.4), with kubernetes_asyncio, as JSON merge patches:

* ``patch_runner_set(body, session_id=)``: ``PATCH …/namespaces/{ns}/ephemeralrunnersets/{name}``
  (``spec.replicas``, ``spec.patchID``; with ``session_id``, that id in the annotation below);
* ``record_job(name, runner_id, fields)``: ``PATCH …/namespaces/{ns}/ephemeralrunners/{name}/status``
  with the job a runner took, as a JSON patch whose first operation is a ``test`` that
  ``status.runnerId`` is the runner id the job names. A runner name says nothing about which runner it
  is: the name of a runner that is gone is handed to a new EphemeralRunner, and a listener behind the
  service reads a job long after its runner went. So the job lands only on the runner the service gave
  it; on any other (a ``test`` that fails: 422) or none (404) nothing is written, and it says False;
* ``recorded_session()``: the id of the message session the set's listener opened last, kept in the
  set's annotation ``arcsm.io/listener-session`` so that the next listener can delete a session its
  predecessor could not (``actions.listener``). It is read from the object an empty merge patch returns
  (which changes nothing), because the listener's Role grants no get.

The set's patches are sent as ``application/merge-patch+json``, the job's as
``application/json-patch+json``; a patch is all the listener's Role allows (no get, no list).
``ApiException`` and transport failures are read as a ``kube.failures.Failure`` and raised here as the
``errors`` classes the listener's loop acts on: ``KubeUnavailable`` (retryable: 429, 5xx, a timeout or a
broken connection; and a 409: retry) and ``KubeRejected`` (anything else, e.g. 403 from RBAC or 404 for
the EphemeralRunnerSet: exit).
``configuration`` loads kubeconfig files (merged as kubectl merges them) or the pod's service account;
``connect`` gives an ``ApiClient`` for an existing client, a ``Configuration``, or the pod's service
account (in-cluster). Which of them a process uses is ``controller.loop.kubeconfigs``' answer.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import yaml
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from actions import errors
from kube.clients import api_client
from kube.failures import UNANSWERED, Failure

GROUP: Final = "actions.github.com"
VERSION: Final = "v1alpha1"
RUNNER_SETS: Final = "ephemeralrunnersets"
RUNNERS: Final = "ephemeralrunners"
MERGE_PATCH: Final = "application/merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
SESSION_ANNOTATION: Final = "arcsm.io/listener-session"

# What ``connect`` accepts: a client the caller keeps, a Configuration, or None for in-cluster.
Kube = client.ApiClient | client.Configuration | None


class KubeScaleTarget:
    """The EphemeralRunnerSet ``namespace/name`` and its runners, patched through ``api``."""

    def __init__(self, api: client.ApiClient, *, namespace: str, name: str) -> None:
        self._objects = client.CustomObjectsApi(api)
        self.namespace = namespace
        self.name = name

    async def patch_runner_set(self, body: Mapping[str, object], *, session_id: str | None = None) -> None:
        what = f"EphemeralRunnerSet {self.namespace}/{self.name}"
        if session_id is not None:
            body = {**body, "metadata": {"annotations": {SESSION_ANNOTATION: session_id}}}
        # The client's stubs omit ``_content_type``; the generated method takes it (and needs it, or a
        # dict body goes out as a JSON patch).
        await _patch(
            self._objects.patch_namespaced_custom_object(  # type: ignore[call-arg]
                GROUP, VERSION, self.namespace, RUNNER_SETS, self.name, dict(body), _content_type=MERGE_PATCH
            ),
            what=what,
        )

    async def recorded_session(self) -> str | None:
        what = f"EphemeralRunnerSet {self.namespace}/{self.name}"
        found = await _patch(
            self._objects.patch_namespaced_custom_object(  # type: ignore[call-arg]
                GROUP, VERSION, self.namespace, RUNNER_SETS, self.name, {}, _content_type=MERGE_PATCH
            ),
            what=what,
        )
        annotations = ((found or {}).get("metadata") or {}).get("annotations") or {}
        value = annotations.get(SESSION_ANNOTATION)
        return str(value) if value else None

    async def record_job(self, name: str, runner_id: int, fields: Mapping[str, object]) -> bool:
        what = f"EphemeralRunner {self.namespace}/{name} status"
        try:
            await _patch(
                self._objects.patch_namespaced_custom_object_status(  # type: ignore[call-arg]
                    GROUP,
                    VERSION,
                    self.namespace,
                    RUNNERS,
                    name,
                    job_patch(runner_id, fields),
                    _content_type=JSON_PATCH,
                ),
                what=what,
            )
        except errors.KubeRejected as exc:
            if exc.status in (404, 422):
                return False
            raise
        return True


def job_patch(runner_id: int, fields: Mapping[str, object]) -> list[dict[str, object]]:
    """The JSON patch that sets ``fields`` in a runner's status only while its ``status.runnerId`` is
    ``runner_id`` (the ``test`` comes first; a runner not registered yet has no runnerId and fails it)."""
    test: dict[str, object] = {"op": "test", "path": "/status/runnerId", "value": runner_id}
    return [test, *({"op": "add", "path": f"/status/{key}", "value": value} for key, value in fields.items())]


async def _patch(call: Any, *, what: str) -> Any:
    try:
        return await call
    except ApiException as exc:
        failure = Failure.from_api_exception(exc)
        text = f"patching {what} answered {failure.code} {failure.phrase}".rstrip() + _message(failure)
        if failure.retryable or failure.conflict:
            raise errors.KubeUnavailable(text, retry_after=failure.retry_after) from exc
        raise errors.KubeRejected(text, status=failure.code) from exc
    except UNANSWERED as exc:
        failure = Failure.unanswered(exc)
        raise errors.KubeUnavailable(f"patching {what} failed: {failure.phrase}: {failure.message}") from exc


def _message(failure: Failure) -> str:
    """``: <message>`` from a ``Status`` body, on one line; the body never holds a secret here."""
    return f": {' '.join(failure.message.split())[:300]}" if failure.message else ""


async def configuration(kubeconfigs: Sequence[Path]) -> client.Configuration:
    """A Configuration from ``kubeconfigs`` merged in order, or, given none, the pod's service account."""
    return await kubeconfig(*kubeconfigs) if kubeconfigs else in_cluster()


async def kubeconfig(*paths: Path) -> client.Configuration:
    """A Configuration from kubeconfig files merged as kubectl merges ``$KUBECONFIG``'s: the first file
    to name a cluster, a user or a context defines it (kubernetes_asyncio's merge does that), and the
    first to set ``current-context`` picks the context (kubernetes_asyncio would take the last's). An
    empty file adds nothing; one that is not a YAML mapping is an error."""
    named = ", ".join(map(str, paths))
    configuration = client.Configuration()
    try:
        documents = [(path, yaml.safe_load(path.read_text())) for path in paths]
        for path, document in documents:
            if document is not None and not isinstance(document, dict):
                raise ValueError(f"{path} is not a kubeconfig (a YAML mapping)")
        files = [str(path) for path, document in documents if document]
        if not files:
            raise ValueError("it holds no configuration")
        current = next((d["current-context"] for _, d in documents if d and d.get("current-context")), None)
        await config.load_kube_config(
            config_file=os.pathsep.join(files), context=current, client_configuration=configuration
        )
    except (config.ConfigException, OSError, ValueError, yaml.YAMLError) as exc:
        raise errors.InvalidConfiguration(f"cannot use the kubeconfig {named}: {_one_line(exc)}") from None
    return configuration


def in_cluster(
    *, environ: Mapping[str, str] | None = None, token: Path | None = None, ca: Path | None = None
) -> client.Configuration:
    """The pod's service account: its token, the cluster CA and ``KUBERNETES_SERVICE_HOST``/``_PORT``
    (``environ``, ``token`` and ``ca`` are the pod's own unless a test gives others)."""
    configuration = client.Configuration()
    where: dict[str, Any] = {"environ": environ} if environ is not None else {}
    if token is not None:
        where["token_filename"] = str(token)
    if ca is not None:
        where["cert_filename"] = str(ca)
    try:
        config.load_incluster_config(client_configuration=configuration, **where)  # type: ignore[no-untyped-call]
    except config.ConfigException as exc:
        raise errors.InvalidConfiguration(
            f"cannot use the pod's service account ({exc}); pass --kubeconfig to reach a cluster from outside"
        ) from None
    return configuration


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


@asynccontextmanager
async def connect(kube: Kube) -> AsyncIterator[client.ApiClient]:
    """An ``ApiClient``: ``kube`` itself (left open), or one made for a Configuration or in-cluster."""
    if isinstance(kube, client.ApiClient):
        yield kube
        return
    async with api_client(kube if kube is not None else in_cluster()) as api:
        yield api
    await asyncio.sleep(0)  # let aiohttp close its connector's transports before the loop moves on
