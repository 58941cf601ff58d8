"""A real Kubernetes control plane for the test world, built from the Go module proxy.

``build`` makes etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl at the pinned
release (the wrapper modules under ``gomod/``) into a cache outside the checkout; ``pki`` makes the
cluster's certificates and keys; ``cluster.ControlPlane`` starts the four components on loopback; and
``world.RealWorld`` adds the emulated node (``sim.node``) and the fake GitHub, so a story written for the
emulated world (``sim.world.World``) runs on a real kube-apiserver unchanged.
"""
