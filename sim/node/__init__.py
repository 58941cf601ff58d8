"""An emulated node that is a client of an API server: the test world's kubelet on a real control plane.

``agent.NodeAgent`` does what a kubelet does toward the API, over HTTP(S) like any client: it registers
a Node with capacity, addresses and the Ready condition, renews its Lease in ``kube-node-lease``, lists
and watches the pods bound to it, writes their ``pods/status`` in a kubelet's order and honours graceful
deletion with the final delete (grace period 0, uid precondition). What runs in a container is the
simulated GitHub runner or arcsm's listener (``node.containers``); every other container runs until its
pod is deleted. kube-scheduler binds the pods; kube-controller-manager sees the node through its Lease.
"""
