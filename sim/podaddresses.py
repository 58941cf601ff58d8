"""Pod addresses: loopback addresses in 127.244.0.0/16, each handed out once per process.

Every 127/8 address is on Linux's loopback interface and can be bound with no configuration, so a
simulated container can serve on its pod's address (the listener's metrics) and a test on the host reach
it at ``http://<podIP>:<port>``, as it would through a pod network.

The sequence is one per process, not one per kubelet: the addresses are the host's, and two worlds in one
process must never give two live pods the same one. It starts at a random place, so that two test
processes on one machine are unlikely to bind the same address at once. Hosts ``.2`` to ``.251`` of each
/24 are used (64,000 addresses before the sequence wraps).
"""

from __future__ import annotations

import itertools
import random
from typing import Final

PREFIX: Final = "127.244"
PER_SUBNET: Final = 250
SIZE: Final = 256 * PER_SUBNET

_sequence = itertools.count(random.randrange(SIZE))


def address(n: int) -> str:
    """The ``n``-th pod address (modulo the pool's size)."""
    n %= SIZE
    return f"{PREFIX}.{n // PER_SUBNET}.{n % PER_SUBNET + 2}"


def allocate() -> str:
    """A pod address no other pod of this process was given (until the pool wraps)."""
    return address(next(_sequence))
