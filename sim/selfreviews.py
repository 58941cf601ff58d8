"""What a client may ask about itself: ``SelfSubjectAccessReview`` and ``SelfSubjectRulesReview``
(authorization.k8s.io/v1, ``kubectl auth can-i [--list]``) and ``SelfSubjectReview``
(authentication.k8s.io/v1, ``kubectl auth whoami``).

They are create-only, cluster-scoped and never stored: the answer is the request with its ``status``
filled in, 201 as kube-apiserver's REST storage for them answers. ``RESOURCES`` is their discovery data.

The requester is who ``sim.authenticating`` says for a token the emulator issued, or the user a request
impersonates (``sim.impersonating``); its reviews are judged by RBAC (``sim.authorizing``), an allowed
access with upstream's ``RBAC: allowed by …`` reason (``system:masters``: allowed with no reason, every
rule). A request the emulator serves unchecked (README, "Authentication and authorization") is answered
as it is served: any access is allowed (its rules are ``*``), and its user is the kubeconfig's,
``arcsm-sim`` (kubectl sends no token over plain HTTP, so a request without one is that user), or, for
another bearer token, the token itself (the account names tests use as tokens), in the groups
``system:masters`` and ``system:authenticated``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from sim import authenticating, authorizing, errors
from sim.authenticating import MASTERS, User
from sim.store import Store

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"

# (group, version) → the APIResource entries of its discovery document.
RESOURCES: dict[tuple[str, str], list[dict[str, Any]]] = {
    (AUTHENTICATION, "v1"): [
        {
            "name": "selfsubjectreviews",
            "singularName": "selfsubjectreview",
            "namespaced": False,
            "kind": "SelfSubjectReview",
            "verbs": ["create"],
        }
    ],
    (AUTHORIZATION, "v1"): [
        {
            "name": "selfsubjectaccessreviews",
            "singularName": "selfsubjectaccessreview",
            "namespaced": False,
            "kind": "SelfSubjectAccessReview",
            "verbs": ["create"],
        },
        {
            "name": "selfsubjectrulesreviews",
            "singularName": "selfsubjectrulesreview",
            "namespaced": False,
            "kind": "SelfSubjectRulesReview",
            "verbs": ["create"],
        },
    ],
}

# The request path of each review → (apiVersion, kind).
PATHS: dict[str, tuple[str, str]] = {
    f"/apis/{group}/{version}/{r['name']}": (f"{group}/{version}", r["kind"])
    for (group, version), resources in RESOURCES.items()
    for r in resources
}


def requester(user: User | None, token: str) -> User:
    """Who asks: the authenticated user, else the unchecked request's user named by its token."""
    return user if user is not None else authenticating.unchecked_user(token)


def _reviewed(body: Any, api_version: str, kind: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of the request is not a {kind} object")
    sent = (body.get("apiVersion"), body.get("kind"))
    if sent != (api_version, kind) and sent != (None, None):
        raise errors.bad_request(
            f"the body of the request is a {sent[0]} {sent[1]}, not a {api_version} {kind}"
        )
    out = copy.deepcopy(body)
    out["apiVersion"], out["kind"] = api_version, kind
    meta = out.get("metadata")
    out["metadata"] = meta if isinstance(meta, dict) else {}
    out["metadata"].setdefault("creationTimestamp", None)
    return out


def _attributes(spec: Mapping[str, Any]) -> authorizing.Attributes:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return authorizing.Attributes(
            verb=str(resource.get("verb") or ""),
            path="",
            resource_request=True,
            api_group=str(resource.get("group") or ""),
            api_version=str(resource.get("version") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=str(resource.get("namespace") or ""),
            name=str(resource.get("name") or ""),
        )
    other = spec.get("nonResourceAttributes") or {}
    return authorizing.Attributes(verb=str(other.get("verb") or ""), path=str(other.get("path") or ""))


def _validate(spec: Mapping[str, Any]) -> list[errors.FieldError]:
    """``ValidateSelfSubjectAccessReviewSpec``: exactly one of the two kinds of attributes."""
    resource, other = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    for name, value in (("resourceAttributes", resource), ("nonResourceAttributes", other)):
        if value is not None and not isinstance(value, dict):
            return [errors.type_invalid(f"spec.{name}", value, "must be an object")]
    if resource is not None and other is not None:
        return [
            errors.invalid_value(
                "spec.nonResourceAttributes",
                other,
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if resource is None and other is None:
        return [
            errors.invalid_value(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def access_review(store: Store, user: User | None, token: str, body: Any) -> dict[str, Any]:
    """The SelfSubjectAccessReview ``body`` answered for its requester; 400/422 ``ApiError`` when bad."""
    review = _reviewed(body, f"{AUTHORIZATION}/v1", "SelfSubjectAccessReview")
    spec = review.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        review["spec"] = spec
    problems = _validate(spec)
    if problems:
        raise errors.invalid("SelfSubjectAccessReview", AUTHORIZATION, "", problems)
    status: dict[str, Any]
    if user is None:
        status = {"allowed": True}
    else:
        decision = authorizing.authorize(store, user, _attributes(spec))
        status = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
    review["status"] = status
    return review


def subject_review(user: User | None, token: str, body: Any) -> dict[str, Any]:
    """The SelfSubjectReview ``body`` answered with its requester's user info."""
    review = _reviewed(body, f"{AUTHENTICATION}/v1", "SelfSubjectReview")
    who = requester(user, token)
    info: dict[str, Any] = {"username": who.name}
    if who.uid:
        info["uid"] = who.uid
    if who.groups:
        info["groups"] = list(who.groups)
    if who.extra:
        info["extra"] = {key: list(values) for key, values in who.extra.items()}
    review["status"] = {"userInfo": info}
    return review


_EVERYTHING: dict[str, Any] = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}


def _listed(rule: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: list(rule[name]) for name in names if rule.get(name)}


def rules_review(store: Store, user: User | None, token: str, body: Any) -> dict[str, Any]:
    """The SelfSubjectRulesReview ``body`` answered: what its requester may do in ``spec.namespace``."""
    review = _reviewed(body, f"{AUTHORIZATION}/v1", "SelfSubjectRulesReview")
    spec = review.get("spec") if isinstance(review.get("spec"), dict) else {}
    namespace = spec.get("namespace") if isinstance(spec, dict) else None
    if not namespace or not isinstance(namespace, str):
        raise errors.invalid("SelfSubjectRulesReview", AUTHORIZATION, "", [errors.required("spec.namespace")])
    if user is None or MASTERS in user.groups:
        review["status"] = copy.deepcopy(_EVERYTHING)
        return review
    rules, problems = authorizing.rules_of(store, user, namespace)
    status: dict[str, Any] = {
        "resourceRules": [
            _listed(r, "verbs", "apiGroups", "resources", "resourceNames")
            for r in rules
            if r.get("resources")
        ],
        "nonResourceRules": [
            _listed(r, "verbs", "nonResourceURLs") for r in rules if r.get("nonResourceURLs")
        ],
        "incomplete": bool(problems),
    }
    if problems:
        status["evaluationError"] = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    review["status"] = status
    return review


def answer(path: str, store: Store, user: User | None, token: str, body: Any) -> dict[str, Any]:
    """The review at ``path`` (a key of ``PATHS``) answered."""
    _, kind = PATHS[path]
    if kind == "SelfSubjectAccessReview":
        return access_review(store, user, token, body)
    if kind == "SelfSubjectRulesReview":
        return rules_review(store, user, token, body)
    return subject_review(user, token, body)
