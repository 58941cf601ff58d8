"""The AutoscalingRunnerSet's conditions (``Ready``, ``ConfigurationValid``) and the configuration checks
behind ``ConfigurationValid``.

A pass of the ARS machine states its conditions once, at its end (``statemachines.conditions``):

* ``Ready`` is True exactly when the phase is Running, with two exceptions. A derived object the API
  server refuses or that cannot be built (``REFUSED_REASONS``: the runner set, the listener, a runner or
  one of the listener's objects: its ServiceAccount, Role, RoleBinding, config or proxy Secret, pod)
  makes ``Ready`` False with that reason whatever the phase (``refusals``): ``Ready`` is never True
  while a dependent cannot be built. And a Running scale
  set whose runner set reports that the API server refuses its runners' pods (its ``Ready`` False with
  ``RunnerPodsRefused``) is not Ready: ``Ready`` is False with that reason and the runner set's one-line
  message, and a Warning Event says it once. When a transition of the pass changed the phase, its reason
  is the trigger in CamelCase and its message the transition's reason; otherwise the observed ``Ready`` is
  restated when its status still holds (so a settled pass writes nothing), or the phase name is the
  reason. A scale set without a phase yet states no ``Ready``.
* ``ConfigurationValid`` is False with one of ``Reason`` when the pass found bad input, True (``Valid``)
  once the pass got past every check (it reached the runner set step: the spec checks passed and the
  Actions service accepted the credentials for the scale set), and not stated by a pass that learned
  neither (one that ended waiting for an answer or a deletion).

The bad inputs, and where each is found:

=======================  ======================================================  =======================
reason                   what is wrong                                           found by
=======================  ======================================================  =======================
InvalidConfigUrl         ``spec.githubConfigUrl`` names no enterprise,           the spec check; the
                         organization or repository, or names one with           executor's
                         characters GitHub names cannot hold (unicode, ``%``)    ``InvalidConfigUrl``
ConfigUrlUnreachable     the host of ``spec.githubConfigUrl`` does not answer    ``ServiceUnreachable``
                         (connection refused, a timeout, no such host)
VaultConfigInvalid       ``spec.vaultConfig`` names a type other than            the spec check; the
                         ``azure_key_vault``, or its ``azureKeyVault`` lacks     executor's
                         ``url``, ``tenantId``, ``clientId`` or                  ``VaultConfigInvalid``
                         ``certificatePath``, or its url is no https URL
VaultCertificateMissing  no file at ``certificatePath`` (in the controller's     ``VaultCertificateMissing``
                         pod)
VaultCertificateInvalid  the file holds no PEM certificate with its RSA key      ``VaultCertificateInvalid``
VaultAccessDenied        Microsoft Entra refused the tenant, client or           ``VaultAccessDenied``
                         certificate, or the vault refused the client
VaultUnreachable         the vault or Entra does not answer (or the vault's      ``VaultUnreachable``
                         proxy refuses)
VaultSecretMissing       the vault has no secret ``spec.githubConfigSecret``     ``VaultSecretMissing``
VaultSecretInvalid       that secret is no GitHub credential JSON                ``VaultSecretInvalid``
InvalidRunnerLimits      ``spec.maxRunners`` < ``spec.minRunners`` (both set)    the spec check
ConfigSecretMissing      ``spec.githubConfigSecret`` is empty, or the Secret     the spec check; the
                         it names does not exist                                 executor's
                                                                                 ``ConfigSecretMissing``
ConfigSecretIncomplete   the Secret holds no usable credentials                  ``ConfigSecretIncomplete``
CredentialsRejected      GitHub refused the credentials (401/403)                ``AuthenticationFailed``
RunnerGroupNotFound      ``spec.runnerGroup`` names no runner group of the       ``RunnerGroupNotFound``
                         config URL's enterprise, organization or repository
ScaleSetNameTaken        another AutoscalingRunnerSet (named in the message)     ``claims.refusal``,
                         holds the Actions scale set of this config URL,         before the scale set
                         runner group and ``runnerScaleSetName``                 step
InvalidProxyUrl          ``spec.proxy.http(s).url`` is no http(s) URL with a     the spec check; the
                         host and a numeric port (never quoted: it may hold a    executor's
                         password)                                               ``InvalidProxyUrl``
RunnerContainerMissing   ``spec.template.spec.containers`` has none named        the spec check
                         ``runner`` (the one given the JIT config: runners
                         would never register)
RootCAMissing            the ConfigMap ``spec.githubServerTLS`` names, or its    ``RootCAMissing``
                         key, does not exist
RootCAInvalid            that key holds no PEM certificate                       ``RootCAInvalid``
ProxySecretMissing       a ``spec.proxy.*.credentialSecretRef`` Secret does not  ``ProxySecretMissing``
                         exist in the scale set's namespace
=======================  ======================================================  =======================

The spec checks run before the scale set step, so nothing is created in the Actions service or the cluster for
a spec that cannot work (a name in the URL that GitHub cannot have would register a scale set whose labels the
API server then refuses, leaving a registration no annotation records); the executor's answers stop the pass
where the failed call was asked. Each distinct problem (reason and message) gets one Warning Event, its reason
the condition's: a pass whose observed condition already says the same emits none. Messages are one line,
built here from the spec and the error class, never from a Secret's values or a response's varying request
ids.

Retries: while ``ConfigurationValid`` is False the pass asks to be decided again after
``clamp(now - lastTransitionTime, 5 s, 5 min)``, so the delay doubles with every retry and is a pure
function of the persisted condition (a replay computes the same). A failed Actions call is also paced
by the work queue's per-key backoff. A spec edit is picked up at once (a new generation, and a new epoch
in every call's key, so no stale answer is read). The config Secret is not watched (no chart lets the
controller list or watch Secrets): the executor reads it at every call, builds a new Actions client when
it changed, and journals the changed Secret (without data), which the controller maps to the scale sets
naming it; so a fixed Secret is picked up by the next retry.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from statemachines import autoscalinglisteners, conditions, ephemeralrunnersets, naming
from statemachines.conditions import READY, Condition
from statemachines.decisions import Transition
from statemachines.objects import ars_spec
from statemachines.phaseevents import camel_case
from statemachines.phases import ArsPhase
from statemachines.pods import parse_time
from statemachines.snapshots import Snapshot

CONFIGURATION_VALID = "ConfigurationValid"
VALID = "Valid"
VALID_MESSAGE = "the config URL, runner limits and GitHub credentials are usable"
# The runner set's (and then the scale set's) ``Ready`` reason while the API server refuses runner pods.
PODS_REFUSED = "RunnerPodsRefused"
# The executor's class for a call that got no answer at all (``actions.errors.ServiceUnreachable``).
UNREACHABLE = "ServiceUnreachable"

# ``Ready`` reasons of a derived object the API server refuses: the runner set or the listener (the ARS's
# own creates), the runner set's runners, or one of the listener's objects (its pod, ServiceAccount, Role,
# RoleBinding), as the runner set's or the listener's own ``Ready`` reports it.
RUNNER_SET_REJECTED = "RunnerSetRejected"
LISTENER_REJECTED = "ListenerRejected"
REFUSED_REASONS = (
    RUNNER_SET_REJECTED,
    LISTENER_REJECTED,
    ephemeralrunnersets.RUNNER_REJECTED,
    *autoscalinglisteners.NOT_BUILT_REASONS,
)

# The retry delay while the configuration is invalid: the time it has been invalid, within these bounds.
RETRY_MIN = 5.0
RETRY_MAX = 300.0


class Reason(enum.StrEnum):
    INVALID_CONFIG_URL = "InvalidConfigUrl"
    CONFIG_SECRET_MISSING = "ConfigSecretMissing"
    CONFIG_SECRET_INCOMPLETE = "ConfigSecretIncomplete"
    INVALID_RUNNER_LIMITS = "InvalidRunnerLimits"
    CREDENTIALS_REJECTED = "CredentialsRejected"
    RUNNER_GROUP_NOT_FOUND = "RunnerGroupNotFound"
    CONFIG_URL_UNREACHABLE = "ConfigUrlUnreachable"
    VAULT_CONFIG_INVALID = "VaultConfigInvalid"
    VAULT_CERTIFICATE_MISSING = "VaultCertificateMissing"
    VAULT_CERTIFICATE_INVALID = "VaultCertificateInvalid"
    VAULT_ACCESS_DENIED = "VaultAccessDenied"
    VAULT_UNREACHABLE = "VaultUnreachable"
    VAULT_SECRET_MISSING = "VaultSecretMissing"
    VAULT_SECRET_INVALID = "VaultSecretInvalid"
    SCALE_SET_NAME_TAKEN = "ScaleSetNameTaken"
    ROOT_CA_MISSING = "RootCAMissing"
    ROOT_CA_INVALID = "RootCAInvalid"
    PROXY_SECRET_MISSING = "ProxySecretMissing"
    INVALID_PROXY_URL = "InvalidProxyUrl"
    RUNNER_CONTAINER_MISSING = "RunnerContainerMissing"


# The executor's classes whose message already names the field and the fix (``controller.executor.scopes``
# builds it from the spec and the object it found missing, never from a Secret's values).
_NAMED_BY_THE_EXECUTOR = (
    Reason.ROOT_CA_MISSING,
    Reason.ROOT_CA_INVALID,
    Reason.PROXY_SECRET_MISSING,
    Reason.INVALID_PROXY_URL,
    Reason.VAULT_CONFIG_INVALID,
    Reason.VAULT_CERTIFICATE_MISSING,
    Reason.VAULT_CERTIFICATE_INVALID,
    Reason.VAULT_ACCESS_DENIED,
    Reason.VAULT_UNREACHABLE,
    Reason.VAULT_SECRET_MISSING,
    Reason.VAULT_SECRET_INVALID,
)
# The vault type upstream knows (``vaultConfig.type``), and what its ``azureKeyVault`` block must name.
AZURE_KEY_VAULT = "azure_key_vault"
AZURE_KEY_VAULT_FIELDS = ("url", "tenantId", "clientId", "certificatePath")
# The container of a runner pod template that runs the runner (upstream's ``runner``): the one the
# controller gives the JIT config to.
RUNNER_CONTAINER = "runner"


@dataclass(frozen=True)
class Problem:
    """Bad input a pass found: the ``ConfigurationValid`` reason and a one-line message."""

    reason: Reason
    message: str


PHASE_MESSAGES: Mapping[ArsPhase, str] = {
    ArsPhase.PENDING: "waiting for the scale set, runner set and listener to be in sync",
    ArsPhase.RUNNING: "scale set, runner set and listener are in sync",
    ArsPhase.OUTDATED: "the runners rejected the runner spec; update the spec to run again",
}


# -- the checks --------------------------------------------------------------------------------------------


def _limit(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# What GitHub allows in an enterprise slug, an organization, an owner or a repository name.
_GITHUB_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _secret_where(s: Snapshot) -> str:
    return f"{s.subject.namespace}/{ars_spec(s.spec).get('githubConfigSecret') or ''}"


def spec_problem(s: Snapshot) -> Problem | None:
    """The first bad input the ARS spec itself shows, or None."""
    url = str(ars_spec(s.spec).get("githubConfigUrl") or "")
    try:
        scope = naming.url_scope(url)
    except naming.InvalidConfigUrl as exc:
        return Problem(
            Reason.INVALID_CONFIG_URL,
            f"spec.githubConfigUrl {exc}; set it to https://<host>/<org>, /<owner>/<repo> or "
            "/enterprises/<enterprise>",
        )
    for part, value in scope.items():
        if value and not _GITHUB_NAME.fullmatch(value):
            return Problem(
                Reason.INVALID_CONFIG_URL,
                f"spec.githubConfigUrl names the {part} {value!r}, which no GitHub {part} can be "
                "called (letters, digits, '-', '_' and '.' only); write the name as GitHub shows it",
            )
    if problem := _vault_problem(ars_spec(s.spec)):
        return problem
    if not str(ars_spec(s.spec).get("githubConfigSecret") or ""):
        return Problem(
            Reason.CONFIG_SECRET_MISSING,
            "spec.githubConfigSecret is empty; set it to the Secret holding the GitHub credentials",
        )
    spec = ars_spec(s.spec)
    low, high = _limit(spec.get("minRunners")), _limit(spec.get("maxRunners"))
    if low is not None and high is not None and high < low:
        return Problem(
            Reason.INVALID_RUNNER_LIMITS,
            f"spec.maxRunners ({high}) is less than spec.minRunners ({low}); raise maxRunners or lower "
            "minRunners",
        )
    return _proxy_problem(spec) or _template_problem(spec)


def _vault_problem(spec: Mapping[str, object]) -> Problem | None:
    """A ``vaultConfig`` no vault client can use: an unknown type, a field of ``azureKeyVault`` missing,
    a url that is no https URL (``VaultConfigInvalid``), or a proxy URL no client can use
    (``InvalidProxyUrl``)."""
    vault = spec.get("vaultConfig")
    kind = str(vault.get("type") or "") if isinstance(vault, Mapping) else ""
    if not kind or not isinstance(vault, Mapping):
        return None
    if kind != AZURE_KEY_VAULT:
        return Problem(
            Reason.VAULT_CONFIG_INVALID,
            f"spec.vaultConfig.type {kind!r} is unknown; the one vault type is {AZURE_KEY_VAULT}",
        )
    azure = vault.get("azureKeyVault")
    block = azure if isinstance(azure, Mapping) else {}
    for key in AZURE_KEY_VAULT_FIELDS:
        if not str(block.get(key) or "").strip():
            return Problem(
                Reason.VAULT_CONFIG_INVALID,
                f"spec.vaultConfig.azureKeyVault.{key} is not set; the Azure Key Vault client needs url, "
                "tenantId, clientId and certificatePath",
            )
    parts = urlsplit(str(block.get("url")).strip())
    if parts.scheme != "https" or not parts.hostname:
        return Problem(
            Reason.VAULT_CONFIG_INVALID,
            "spec.vaultConfig.azureKeyVault.url is not an https:// URL with a host; write it as "
            "https://<vault>.vault.azure.net/",
        )
    return _proxy_problem(vault, "spec.vaultConfig.proxy")


def _proxy_problem(spec: Mapping[str, object], where: str = "spec.proxy") -> Problem | None:
    """A proxy URL no client can use (never quoted: it may hold a password)."""
    proxy = spec.get("proxy")
    for scheme in ("http", "https"):
        server = proxy.get(scheme) if isinstance(proxy, Mapping) else None
        url = str(server.get("url") or "") if isinstance(server, Mapping) else ""
        if url and (why := proxy_url_problem(url)):
            return Problem(
                Reason.INVALID_PROXY_URL, f"{where}.{scheme}.url {why}; write it as http://<host>:<port>"
            )
    return None


def proxy_url_problem(url: str) -> str:
    """Why ``url`` cannot be a proxy's URL, or "" when it can (an http or https URL with a host, and a
    port that is a number when there is one)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number (or out of range) raises here
    except ValueError:
        return "cannot be parsed as a URL (a port that is not a number, or a character a URL cannot hold)"
    if parts.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    if not parts.hostname:
        return "names no host"
    return ""


def _template_problem(spec: Mapping[str, object]) -> Problem | None:
    """A runner pod template with no container called ``runner``: its runners would never register."""
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, Mapping) else None
    containers = pod.get("containers") if isinstance(pod, Mapping) else None
    if not isinstance(containers, Sequence) or isinstance(containers, str):
        return None  # no template to speak of: the API server's schema says what is missing
    names = [str(c.get("name") or "") for c in containers if isinstance(c, Mapping)]
    if RUNNER_CONTAINER in names:
        return None
    found = ", ".join(repr(name) for name in names) or "none"
    return Problem(
        Reason.RUNNER_CONTAINER_MISSING,
        f"spec.template.spec.containers has no container named {RUNNER_CONTAINER!r} (found {found}); name "
        "the container that runs the runner 'runner': it is the one given the runner's registration",
    )


def call_problem(s: Snapshot, error: str, message: str) -> Problem | None:
    """The bad input an Actions call's failure (its error class and message) reveals, or None when the
    failure is something else (a service outage, a protocol error)."""
    where = _secret_where(s)
    if error == Reason.CONFIG_SECRET_MISSING:
        return Problem(
            Reason.CONFIG_SECRET_MISSING,
            f"the Secret {where} named by spec.githubConfigSecret does not exist; create it with "
            "github_token, or github_app_id, github_app_installation_id and github_app_private_key",
        )
    if error == Reason.CONFIG_SECRET_INCOMPLETE:
        return Problem(
            Reason.CONFIG_SECRET_INCOMPLETE,
            message
            or f"the Secret {where} holds no usable GitHub credentials; set github_token, or "
            "github_app_id, github_app_installation_id and github_app_private_key",
        )
    if error == "AuthenticationFailed":
        return Problem(
            Reason.CREDENTIALS_REJECTED,
            f"GitHub rejected the credentials in the Secret {where}; put a valid token or GitHub App "
            "key in it",
        )
    if error == Reason.INVALID_CONFIG_URL:
        return Problem(Reason.INVALID_CONFIG_URL, f"{message or 'spec.githubConfigUrl is unusable'}")
    if error == Reason.RUNNER_GROUP_NOT_FOUND:
        return Problem(
            Reason.RUNNER_GROUP_NOT_FOUND,
            f"spec.runnerGroup {str(ars_spec(s.spec).get('runnerGroup') or '')!r} names no runner group of "
            f"{_config_url(s)}; create the group in GitHub or fix spec.runnerGroup",
        )
    if error in _NAMED_BY_THE_EXECUTOR:
        return Problem(Reason(error), message or f"spec.githubServerTLS or spec.proxy is unusable ({error})")
    if error == UNREACHABLE:
        return Problem(
            Reason.CONFIG_URL_UNREACHABLE,
            f"GitHub at {_host(s)} (spec.githubConfigUrl) does not answer; check the URL, the network and "
            "spec.proxy",
        )
    return None


def _config_url(s: Snapshot) -> str:
    return str(ars_spec(s.spec).get("githubConfigUrl") or "")


def _host(s: Snapshot) -> str:
    return urlsplit(_config_url(s)).netloc or _config_url(s)


# -- the conditions ----------------------------------------------------------------------------------------


def ready(
    s: Snapshot,
    phase: ArsPhase,
    transitions: Sequence[Transition],
    runner_set: Mapping[str, object] | None,
    refused: tuple[str, str] | None = None,
) -> Condition | None:
    """``Ready`` after a pass that left ``phase`` and recorded ``transitions``; None without a phase.

    ``refused`` is (reason, message) of a derived object the API server refuses (``REFUSED_REASONS``):
    ``Ready`` is False with it whatever the phase, since the phase does not move for it (a Running scale
    set whose listener cannot get its Role is not ready). A Running scale set whose ``runner_set`` reports
    its runner pods refused (``Ready`` False with ``RunnerPodsRefused``) is not Ready either: it says so
    with that reason and the runner set's message."""
    if phase is ArsPhase.NONE:
        return None
    if refused is not None:
        return Condition(READY, False, refused[0], refused[1])
    running = phase is ArsPhase.RUNNING
    pods = pods_refused(runner_set)
    if running and pods is not None:
        return pods
    changed = [t for t in transitions if t.from_ != t.to]
    if changed:
        return Condition(READY, running, camel_case(str(changed[-1].trigger)), changed[-1].reason)
    before = conditions.find(s.status, READY)
    wanted = conditions.TRUE if running else conditions.FALSE
    reason = str((before or {}).get("reason") or "")
    if before is not None and before.get("status") == wanted and reason and reason not in REFUSED_REASONS:
        return Condition(READY, running, reason, str(before.get("message") or ""))
    return Condition(READY, running, phase.value, PHASE_MESSAGES.get(phase, ""))


def pods_refused(runner_set: Mapping[str, object] | None) -> Condition | None:
    """The ARS ``Ready`` for a runner set whose ``Ready`` says its runner pods are refused, or None."""
    status, meta = (runner_set or {}).get("status"), (runner_set or {}).get("metadata")
    seen = conditions.find(status if isinstance(status, Mapping) else None, READY)
    if seen is None or seen.get("status") != conditions.FALSE or seen.get("reason") != PODS_REFUSED:
        return None
    generation = meta.get("generation") if isinstance(meta, Mapping) else None
    if seen.get("observedGeneration") != generation:
        return None  # said of an earlier runner spec: the set has not decided on the current one yet
    return Condition(READY, False, PODS_REFUSED, str(seen.get("message") or ""))


def configuration_valid(problem: Problem | None, valid: bool) -> Condition | None:
    if problem is not None:
        return Condition(CONFIGURATION_VALID, False, problem.reason.value, problem.message)
    return Condition(CONFIGURATION_VALID, True, VALID, VALID_MESSAGE) if valid else None


def already_reported(s: Snapshot, problem: Problem) -> bool:
    """Whether the observed ``ConfigurationValid`` already says ``problem`` (its Event was emitted)."""
    before = conditions.find(s.status, CONFIGURATION_VALID)
    return (
        before is not None
        and before.get("status") == conditions.FALSE
        and before.get("reason") == problem.reason.value
        and before.get("message") == problem.message
    )


def retry_after(s: Snapshot) -> float:
    """Seconds until a pass that found bad input is decided again: how long the observed condition has
    been False, within ``RETRY_MIN`` and ``RETRY_MAX`` (``RETRY_MIN`` when it is not False yet)."""
    before = conditions.find(s.status, CONFIGURATION_VALID)
    since = parse_time(before.get("lastTransitionTime")) if before is not None else None
    if before is None or before.get("status") != conditions.FALSE or since is None:
        return RETRY_MIN
    return min(max(_seconds(s.now, since), RETRY_MIN), RETRY_MAX)


def _seconds(now: datetime, since: datetime) -> float:
    return (now - since).total_seconds()
