"""A stand-in for upstream's gha-runner-scale-set-experimental Helm chart (0.14.2), part of the emulated
world.

Upstream ships it beside the stable gha-runner-scale-set chart (``sim.scalesetchart``) with a values
layout of its own; this one is written from the facts of its values and templates, for the keys a user
sets to install a scale set: ``scaleset.name``, ``.runnerGroup`` (``default`` unless given),
``.labels``, ``.minRunners`` and ``.maxRunners``; ``auth.url`` with ``auth.githubToken`` (a
``<name>-github-secret`` it makes) or ``auth.secretName``; ``controllerServiceAccount.name`` and
``.namespace``, which it requires, as it looks for no controller in the cluster; ``runner.mode``
(``""``, ``dind`` or ``kubernetes``) with ``runner.container``, ``runner.env``, ``runner.pod.metadata``
and ``runner.pod.spec`` (extra containers, init containers and volumes after the chart's own, any other
field as it is), ``runner.dind.copyRunnerExternals`` and ``runner.kubernetesMode.serviceAccountName`` and
``.workVolumeClaim``; ``namespaceOverride``.

What it renders, as upstream's does: the AutoscalingRunnerSet named after the release (not after
``scaleset.name``, which is the name it registers at GitHub), with the chart's labels, the values hash
and the cleanup annotations; the ``<name>-manager-role`` Role and RoleBinding; the runners'
``<name>-no-permission`` ServiceAccount, or in kubernetes mode the ``<name>-kube-mode`` ServiceAccount,
Role and RoleBinding; the GitHub Secret; the cleanup-protection finalizer on each of them. Its runner pod
template carries no ``restartPolicy`` (the API server defaults it to Always, where the stable chart says
Never); each mode's runner container, init containers and volumes are upstream's, down to the dind
volumes the default mode gets once a user gives volumes. For the same values its objects equal
upstream's but for how the manager Role groups its rules.

What it leaves out: GitHub App credentials, ``secretResolution`` (vaults) and ``proxy``,
``githubServerTLS``, the listener's pod template and metrics, the ``resource.*`` labels, annotations
and extra rules, the kubernetes mode's hook extension and its ``default``, ``hookPath`` and
``requireJobContainer`` settings, and the dind mode's settings but ``copyRunnerExternals``.

Render it with Helm (``controller.installation.manifests.render_templates`` with ``chart=path()``).
It is not upstream's chart.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def path() -> Path:
    """The chart's directory."""
    return Path(str(resources.files(__name__)))
