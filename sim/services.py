"""Registry rules of Services: their defaults, the cluster IPs and node ports kube-apiserver allocates,
and what may not change once allocated.

Pure functions over JSON-shaped dicts; what is already allocated comes in as arguments. Upstream:
``SetDefaults_Service`` and the Service REST storage's allocators (``pkg/registry/core/service``).

* ``default_service`` - ``type`` ClusterIP, ``sessionAffinity`` None, ports' ``protocol`` TCP and
  ``targetPort`` = ``port``, ``internalTrafficPolicy`` Cluster (``externalTrafficPolicy`` Cluster too for
  NodePort and LoadBalancer), ``status.loadBalancer: {}``.
* ``allocate`` - on create: a ``clusterIP`` from ``SERVICE_CIDR`` (``10.96.0.0/16``, kind's; the first
  address is the ``kubernetes`` Service's, as upstream keeps it) unless one is asked for or the Service is
  headless (``None``) or an ExternalName; ``clusterIPs``, ``ipFamilies: [IPv4]``, ``ipFamilyPolicy``
  SingleStack; a ``nodePort`` (30000-32767) for every port of a NodePort or LoadBalancer Service.
  Helm's ``--wait`` waits for a Service to have its cluster IP.
* ``keep_allocated`` - an update that leaves the allocated fields out keeps them
  (``patchAllocatedValues``), so a PUT of a manifest does not lose the cluster IP;
  ``validate_update`` refuses to change a cluster IP (``may not change once set``).

Known limits: IPv4 only; addresses are handed out in order, not at random; a requested cluster IP or
node port is not checked against the range or against other Services; no Endpoints, EndpointSlices or
load balancer status are simulated (nothing routes traffic), and ``type`` changes do not release or
allocate anything.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Mapping
from typing import Any

from sim import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/16")
NODE_PORTS = range(30000, 32768)
_ALLOCATED = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")


def _type(spec: Mapping[str, Any]) -> str:
    return str(spec.get("type") or "ClusterIP")


def default_service(service: Mapping[str, Any], *, create: bool = True) -> Obj:
    """The scheme defaults (and, on ``create``, the empty status a new Service has)."""
    out: Obj = copy.deepcopy(dict(service))
    spec: Obj = dict(out.get("spec") or {})
    spec.setdefault("type", "ClusterIP")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    ports = []
    for port in spec.get("ports") or []:
        if isinstance(port, Mapping):
            port = dict(port)
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
        ports.append(port)
    if "ports" in spec:
        spec["ports"] = ports
    if _type(spec) != "ExternalName" and not spec.get("internalTrafficPolicy"):
        spec["internalTrafficPolicy"] = "Cluster"
    if _type(spec) in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    out["spec"] = spec
    if create:
        out["status"] = {"loadBalancer": {}}
    return out


def allocate(service: Obj, used_ips: set[str], used_ports: set[int]) -> Obj:
    """The Service as created: cluster IP, IP families and node ports filled in."""
    spec: Obj = dict(service.get("spec") or {})
    if _type(spec) == "ExternalName":
        return service
    ip = spec.get("clusterIP") or ((spec.get("clusterIPs") or [None])[0])
    if not ip:
        reserved = {str(SERVICE_CIDR.network_address + 1), *used_ips}
        ip = next(str(a) for a in SERVICE_CIDR.hosts() if str(a) not in reserved)
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]
    if ip != "None" or spec.get("selector"):
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    if _type(spec) in ("NodePort", "LoadBalancer"):
        taken = set(used_ports)
        ports = []
        for port in spec.get("ports") or []:
            port = dict(port)
            if not port.get("nodePort"):
                port["nodePort"] = next(p for p in NODE_PORTS if p not in taken)
            taken.add(int(port["nodePort"]))
            ports.append(port)
        spec["ports"] = ports
    return {**service, "spec": spec}


def keep_allocated(old: Mapping[str, Any], new: Obj) -> Obj:
    """``patchAllocatedValues``: allocated fields an update leaves out keep their values."""
    old_spec = old.get("spec") or {}
    spec: Obj = dict(new.get("spec") or {})
    if _type(spec) == "ExternalName":
        return new
    for key in _ALLOCATED:
        if not spec.get(key) and old_spec.get(key):
            spec[key] = copy.deepcopy(old_spec[key])
    old_ports = {
        (p.get("port"), p.get("protocol")): p for p in old_spec.get("ports") or [] if isinstance(p, Mapping)
    }
    if _type(spec) in ("NodePort", "LoadBalancer"):
        ports = []
        for port in spec.get("ports") or []:
            port = dict(port)
            before = old_ports.get((port.get("port"), port.get("protocol")))
            if not port.get("nodePort") and before is not None and before.get("nodePort"):
                port["nodePort"] = before["nodePort"]
            ports.append(port)
        spec["ports"] = ports
    return {**new, "spec": spec}


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if _type(old_spec) == "ExternalName" or _type(new_spec) == "ExternalName":
        return []
    before, after = old_spec.get("clusterIPs") or [], new_spec.get("clusterIPs") or []
    if before and after and before[0] != after[0]:
        return [errors.invalid_value("spec.clusterIPs[0]", after, "may not change once set")]
    return []


def allocated(services: list[Obj]) -> tuple[set[str], set[int]]:
    """The cluster IPs and node ports the stored ``services`` hold."""
    ips: set[str] = set()
    ports: set[int] = set()
    for service in services:
        spec = service.get("spec") or {}
        ips.update(str(ip) for ip in spec.get("clusterIPs") or [] if ip and ip != "None")
        ports.update(
            int(p["nodePort"])
            for p in spec.get("ports") or []
            if isinstance(p, Mapping) and p.get("nodePort")
        )
    return ips, ports
