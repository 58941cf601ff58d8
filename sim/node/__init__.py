"""The kubelet's way to an API server over HTTP(S): what makes ``sim.kubelet.Kubelet`` a node of a real
control plane.

``kubeapi.KubeApi`` is a small JSON client (aiohttp, a client certificate or a bearer token) of the few
verbs a kubelet uses; ``httpapi.HttpNodeApi`` is the kubelet's node API (``sim.nodeapi``) over it, asking
only what the Node authorizer lets a kubelet ask. The kubelet itself, its pod workers and what runs in
its containers are the emulated world's (``sim.kubelet``, ``sim.podworkers``, ``sim.runtimes``): one
kubelet, two worlds.
"""
