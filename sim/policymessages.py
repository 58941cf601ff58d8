"""The protobuf messages of policy/v1 PodDisruptionBudgets (and meta/v1's Condition).

Declared as data in the format of ``sim.protoschemas`` (see ``sim.podmessages`` for ``keep`` and
``inline``); field numbers and names are those of k8s.io/api v0.34's ``generated.proto`` and ``types.go``.
"""

from __future__ import annotations

from sim.protoschemas import Field
from sim.protoschemas import field as _f

MESSAGES: dict[str, dict[int, Field]] = {
    "PodDisruptionBudget": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "PodDisruptionBudgetSpec", keep=True),
        3: _f("status", "msg", "PodDisruptionBudgetStatus", keep=True),
    },
    "PodDisruptionBudgetSpec": {
        1: _f("minAvailable", "intorstr", keep=True),
        2: _f("selector", "msg", "LabelSelector", keep=True),
        3: _f("maxUnavailable", "intorstr", keep=True),
        4: _f("unhealthyPodEvictionPolicy", "str", keep=True),
    },
    "PodDisruptionBudgetStatus": {
        1: _f("observedGeneration", "int"),
        2: _f("disruptedPods", "map", "time"),
        3: _f("disruptionsAllowed", "int", keep=True),
        4: _f("currentHealthy", "int", keep=True),
        5: _f("desiredHealthy", "int", keep=True),
        6: _f("expectedPods", "int", keep=True),
        7: _f("conditions", "msg", "Condition", repeated=True),
    },
}
