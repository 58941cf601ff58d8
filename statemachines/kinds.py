"""The four custom resource kinds of ``actions.github.com/v1alpha1`` and the names they are served under.

One table for the whole project: the CRD declarations (``controller.installation.resources``) take their
plural and singular from it, the executor builds REST paths from it, and the machines and tests name kinds by
it. The names are upstream actions-runner-controller's; its CRDs declare no short names, and neither do these.
Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

GROUP: Final = "actions.github.com"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"


@dataclass(frozen=True)
class ArcKind:
    """A kind's name and the resource names it is served under."""

    kind: str
    plural: str
    singular: str
    group: str = GROUP
    version: str = VERSION

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


AUTOSCALING_RUNNER_SET: Final = ArcKind(
    "AutoscalingRunnerSet", "autoscalingrunnersets", "autoscalingrunnerset"
)
EPHEMERAL_RUNNER_SET: Final = ArcKind("EphemeralRunnerSet", "ephemeralrunnersets", "ephemeralrunnerset")
EPHEMERAL_RUNNER: Final = ArcKind("EphemeralRunner", "ephemeralrunners", "ephemeralrunner")
AUTOSCALING_LISTENER: Final = ArcKind("AutoscalingListener", "autoscalinglisteners", "autoscalinglistener")

ALL: Final = (AUTOSCALING_RUNNER_SET, EPHEMERAL_RUNNER_SET, EPHEMERAL_RUNNER, AUTOSCALING_LISTENER)
BY_KIND: Final[Mapping[str, ArcKind]] = {k.kind: k for k in ALL}
PLURALS: Final[Mapping[str, str]] = {k.kind: k.plural for k in ALL}

# Short names for the four kinds, as the seed's code and the tests write them.
ARS: Final = AUTOSCALING_RUNNER_SET.kind
ERS: Final = EPHEMERAL_RUNNER_SET.kind
ER: Final = EPHEMERAL_RUNNER.kind
AL: Final = AUTOSCALING_LISTENER.kind
