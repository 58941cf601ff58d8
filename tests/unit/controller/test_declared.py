"""What the runtime derives from the four controller declarations is what it held by hand before: the
decided kinds and their order, the deciders, the update predicates of the owned watches, the watched
kinds (and their list/watch permissions), and every kind a declaration names is one the watchers serve."""

from __future__ import annotations

from controller.installation import permissions
from controller.installation.permissions import Permission
from controller.loop import declared, reconciling, servedschemas
from statemachines import (
    autoscalinglisteners,
    autoscalingrunnersets,
    ephemeralrunners,
    ephemeralrunnersets,
    predicates,
)
from statemachines.kinds import AL, ARS, ER, ERS
from watchers import kinds as watched

NAMED = (ARS, ERS, ER, AL, "Pod", "Secret", "ServiceAccount", "Role", "RoleBinding")
# Secrets are named but not watched: no chart lets the controller list or watch them (upstream's neither).
WATCHED_BEFORE = tuple(kind for kind in NAMED if kind != "Secret")
RBAC_GROUP = "rbac.authorization.k8s.io"


def test_the_decided_kinds_and_their_order_are_derived() -> None:
    assert declared.DECIDED == (ARS, ERS, ER, AL)
    assert servedschemas.DECIDED == declared.DECIDED
    assert list(reconciling.DECIDERS) == list(declared.DECIDED)


def test_each_declaration_decides_with_its_machine() -> None:
    machines = (autoscalingrunnersets, ephemeralrunnersets, ephemeralrunners, autoscalinglisteners)
    assert [d.decide for d in declared.DECLARATIONS] == [m.decide for m in machines]
    assert [d.kind for d in declared.DECLARATIONS] == [m.DECLARATION.kind for m in machines]


def test_the_update_predicates_of_the_owned_watches_are_the_three_there_were() -> None:
    derived = {
        (child, owner): owns.predicate
        for child, by_owner in declared.OWNERS.items()
        for owner, owns in by_owner.items()
        if owns.predicate is not None
    }
    assert derived == {
        (ERS, ARS): predicates.ars_from_runner_set,
        (ER, ERS): predicates.ers_from_runner,
        ("Pod", ER): predicates.runner_from_pod,
    }


def test_the_owned_kinds_are_the_children_each_machine_creates() -> None:
    owned = {child: set(by_owner) for child, by_owner in declared.OWNERS.items()}
    assert owned == {
        ERS: {ARS},
        ER: {ERS},
        "Pod": {ER, AL},
        "Secret": {ERS, ER, AL},
        "ServiceAccount": {AL},
    }


def test_the_watched_kinds_are_derived_and_equal_what_they_were() -> None:
    assert declared.named_kinds() == frozenset(NAMED)
    assert declared.WATCHED == WATCHED_BEFORE == watched.NAMES
    assert {"Secret"} == declared.REPORTED


def test_list_and_watch_are_asked_on_exactly_the_watched_kinds() -> None:
    resources = {
        ("actions.github.com", "autoscalingrunnersets"),
        ("actions.github.com", "ephemeralrunnersets"),
        ("actions.github.com", "ephemeralrunners"),
        ("actions.github.com", "autoscalinglisteners"),
        ("", "pods"),
        ("", "serviceaccounts"),
        (RBAC_GROUP, "roles"),
        (RBAC_GROUP, "rolebindings"),
    }
    assert permissions.watch_permissions() == {
        Permission(group, resource, verb) for group, resource in resources for verb in ("list", "watch")
    }


def test_one_index_per_declared_reverse_lookup() -> None:
    lookups = {lookup for d in declared.DECLARATIONS for lookup in d.lookups}
    assert set(declared.INDEXES) == lookups
    assert sorted(index.name for index in declared.INDEXES.values()) == [
        "listeners by the scale set they name",
        "listeners by their githubConfigSecret",
        "scale sets by the Actions scale set they claim",
        "scale sets by their githubConfigSecret",
    ]


def test_the_declared_related_keys_include_every_key_each_machine_names() -> None:
    keys = {d.kind: d.related_keys for d in declared.DECLARATIONS}
    assert keys[ARS] >= {"ers", "listener", "claim_peer", *(a for a, _ in autoscalingrunnersets.DEPENDENTS)}
    assert keys[ERS] >= {"proxy_secret"}
    assert keys[ER] >= {"pod", "other_pod", "secret", "other_secret"}
    assert keys[AL] >= {
        "ars",
        "service_account",
        "role",
        "role_binding",
        "config_secret",
        "proxy_secret",
        "pod",
        "credentials_secret",
    }
    assert declared.BY_KIND[ERS].children == ER
