"""Names, hashes, labels and annotations shared by the four machines (spec §1.8 and §1.9).

The naming helpers reproduce upstream ARC's exactly, so arcsm finds the listener and proxy objects an
upstream controller created when it adopts a scale set.

Upstream's chart refuses scale set names over 45 characters, so its controller never meets a name whose
derived names are too long; applied directly, an AutoscalingRunnerSet may have any DNS subdomain name (up
to 253 characters). Every name derived here therefore stays within its limit, keeping upstream's shape
``<name>-<hash>-<suffix>``: a derived name that fits is upstream's, character for character (so objects
made under that rule are found again); one that does not is the longest prefix that leaves room for an
8-character hash of the full inputs (``shortened``). The limits:

* the listener name is at most 63 characters (``DNS1123_LABEL_MAX``): it names the listener pod, its
  ServiceAccount, Role and RoleBinding, and is the value of the Role's and RoleBinding's
  ``auto-scaling-listener-name`` label; upstream's 45-character cap is what keeps its own within 63;
* the runner set's proxy Secret is at most 253 (``DNS1123_SUBDOMAIN_MAX``);
* a label value that carries a name (``name_label``, for ``actions.github.com/scale-set-name``) is at most
  63 (``LABEL_VALUE_MAX``). Upstream's ``-trim`` cut is kept for the URL labels, where it comes from.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from urllib.parse import urlsplit

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# Label keys the controllers write.
LABEL_ENTERPRISE = "actions.github.com/enterprise"
LABEL_ORGANIZATION = "actions.github.com/organization"
LABEL_REPOSITORY = "actions.github.com/repository"
LABEL_SCALE_SET_NAME = "actions.github.com/scale-set-name"
LABEL_SCALE_SET_NAMESPACE = "actions.github.com/scale-set-namespace"
LABEL_VERSION = "app.kubernetes.io/version"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_COMPONENT = "app.kubernetes.io/component"

# Annotations on EphemeralRunners (§1.3): the listener patch and runner-spec revision they were built from.
ANNOTATION_PATCH_ID = "actions.github.com/patch-id"
ANNOTATION_ACTIONABLE_REVISION = "actions.github.com/actionable-revision"

# Finalizers (§1.2, §1.3).
FINALIZER_EPHEMERAL_RUNNER_SET = "ephemeralrunnerset.actions.github.com/finalizer"
FINALIZER_EPHEMERAL_RUNNER = "ephemeralrunner.actions.github.com/finalizer"
FINALIZER_RUNNER_REGISTRATION = "ephemeralrunner.actions.github.com/runner-registration-finalizer"
FINALIZER_AUTOSCALING_RUNNER_SET = "autoscalingrunnerset.actions.github.com/finalizer"

# Annotations on AutoscalingRunnerSets (§1.1): the Actions scale set it runs (the id key has no prefix);
# the name and group annotations are copied onto the EphemeralRunnerSet.
ANNOTATION_RUNNER_SCALE_SET_ID = "runner-scale-set-id"
ANNOTATION_RUNNER_SCALE_SET_NAME = "actions.github.com/runner-scale-set-name"
ANNOTATION_RUNNER_GROUP_NAME = "actions.github.com/runner-group-name"
# Written by the pre-seed controllers only: never compared, and dropped where arcsm merges annotations.
ANNOTATION_INTEGRITY_HASH = "actions.github.com/integrity-hash"

# arcsm's own bookkeeping, under a prefix of its own. The executor copies the runner id and name of a JIT
# Secret's data into annotations on it (the journal keeps Secrets without data). The AutoscalingListener
# machine keeps its implicit state and the listener pod's restart backoff in annotations on the listener's
# ServiceAccount (not on the AL, whose annotations the ARS compares with the ones it wants).
ARCSM_PREFIX = "arcsm.io/"
ANNOTATION_JIT_RUNNER_ID = ARCSM_PREFIX + "runner-id"
ANNOTATION_JIT_RUNNER_NAME = ARCSM_PREFIX + "runner-name"


def stable_hash(*parts: object) -> str:
    """A stable hash of JSON values (canonical JSON, FNV-32a, upstream's encoding) for ``integrity-hash``
    and ``pod-template-hash``: §1.8 lets a port use any stable hash of the same inputs.

    Secret material is hashed with ``secret_hash`` instead (``fnv_hash_string`` remembers its texts)."""
    return fnv_hash_string(_canonical(parts))


def secret_hash(*parts: object) -> str:
    """``stable_hash`` of values that hold secret material: nothing of them is kept once it returns."""
    return _safe_encoded_fnv(_canonical(parts))


def _canonical(parts: tuple[object, ...]) -> str:
    return json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)


def fnv32a(data: str) -> int:
    value = 0x811C9DC5
    for byte in data.encode():
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """Upstream's SafeEncode: every character of ``text`` mapped into a vowel-free alphabet."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


REMEMBERED = 1024  # texts whose hash fnv_hash_string keeps


@functools.lru_cache(maxsize=REMEMBERED)
def fnv_hash_string(text: str) -> str:
    """Upstream's hash of a text: FNV-32a, in the safe alphabet.

    The machines hash the same templates, metadata and names in decision after decision, and FNV runs a
    Python step per byte, so the hash of each of the last ``REMEMBERED`` texts is kept (it is a pure
    function of the text; the machines only hash what the journal holds)."""
    return _safe_encoded_fnv(text)


def _safe_encoded_fnv(text: str) -> str:
    return safe_encode(str(fnv32a(text)))


DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
HASH_LENGTH = 8


def shortened(name: str, suffix: str, limit: int, *inputs: str) -> str:
    """``<name cut>-<hash8 of name and inputs><suffix>`` in at most ``limit`` characters.

    The cut drops trailing ``-``, ``.`` and ``_`` so the result stays a valid DNS subdomain and label
    value: ``name`` starts with an alphanumeric, and the hash is alphanumeric.
    """
    digest = fnv_hash_string("@".join((name, *inputs)))[:HASH_LENGTH]
    room = limit - len(digest) - len(suffix) - 1
    return f"{name[:room].rstrip('-._')}-{digest}{suffix}"


def listener_name(ars_name: str, namespace: str, runner_group: str, config_url: str) -> str:
    """``<ARS>-<hash8>-listener``: changes whenever the runner group or the config URL changes.

    At most 63 characters: past that (a scale set name over 45 characters) the scale set name is cut and
    the hash covers it too (``shortened``).
    """
    digest = fnv_hash_string(f"{namespace}@{runner_group}@{config_url}")[:HASH_LENGTH]
    name = f"{ars_name}-{digest}-listener"
    if len(name) <= DNS1123_LABEL_MAX:
        return name
    return shortened(ars_name, "-listener", DNS1123_LABEL_MAX, namespace, runner_group, config_url)


def runner_set_proxy_secret_name(ers_name: str, namespace: str) -> str:
    """``<ERS>-<hash8(namespace)>-runner-proxy``, shortened past 253 characters."""
    name = f"{ers_name}-{fnv_hash_string(namespace)[:HASH_LENGTH]}-runner-proxy"
    if len(name) <= DNS1123_SUBDOMAIN_MAX:
        return name
    return shortened(ers_name, "-runner-proxy", DNS1123_SUBDOMAIN_MAX, namespace)


def name_label(name: str) -> str:
    """An object name as a label value: as it is up to 63 characters, else cut with a hash of it."""
    return name if len(name) <= LABEL_VALUE_MAX else shortened(name, "", LABEL_VALUE_MAX)


def listener_config_secret_name(listener: str) -> str:
    return f"{listener}-config"


def listener_proxy_secret_name(listener: str) -> str:
    return f"{listener}-proxy"


class InvalidConfigUrl(ValueError):
    """The githubConfigUrl names no enterprise, organization or repository."""


def _trim_label_value(value: str) -> str:
    if len(value) > 63:
        return value[:58] + "-trim"
    return value.strip("-_.")


def url_scope(config_url: str) -> dict[str, str]:
    """The ``enterprise``, ``organization`` and ``repository`` a githubConfigUrl names, as written (upstream's
    ``ParseGitHubConfigFromURL``; "" for the parts it does not name); the values of metric labels."""
    parts = urlsplit(config_url)
    if not parts.scheme or not parts.netloc:
        raise InvalidConfigUrl(f"{config_url!r} is not an absolute URL")
    segments = [s for s in parts.path.strip("/").split("/") if s]
    found = {"enterprise": "", "organization": "", "repository": ""}
    if len(segments) == 1:
        found["organization"] = segments[0]
    elif len(segments) == 2 and segments[0].lower() == "enterprises":
        found["enterprise"] = segments[1]
    elif len(segments) == 2:
        found["organization"], found["repository"] = segments
    else:
        raise InvalidConfigUrl(
            f"{config_url!r} names no enterprise (/enterprises/E), organization (/ORG) "
            "or repository (/OWNER/REPO)"
        )
    return found


_LABEL_OF_SCOPE = {
    "enterprise": LABEL_ENTERPRISE,
    "organization": LABEL_ORGANIZATION,
    "repository": LABEL_REPOSITORY,
}


def url_labels(config_url: str) -> dict[str, str]:
    """The enterprise / organization / repository labels parsed from a githubConfigUrl (§1.9)."""
    return {_LABEL_OF_SCOPE[k]: _trim_label_value(v) for k, v in url_scope(config_url).items() if v}


def filter_and_merge_labels(
    base: Mapping[str, str] | None,
    overwrite: Mapping[str, str] | None,
    excluded_prefixes: tuple[str, ...] = (),
) -> dict[str, str] | None:
    """``base`` with ``overwrite`` on top, dropping keys that start with an excluded prefix."""
    if base is None and overwrite is None:
        return None
    merged = {**(base or {}), **(overwrite or {})}
    return {k: v for k, v in merged.items() if not k.startswith(excluded_prefixes)}


def merge_annotations(
    base: Mapping[str, str] | None, overwrite: Mapping[str, str] | None
) -> dict[str, str] | None:
    """``base`` with ``overwrite`` on top; existing keys are never removed."""
    if base is None and overwrite is None:
        return None
    return {**(base or {}), **(overwrite or {})}
