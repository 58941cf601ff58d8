"""A stand-in for upstream's gha-runner-scale-set Helm chart (0.14.x), part of the emulated world.

No upstream chart can be fetched where arcsm is developed and tested, so this one is written from the
facts of upstream's templates: how it finds the controller (a ``lookup`` of the Deployments labelled
``app.kubernetes.io/part-of=gha-rs-controller``, read for their controller-service-account labels, failing
as upstream does for none or several), the objects it makes for a release named like its scale set
(``<name>-gha-rs-manager`` Role and RoleBinding, ``-no-permission`` or ``-kube-mode`` ServiceAccounts, the
``-github-secret``), their labels, the scale set's cleanup annotations and the cleanup-protection
finalizers, and the runner pod of the default, ``dind`` and ``kubernetes`` container modes. Rendered for
the same values, its objects equal upstream's chart's but for how the manager Role groups its rules.

Render it with Helm against a cluster (``helm_python.Config(...).render``) so that its lookup asks that
cluster, as ``helm install`` would. It is not upstream's chart.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def path() -> Path:
    """The chart's directory."""
    return Path(str(resources.files(__name__)))
