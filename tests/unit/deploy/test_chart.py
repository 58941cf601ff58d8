"""The arcsm Helm chart, rendered and linted by Helm itself (helm-python-sdk: Helm 4's Go SDK).

Inputs: ``deploy/charts/arcsm``, value sets a user gives (the defaults, the values file of an
upstream gha-runner-scale-set-controller install and the same settings in the layout of upstream's
gha-runner-scale-set-controller-experimental chart, high availability, one namespace, monitoring, no
persistence). Outputs: Helm's linter finds nothing wrong with any of them; the chart's version is the
package's; each upstream key does in arcsm what it did upstream (image, pull secrets, env, service
account, pod metadata and scheduling, security contexts, resources, log flags, namespaces, label
prefixes, client rate limits, listener metrics); the experimental layout renders what the same settings
render in the stable one, its key winning over its counterpart, a null not given, a map merged into
arcsm's defaults, its sidecars, extra ports, other pod fields and whole image reaching the pod, the keys
arcsm ignores named in the notes as given, a wrong value refused in one line; one replica is a
Deployment carrying the labels upstream's scale-set chart discovers its controller by (and naming the
account the experimental layout names, which that chart's scale sets bind), more replicas a StatefulSet
whose replica 0 keeps the one-replica journal; the monitoring objects and the dashboard appear only
when asked; no template reads the values but through ``arcsm.values``.
"""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any

import helm_python as helm
import pytest
import yaml

import deploy
from controller.installation import manifests

# A values file written for upstream's gha-runner-scale-set-controller chart, using its keys.
UPSTREAM_VALUES: dict[str, Any] = {
    "labels": {"team": "platform"},
    "replicaCount": 1,
    "image": {"repository": "registry.example.com/arcsm", "pullPolicy": "Always", "tag": "0.1.0"},
    "imagePullSecrets": [{"name": "regcred"}],
    "fullnameOverride": "arc-controller",
    "env": [{"name": "HTTPS_PROXY", "value": "http://proxy.example.com:3128"}],
    "serviceAccount": {"create": True, "annotations": {"iam.example.com/role": "arc"}, "name": "arc-sa"},
    "podAnnotations": {"prometheus.io/scrape": "true"},
    "podLabels": {"cost-center": "ci"},
    "podSecurityContext": {"fsGroup": 2000},
    "securityContext": {"runAsUser": 1000, "runAsNonRoot": True},
    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "200m", "memory": "256Mi"}},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "ci", "operator": "Exists", "effect": "NoSchedule"}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["system"]}]}
                ]
            }
        }
    },
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}
    ],
    "volumes": [{"name": "ca", "configMap": {"name": "corp-ca"}}],
    "volumeMounts": [{"name": "ca", "mountPath": "/etc/corp-ca"}],
    "priorityClassName": "system-cluster-critical",
    "metrics": {"controllerManagerAddr": ":8080", "listenerAddr": ":8081", "listenerEndpoint": "/metrics"},
    "flags": {
        "logLevel": "warn",
        "logFormat": "text",
        "watchSingleNamespace": "arc-runners",
        "runnerMaxConcurrentReconciles": 4,
        "excludeLabelPropagationPrefixes": ["argocd.argoproj.io/instance"],
        "k8sClientRateLimiterQPS": 50,
        "k8sClientRateLimiterBurst": 100,
    },
    "namespaceOverride": "arc-systems",
}

# The same settings in a values file written for upstream's gha-runner-scale-set-controller-experimental
# chart, using its layout (but fullnameOverride, which it does not have): the image named whole.
EXPERIMENTAL_VALUES: dict[str, Any] = {
    "labels": UPSTREAM_VALUES["labels"],
    "namespaceOverride": "arc-systems",
    "imagePullSecrets": UPSTREAM_VALUES["imagePullSecrets"],
    "controller": {
        "replicaCount": 1,
        "manager": {
            "config": UPSTREAM_VALUES["flags"],
            "container": {
                "image": "registry.example.com/arcsm:0.1.0",
                "pullPolicy": "Always",
                "env": UPSTREAM_VALUES["env"],
                "securityContext": UPSTREAM_VALUES["securityContext"],
                "resources": UPSTREAM_VALUES["resources"],
            },
        },
        "serviceAccount": UPSTREAM_VALUES["serviceAccount"],
        "pod": {
            "metadata": {
                "labels": UPSTREAM_VALUES["podLabels"],
                "annotations": UPSTREAM_VALUES["podAnnotations"],
            },
            "spec": {
                "securityContext": UPSTREAM_VALUES["podSecurityContext"],
                **{
                    key: UPSTREAM_VALUES[key]
                    for key in (
                        "priorityClassName",
                        "nodeSelector",
                        "tolerations",
                        "affinity",
                        "topologySpreadConstraints",
                        "volumes",
                    )
                },
            },
            "volumeMounts": UPSTREAM_VALUES["volumeMounts"],
        },
        "metrics": UPSTREAM_VALUES["metrics"],
    },
}

VALUE_SETS = {
    "defaults": {},
    "upstream": UPSTREAM_VALUES,
    "experimental": EXPERIMENTAL_VALUES,
    "high-availability": {"replicaCount": 3},
    "monitoring": {
        "serviceMonitor": {"enabled": True},
        "podMonitor": {"enabled": True},
        "grafanaDashboard": {"enabled": True},
    },
    "ephemeral-journal": {"journal": {"persistence": {"enabled": False}}, "service": {"enabled": False}},
    "own-service-account": {
        "serviceAccount": {"create": False, "name": "existing"},
        "leaderElection": {"enabled": False},
    },
}


def render(
    values: dict[str, Any], *, namespace: str = "arc-systems", name: str = "arcsm"
) -> list[dict[str, Any]]:
    return manifests.render_templates(manifests.Release(name=name, namespace=namespace, values=values))


def one(documents: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [found] = [d for d in documents if d["kind"] == kind]
    return found


def workload(documents: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [d for d in documents if d["kind"] in ("Deployment", "StatefulSet")]
    return found


def container(documents: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = workload(documents)["spec"]["template"]["spec"]["containers"]
    return found


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_helm_lint_finds_nothing_wrong(values: dict[str, Any]) -> None:
    report = helm.lint(str(deploy.chart_path()), values, strict=True, namespace="arc-systems")
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= 2]  # warnings and errors
    assert problems == []


def test_the_chart_is_released_with_the_package() -> None:
    chart = yaml.safe_load((deploy.chart_path() / "Chart.yaml").read_text())
    version = importlib.metadata.version("arcsm")
    assert chart["version"] == chart["appVersion"] == version
    [deployment] = [d for d in render({}) if d["kind"] == "Deployment"]
    assert container([deployment])["image"] == f"arcsm:{version}"


def test_upstream_keys_do_what_they_did_upstream() -> None:
    documents = render(UPSTREAM_VALUES, namespace="ignored-by-override")
    deployment = one(documents, "Deployment")
    pod = deployment["spec"]["template"]
    spec = pod["spec"]
    c = container(documents)
    assert deployment["metadata"]["name"] == "arc-controller"
    assert {d["metadata"].get("namespace") for d in documents} <= {"arc-systems", "arc-runners", None}
    assert deployment["metadata"]["labels"]["team"] == "platform"
    assert c["image"] == "registry.example.com/arcsm:0.1.0" and c["imagePullPolicy"] == "Always"
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert "--listener-image-pull-secret=regcred" in c["args"]
    assert {"name": "HTTPS_PROXY", "value": "http://proxy.example.com:3128"} in c["env"]
    account = one(documents, "ServiceAccount")
    assert account["metadata"]["name"] == spec["serviceAccountName"] == "arc-sa"
    assert account["metadata"]["annotations"] == {"iam.example.com/role": "arc"}
    assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert pod["metadata"]["labels"]["cost-center"] == "ci"
    # Helm merges a map of values into the default's: the given keys win, arcsm's locked-down rest stays.
    assert spec["securityContext"]["fsGroup"] == 2000 and spec["securityContext"]["runAsNonRoot"] is True
    assert (
        c["securityContext"]["runAsUser"] == 1000 and c["securityContext"]["readOnlyRootFilesystem"] is True
    )
    assert c["resources"] == UPSTREAM_VALUES["resources"]
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "priorityClassName"):
        assert spec[key] == UPSTREAM_VALUES[key], key
    assert {"name": "ca", "configMap": {"name": "corp-ca"}} in spec["volumes"]
    assert {"name": "ca", "mountPath": "/etc/corp-ca"} in c["volumeMounts"]
    args = c["args"]
    for flag in (
        "--http=:8080",
        "--listener-metrics-addr=:8081",
        "--listener-metrics-endpoint=/metrics",
        "--log-level=warn",
        "--log-format=text",
        "--namespace=arc-runners",
        "--runner-concurrency=4",
        "--exclude-label-propagation-prefix=argocd.argoproj.io/instance",
        "--qps=50",
        "--burst=100",
    ):
        assert flag in args, flag
    assert c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    # One namespace: Roles there and in the controller namespace (with the listeners' one), no ClusterRole.
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in documents if r["kind"] == "Role"}
    assert roles == {
        ("arc-runners", "arc-controller"),
        ("arc-systems", "arc-controller"),
        ("arc-systems", "arc-controller-listener"),
        ("arc-systems", "arc-controller-leader-election"),
    }
    assert not [d for d in documents if d["kind"].startswith("Cluster")]


def test_one_replica_is_the_deployment_upstreams_scale_set_chart_discovers() -> None:
    documents = render({}, name="arc")
    deployment = one(documents, "Deployment")
    labels = deployment["metadata"]["labels"]
    assert labels["app.kubernetes.io/part-of"] == "gha-rs-controller"
    assert labels["actions.github.com/controller-service-account-name"] == "arc-arcsm"
    assert labels["actions.github.com/controller-service-account-namespace"] == "arc-systems"
    assert "actions.github.com/controller-watch-single-namespace" not in labels
    assert one(documents, "ServiceAccount")["metadata"]["name"] == "arc-arcsm"
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    single = one(render({"flags": {"watchSingleNamespace": "team-a"}}), "Deployment")
    assert single["metadata"]["labels"]["actions.github.com/controller-watch-single-namespace"] == "team-a"


def test_more_replicas_keep_replica_0_on_the_one_replica_journal() -> None:
    one_replica = render({})
    claim = one(one_replica, "PersistentVolumeClaim")
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    [journal] = [
        v for v in workload(one_replica)["spec"]["template"]["spec"]["volumes"] if v["name"] == "journal"
    ]
    assert journal["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]

    replicated = render({"replicaCount": 3})
    sts = one(replicated, "StatefulSet")
    [template] = sts["spec"]["volumeClaimTemplates"]
    # A StatefulSet names replica N's claim <template>-<set>-<N>.
    assert f"{template['metadata']['name']}-{sts['metadata']['name']}-0" == claim["metadata"]["name"]
    assert template["spec"] == claim["spec"]
    assert "PersistentVolumeClaim" not in {d["kind"] for d in replicated}
    assert one(replicated, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    assert "PodDisruptionBudget" not in {d["kind"] for d in one_replica}
    assert "--leader-elect" in container(replicated)["args"]


def test_the_controller_runs_locked_down_with_probes_on_its_http_port() -> None:
    documents = render({})
    c = container(documents)
    spec = workload(documents)["spec"]["template"]["spec"]
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert spec["securityContext"]["runAsUser"] == 65532 and spec["securityContext"]["runAsNonRoot"] is True
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert c["readinessProbe"]["failureThreshold"] == 3
    assert c["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert mounts == {"journal": "/var/lib/arcsm", "tmp": "/tmp"}
    assert "--journal=/var/lib/arcsm/journal.db" in c["args"]
    service = one(documents, "Service")
    assert service["spec"]["selector"] == workload(documents)["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_runner_reconciles_in_flight_default_to_upstreams_two() -> None:
    assert "--runner-concurrency=2" in container(render({}))["args"]
    given = container(render({"flags": {"runnerMaxConcurrentReconciles": 5}}))["args"]
    assert [a for a in given if a.startswith("--runner-concurrency")] == ["--runner-concurrency=5"]


def test_the_http_bounds_are_arcsms_defaults_unless_given() -> None:
    assert not [a for a in container(render({}))["args"] if a.startswith("--http-")]
    given = {
        "maxConnections": 64,
        "maxStreams": 8,
        "headerTimeout": 5,
        "idleTimeout": 2.5,
        "writeTimeout": 12,
    }
    args = container(render({"http": given}))["args"]
    assert [a for a in args if a.startswith("--http-")] == [
        "--http-max-connections=64",
        "--http-max-streams=8",
        "--http-header-timeout=5",
        "--http-idle-timeout=2.5",
        "--http-write-timeout=12",
    ]


def test_the_journal_can_be_sized_classed_or_ephemeral() -> None:
    sized = one(
        render({"journal": {"persistence": {"size": "10Gi", "storageClass": "fast-ssd"}}}),
        "PersistentVolumeClaim",
    )
    assert sized["spec"]["resources"]["requests"]["storage"] == "10Gi"
    assert sized["spec"]["storageClassName"] == "fast-ssd"
    unclassed = one(render({"journal": {"persistence": {"storageClass": "-"}}}), "PersistentVolumeClaim")
    assert unclassed["spec"]["storageClassName"] == ""
    assert "storageClassName" not in one(render({}), "PersistentVolumeClaim")["spec"]
    ephemeral = render({"journal": {"persistence": {"enabled": False}}})
    assert "PersistentVolumeClaim" not in {d["kind"] for d in ephemeral}
    volumes = workload(ephemeral)["spec"]["template"]["spec"]["volumes"]
    assert {"name": "journal", "emptyDir": {}} in volumes
    retention = container(
        render({"journal": {"retention": {"days": 3, "bytes": "500Mi"}, "history": {"days": 30}}})
    )
    assert {"--journal-retain-days=3", "--journal-retain-bytes=500Mi", "--history-retain-days=30"} <= set(
        retention["args"]
    )


def test_monitoring_objects_appear_only_when_asked() -> None:
    assert not {"ServiceMonitor", "PodMonitor", "ConfigMap"} & {d["kind"] for d in render({})}
    documents = render(VALUE_SETS["monitoring"])
    monitor = one(documents, "ServiceMonitor")
    assert monitor["spec"]["endpoints"] == [
        {"port": "http", "path": "/metrics", "honorLabels": True, "interval": "30s"}
    ]
    assert (
        monitor["spec"]["selector"]["matchLabels"] == workload(documents)["spec"]["selector"]["matchLabels"]
    )
    pods = one(documents, "PodMonitor")
    assert pods["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/component": "runner-scale-set-listener"
    }
    assert pods["spec"]["podMetricsEndpoints"][0]["targetPort"] == 8080
    assert pods["spec"]["podMetricsEndpoints"][0]["honorLabels"] is True
    dashboard = one(documents, "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = sorted(p.name for p in (deploy.chart_path() / "dashboards").glob("*.json"))
    assert shipped and sorted(dashboard["data"]) == shipped
    for text in dashboard["data"].values():
        assert json.loads(text)["panels"]


def test_notes_say_which_upstream_keys_arcsm_ignores() -> None:
    with helm.Chart.load(str(deploy.chart_path())) as chart:
        plain = chart.render({}, name="arcsm", namespace="arc-systems")
        ignored = chart.render(
            {"pprof": {"addr": ":6060"}, "flags": {"healthProbeBindAddress": ":8081", "rateLimiter": "x"}},
            name="arcsm",
            namespace="arc-systems",
        )
    notes = "arcsm/templates/NOTES.txt"
    assert "Ignored" not in plain[notes] and "it finds this controller by itself" in plain[notes]
    assert "pprof" not in plain[notes] and "/debug/" not in plain[notes]
    line = next(line for line in ignored[notes].splitlines() if line.startswith("Ignored"))
    assert line.startswith("Ignored (arcsm has no use for them): flags.healthProbeBindAddress")
    assert "flags.rateLimiter" in line and "pprof" not in line


def test_upstream_s_pprof_addr_turns_on_the_debug_endpoints_on_the_http_port() -> None:
    for values in ({}, {"pprof": {}}, {"pprof": {"addr": ""}}):
        assert "--debug-endpoints" not in container(render(values))["args"], values
    values = {"pprof": {"addr": ":6060"}, "metrics": {"controllerManagerAddr": ":9090"}}
    pod = container(render(values))
    assert "--debug-endpoints" in pod["args"] and "--http=:9090" in pod["args"]
    assert not [arg for arg in pod["args"] if "6060" in arg]
    assert [port["containerPort"] for port in pod["ports"]] == [9090]  # nothing listens on pprof's address
    with helm.Chart.load(str(deploy.chart_path())) as chart:
        notes = chart.render(values, name="arcsm", namespace="arc-systems")["arcsm/templates/NOTES.txt"]
    assert "turns on arcsm's debug endpoints instead, on the HTTP port 9090 (not on :6060)" in notes
    assert "curl -s localhost:8080/debug/stacks" in notes and "/debug/profile?seconds=" in notes


# -- the layout of upstream's experimental controller chart --------------------------------------------


def experimental(**controller: Any) -> list[dict[str, Any]]:
    return render({"controller": controller})


def test_experimental_keys_mean_what_the_same_settings_mean_in_upstreams_layout() -> None:
    same = {key: value for key, value in UPSTREAM_VALUES.items() if key != "fullnameOverride"}
    assert render(EXPERIMENTAL_VALUES) == render(same)
    # The Deployment-level labels of the experimental layout: arcsm puts them on all its objects.
    labelled = experimental(metadata={"labels": {"tier": "ci"}})
    assert {d["kind"] for d in labelled if d["metadata"]["labels"].get("tier") == "ci"} >= {
        "Deployment",
        "ServiceAccount",
        "ClusterRole",
    }


def test_an_experimental_key_wins_a_null_is_not_given_and_a_map_merges_into_arcsms_defaults() -> None:
    given = render(
        {
            "flags": {"logLevel": "error", "k8sClientRateLimiterQPS": 7},
            "controller": {
                "manager": {
                    "config": {"logLevel": "debug", "k8sClientRateLimiterQPS": None},
                    "container": {"securityContext": {"runAsUser": 1000, "readOnlyRootFilesystem": False}},
                },
                "serviceAccount": {"create": False, "name": "existing"},
                "pod": {"spec": {"terminationGracePeriodSeconds": None}},
            },
        }
    )
    c = container(given)
    assert "--log-level=debug" in c["args"] and "--qps=7" in c["args"]
    assert c["securityContext"]["runAsUser"] == 1000
    assert c["securityContext"]["readOnlyRootFilesystem"] is False  # false is given, not dropped
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}  # arcsm's default stays
    assert workload(given)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    assert "ServiceAccount" not in {d["kind"] for d in given}
    assert workload(given)["spec"]["template"]["spec"]["serviceAccountName"] == "existing"
    assert workload(experimental(replicaCount=2))["kind"] == "StatefulSet"


def test_what_only_the_experimental_layout_says_goes_to_the_pod_as_there() -> None:
    sidecar = {"name": "proxy", "image": "registry.example.com/proxy:1"}
    documents = experimental(
        manager={"container": {"extraPorts": [{"name": "debug", "containerPort": 9999, "protocol": "TCP"}]}},
        pod={"spec": {"containers": [sidecar], "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["github"]}]}},
    )
    spec = workload(documents)["spec"]["template"]["spec"]
    arcsm, proxy = spec["containers"]
    assert arcsm["name"] == "arcsm" and proxy == sidecar
    assert arcsm["ports"][1] == {"name": "debug", "containerPort": 9999, "protocol": "TCP"}
    assert spec["hostAliases"] == [{"ip": "10.0.0.1", "hostnames": ["github"]}]
    # The image named whole serves the listeners too.
    named = container(experimental(manager={"container": {"image": "registry.example.com/arcsm@sha256:ab"}}))
    assert named["image"] == "registry.example.com/arcsm@sha256:ab"
    env = {e["name"]: e.get("value") for e in named["env"]}
    assert env["CONTROLLER_MANAGER_CONTAINER_IMAGE"] == "registry.example.com/arcsm@sha256:ab"


def test_the_experimental_scale_set_chart_binds_the_account_the_experimental_values_name() -> None:
    # That chart looks for no controller: its controllerServiceAccount names the account, which keeps
    # its name when arcsm is installed with the controller values it was given.
    documents = experimental(serviceAccount={"name": "arc-gha-rs-controller"})
    assert one(documents, "ServiceAccount")["metadata"]["name"] == "arc-gha-rs-controller"
    labels = one(documents, "Deployment")["metadata"]["labels"]
    assert labels["actions.github.com/controller-service-account-name"] == "arc-gha-rs-controller"
    with helm.Chart.load(str(deploy.chart_path())) as chart:
        notes = chart.render(
            {"controller": {"serviceAccount": {"name": "arc-gha-rs-controller"}}},
            name="arcsm",
            namespace="arc-systems",
        )["arcsm/templates/NOTES.txt"]
    assert "--set controllerServiceAccount.name=arc-gha-rs-controller" in notes


def test_notes_name_the_experimental_keys_arcsm_ignores_as_given() -> None:
    with helm.Chart.load(str(deploy.chart_path())) as chart:
        notes = chart.render(
            {
                "controller": {
                    "manager": {
                        "container": {"extraArgs": ["--auto-scaling-runner-set-only"]},
                        "config": {"healthProbeBindAddress": ":8081", "rateLimiter": {"name": "bucket"}},
                    }
                }
            },
            name="arcsm",
            namespace="arc-systems",
        )["arcsm/templates/NOTES.txt"]
    [line] = [line for line in notes.splitlines() if line.startswith("Ignored")]
    assert "controller.manager.container.extraArgs" in line
    assert "controller.manager.config.healthProbeBindAddress" in line
    assert "controller.manager.config.rateLimiter" in line
    assert "flags." not in line


def test_a_wrong_experimental_value_is_refused_in_one_line() -> None:
    with pytest.raises(manifests.RenderError, match="values don't meet the specifications") as refused:
        experimental(manager={"config": {"logLevel": "loud"}})
    assert "\n" not in str(refused.value)


def test_no_template_reads_the_values_but_through_arcsm_values() -> None:
    # Else a key of the experimental layout would not reach it.
    templates = deploy.chart_path() / "templates"
    readers = [p.name for p in templates.iterdir() if p.name != "_values.tpl" and ".Values" in p.read_text()]
    assert readers == []
