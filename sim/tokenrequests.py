"""The TokenRequest subresource: ``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token``
(``pkg/registry/core/serviceaccount/storage/token.go``), what ``kubectl create token NAME`` and the
kubelet call.

``create_token`` follows upstream's order: the body's name and namespace must match the URL (422), the
ServiceAccount must exist (404), audiences default to the API server's, ``expirationSeconds`` defaults to
3600 and must be between 10 minutes and 2^32 seconds (422); a ``boundObjectRef`` to a Pod (of the same
account, 400 otherwise) or a Secret must exist and match its ``uid`` (409); a pod-bound token asked for
3607 s with the API audiences lives a year and carries ``warnafter`` (``sim.tokens``). The answer is the
TokenRequest with ``status.token`` and ``status.expirationTimestamp`` (the requested expiry), 201.

Known limits: no Node-bound tokens (the emulator serves no Node objects: 404), no maximum expiration
(kube-apiserver's ``--service-account-max-token-expiration`` unset, its default).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sim import errors, tokens
from sim.apiserver import ApiServer, Result, format_time
from sim.store import Obj

KIND, GROUP = "TokenRequest", "authentication.k8s.io"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32


def _get(api: ApiServer, plural: str, namespace: str, name: str) -> Obj:
    obj = api.store.get(("", plural, namespace, name))
    if obj is None:
        raise errors.not_found(plural, "", name)
    return obj


def _bound(api: ApiServer, namespace: str, name: str, ref: dict[str, Any]) -> tuple[Obj | None, Obj | None]:
    """(pod, secret) the token is bound to."""
    api_version, kind, ref_name = (
        str(ref.get("apiVersion") or ""),
        str(ref.get("kind") or ""),
        ref.get("name"),
    )
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    pod = secret = None
    if group == "" and kind == "Pod":
        pod = _get(api, "pods", namespace, str(ref_name or ""))
        if (pod.get("spec") or {}).get("serviceAccountName") != name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to pod running with different '
                "serviceaccount name."
            )
        bound = pod
    elif group == "" and kind == "Secret":
        secret = _get(api, "secrets", namespace, str(ref_name or ""))
        bound = secret
    elif group == "" and kind == "Node":
        raise errors.not_found("nodes", "", str(ref_name or ""))
    else:
        version = api_version.rsplit("/", 1)[-1]
        raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    uid = str((bound.get("metadata") or {}).get("uid", ""))
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(
            kind,
            group,
            str(ref_name),
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
            "The object might have been deleted and then recreated",
        )
    return pod, secret


def create_token(api: ApiServer, namespace: str, name: str, body: Any) -> Result:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    meta = dict(body.get("metadata") or {})
    if meta.get("name") and meta["name"] != name:
        raise errors.invalid(
            KIND,
            GROUP,
            name,
            [
                errors.invalid_value(
                    "metadata.name", meta["name"], "must match the service account name if specified"
                )
            ],
        )
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.invalid(
            KIND,
            GROUP,
            name,
            [
                errors.invalid_value(
                    "metadata.namespace",
                    meta["namespace"],
                    "must match the service account namespace if specified",
                )
            ],
        )
    account = _get(api, "serviceaccounts", namespace, name)
    spec = dict(body.get("spec") or {})
    audiences = [str(a) for a in spec.get("audiences") or []] or list(tokens.API_AUDIENCES)
    expiration = spec.get("expirationSeconds")
    expiration = DEFAULT_EXPIRATION if expiration is None else expiration
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        raise errors.bad_request("spec.expirationSeconds must be an integer")
    now = api.clock()
    problems = []
    if expiration < MIN_EXPIRATION:
        problems.append(
            errors.invalid_value(
                "spec.expirationSeconds", expiration, "may not specify a duration less than 10 minutes"
            )
        )
    if expiration > MAX_EXPIRATION:
        problems.append(
            errors.invalid_value(
                "spec.expirationSeconds", expiration, "may not specify a duration larger than 2^32 seconds"
            )
        )
    if problems:
        raise errors.invalid(KIND, GROUP, "", problems)
    ref = spec.get("boundObjectRef")
    pod, secret = _bound(api, namespace, name, ref) if isinstance(ref, dict) else (None, None)
    lifetime, warn_after = expiration, 0
    if (
        pod is not None
        and expiration == tokens.WARN_ONLY_SECONDS
        and set(audiences) <= set(tokens.API_AUDIENCES)
    ):
        lifetime, warn_after = tokens.EXTENSION_SECONDS, expiration
    token = tokens.issue(
        service_account=account,
        audiences=audiences,
        expiration_seconds=lifetime,
        now=now,
        pod=pod,
        secret=secret,
        node_name=str(((pod or {}).get("spec") or {}).get("nodeName") or ""),
        warn_after_seconds=warn_after,
    )
    return Result(201, token_request(name, namespace, audiences, expiration, ref, token, now))


def token_request(
    name: str, namespace: str, audiences: list[str], expiration: int, ref: Any, token: str, now: datetime
) -> Obj:
    return {
        "kind": KIND,
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": format_time(now)},
        "spec": {
            "audiences": audiences,
            "expirationSeconds": expiration,
            "boundObjectRef": ref if isinstance(ref, dict) else None,
        },
        "status": {
            "token": token,
            "expirationTimestamp": format_time(now + timedelta(seconds=expiration)),
        },
    }
