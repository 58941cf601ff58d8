"""What the control plane publishes about itself: the ``kubernetes`` Service with its Endpoints and
EndpointSlice, and the ``kube-root-ca.crt`` ConfigMap in every namespace.

* ``publish_api_endpoint`` is kube-apiserver's bootstrap controller and endpoint reconciler: the Service
  ``default/kubernetes`` (ClusterIP ``10.96.0.1``, port ``https`` 443 → the HTTPS port, labels
  ``component: apiserver`` and ``provider: kubernetes``), the Endpoints ``default/kubernetes`` (not
  mirrored: ``endpointslice.kubernetes.io/skip-mirror``) and the EndpointSlice ``default/kubernetes``, both
  naming the address the API server listens on. ``sim.environment`` builds a process container's
  ``KUBERNETES_SERVICE_*`` variables from that endpoint: nothing on the host stands for kube-proxy, so the
  ClusterIP would lead nowhere.
* ``RootCAPublisher`` is kube-controller-manager's root-ca-cert-publisher: in every namespace that is not
  terminating it keeps the ConfigMap ``kube-root-ca.crt`` holding the cluster CA (``ca.crt``) and its
  description annotation, recreating it when deleted and restoring it when edited. Pods read it through
  their service-account volume (``sim.volumes``).

Known limits: the Service, Endpoints and EndpointSlice are written once when the world starts (the real
reconciler rewrites them every ten seconds, so a deleted one comes back; here it does not).
"""

from __future__ import annotations

import logging
from typing import Any

from sim import certificates
from sim.apiserver import ApiServer
from sim.store import Event
from sim.workqueue import QueueController, meta

log = logging.getLogger("arcsm.sim.publishing")

KUBERNETES = "kubernetes"
ROOT_CA = "kube-root-ca.crt"
ROOT_CA_KEY = "ca.crt"
DESCRIPTION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters."
)
NAMESPACES = ("", "namespaces")
CONFIGMAPS = ("", "configmaps")


def _kind(api: ApiServer, group: str, version: str, plural: str) -> Any:
    kind = api.registry.get(group, version, plural)
    assert kind is not None, plural
    return kind


def publish_api_endpoint(api: ApiServer, *, address: str, port: int) -> None:
    """Write ``default/kubernetes`` (Service, Endpoints, EndpointSlice) for the HTTPS site at
    ``address:port``; a world without the ``default`` namespace gets none."""
    if api.store.get(("", "namespaces", "", "default")) is None:
        return
    labels = {"component": "apiserver", "provider": KUBERNETES}
    service = {
        "metadata": {"name": KUBERNETES, "namespace": "default", "labels": labels},
        "spec": {
            "clusterIP": certificates.SERVICE_IP,
            "clusterIPs": [certificates.SERVICE_IP],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    }
    endpoints = {
        "metadata": {
            "name": KUBERNETES,
            "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [
            {"addresses": [{"ip": address}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
        ],
    }
    slice_ = {
        "metadata": {
            "name": KUBERNETES,
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": KUBERNETES},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    for (group, version, plural), body in (
        (("", "v1", "services"), service),
        (("", "v1", "endpoints"), endpoints),
        (("discovery.k8s.io", "v1", "endpointslices"), slice_),
    ):
        kind = _kind(api, group, version, plural)
        existing = api.store.get(api.key(kind, "default", KUBERNETES))
        if existing is None:
            api.create(kind, "default", body)
        else:
            api.update(
                kind,
                "default",
                KUBERNETES,
                {**existing, **{k: v for k, v in body.items() if k != "metadata"}},
            )


def root_ca_configmap(ca_pem: str) -> dict[str, Any]:
    return {
        "metadata": {"name": ROOT_CA, "annotations": {DESCRIPTION: ROOT_CA_DESCRIPTION}},
        "data": {ROOT_CA_KEY: ca_pem},
    }


class RootCAPublisher(QueueController[str]):
    """Keeps ``kube-root-ca.crt`` in every namespace (run as a world controller)."""

    logger = log
    what = "root-ca-publisher: namespace"
    ignored_codes = frozenset({403, 404, 409})
    api_error_level = logging.WARNING

    def __init__(self, ca_pem: str | None = None) -> None:
        super().__init__()
        self._ca_pem = ca_pem

    @property
    def ca_pem(self) -> str:
        if self._ca_pem is None:
            self._ca_pem = certificates.material().ca_cert.decode()
        return self._ca_pem

    def on_event(self, event: Event) -> None:
        type_key = event.key[:2]
        if type_key == NAMESPACES and event.type != "DELETED":
            self._queue.add(event.key[3])
        elif type_key == CONFIGMAPS and event.key[3] == ROOT_CA:
            self._queue.add(event.key[2])

    def seed(self, api: ApiServer) -> None:
        for ns in api.store.items(NAMESPACES):
            self._queue.add(meta(ns)["name"])

    def handle(self, api: ApiServer, namespace: str) -> None:
        ns = api.store.get(("", "namespaces", "", namespace))
        if ns is None or meta(ns).get("deletionTimestamp"):
            return
        kind = _kind(api, "", "v1", "configmaps")
        wanted = root_ca_configmap(self.ca_pem)
        existing = api.store.get(("", "configmaps", namespace, ROOT_CA))
        if existing is None:
            api.create(kind, namespace, wanted)
            return
        annotations = dict(meta(existing).get("annotations") or {})
        if existing.get("data") == wanted["data"] and annotations.get(DESCRIPTION):
            return
        # As upstream: the data replaced whole, the description added only when missing.
        annotations.setdefault(DESCRIPTION, ROOT_CA_DESCRIPTION)
        body = {
            **existing,
            "data": wanted["data"],
            "metadata": {**meta(existing), "annotations": annotations},
        }
        api.update(kind, namespace, ROOT_CA, body)
