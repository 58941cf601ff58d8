"""Naming and label helpers: upstream-compatible hashes and names, URL labels, merges."""

from __future__ import annotations

import pytest

from sim import validation
from statemachines import naming


def test_fnv32a_matches_the_reference_vectors() -> None:
    # FNV-1a 32-bit reference values.
    assert naming.fnv32a("") == 0x811C9DC5
    assert naming.fnv32a("a") == 0xE40C292C
    assert naming.fnv32a("foobar") == 0xBF9CF968


def test_a_remembered_hash_is_the_hash_of_its_text() -> None:
    template = {"spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/runner:2.330.0"}]}}
    first = naming.stable_hash(template, "uid-1")
    again = naming.stable_hash(template, "uid-1")
    text = '[{"spec":{"containers":[{"image":"ghcr.io/actions/runner:2.330.0","name":"runner"}]}},"uid-1"]'
    assert first == again == naming.safe_encode(str(naming.fnv32a(text)))
    assert naming.stable_hash(template, "uid-2") != first


def test_secret_material_is_hashed_alike_and_not_remembered() -> None:
    data = {"username": "proxy-user", "password": "hunter2-not-remembered"}
    assert naming.secret_hash(data) == naming.stable_hash(data)
    naming.fnv_hash_string.cache_clear()
    naming.secret_hash(data)
    assert naming.fnv_hash_string.cache_info().currsize == 0


def test_safe_encode_maps_digits_into_the_alphabet() -> None:
    assert naming.safe_encode("0123") == "".join(naming.SAFE_ALPHABET[ord(c) % 27] for c in "0123")
    assert set(naming.fnv_hash_string("anything")) <= set(naming.SAFE_ALPHABET)


def test_listener_name_changes_with_group_and_url_only() -> None:
    a = naming.listener_name("arc", "ns", "", "https://github.com/org")
    assert a.startswith("arc-") and a.endswith("-listener") and len(a) == len("arc--listener") + 8
    assert a == naming.listener_name("arc", "ns", "", "https://github.com/org")
    assert a != naming.listener_name("arc", "ns", "group", "https://github.com/org")
    assert a != naming.listener_name("arc", "ns", "", "https://github.com/other")


@pytest.mark.parametrize(
    ("url", "labels"),
    [
        pytest.param("https://github.com/org", {naming.LABEL_ORGANIZATION: "org"}, id="organization"),
        pytest.param("https://github.com/org/", {naming.LABEL_ORGANIZATION: "org"}, id="trailing-slash"),
        pytest.param(
            "https://github.com/owner/repo",
            {naming.LABEL_ORGANIZATION: "owner", naming.LABEL_REPOSITORY: "repo"},
            id="repository",
        ),
        pytest.param("https://github.com/enterprises/ent", {naming.LABEL_ENTERPRISE: "ent"}, id="enterprise"),
        pytest.param("https://ghes.example.com/Enterprises/ent", {naming.LABEL_ENTERPRISE: "ent"}, id="ghes"),
        pytest.param("https://github.com/-org_", {naming.LABEL_ORGANIZATION: "org"}, id="stripped"),
        pytest.param(
            "https://github.com/" + "o" * 70, {naming.LABEL_ORGANIZATION: "o" * 58 + "-trim"}, id="trimmed"
        ),
    ],
)
def test_url_labels(url: str, labels: dict[str, str]) -> None:
    assert naming.url_labels(url) == labels


@pytest.mark.parametrize("url", ["https://github.com", "https://github.com/a/b/c", "not a url"])
def test_url_labels_reject_urls_that_name_nothing(url: str) -> None:
    with pytest.raises(naming.InvalidConfigUrl):
        naming.url_labels(url)


@pytest.mark.parametrize(
    ("url", "scope"),
    [
        ("https://github.com/org", ("", "org", "")),
        ("https://github.com/org/.github/", ("", "org", ".github")),
        ("https://ghes.example.com/Enterprises/big-co", ("big-co", "", "")),
        ("https://github.com/" + "r" * 70 + "/repo", ("", "r" * 70, "repo")),
    ],
)
def test_url_scope_is_what_the_url_names_as_written(url: str, scope: tuple[str, str, str]) -> None:
    """Metric labels take the names untrimmed, as upstream's ParseGitHubConfigFromURL gives them; the
    Kubernetes labels of the same URL are trimmed to what a label value may hold."""
    found = naming.url_scope(url)
    assert (found["enterprise"], found["organization"], found["repository"]) == scope


def test_the_labels_of_a_url_are_its_scope_trimmed() -> None:
    assert naming.url_scope("https://github.com/org/.github")["repository"] == ".github"
    assert naming.url_labels("https://github.com/org/.github") == {
        naming.LABEL_ORGANIZATION: "org",
        naming.LABEL_REPOSITORY: "github",
    }


def test_url_scope_rejects_what_url_labels_rejects() -> None:
    for url in ("https://github.com", "https://github.com/a/b/c", "not a url"):
        with pytest.raises(naming.InvalidConfigUrl):
            naming.url_scope(url)


def test_label_merge_filters_excluded_prefixes_and_annotation_merge_keeps_keys() -> None:
    merged = naming.filter_and_merge_labels({"a": "1", "skip.io/x": "y"}, {"a": "2", "b": "3"}, ("skip.io/",))
    assert merged == {"a": "2", "b": "3"}
    assert naming.filter_and_merge_labels(None, None) is None
    assert naming.merge_annotations({"keep": "1"}, {"new": "2"}) == {"keep": "1", "new": "2"}


# -- derived names stay within their limits -----------------------------------------------------------------

URL = "https://github.com/org"
# Valid scale set names of every length class: up to upstream's chart cap (45), up to a label (63), and
# long DNS subdomains, with dots and dashes where a cut may land.
NAMES = [
    "arc",
    "a" * 45,
    "b" * 46,
    "c" * 63,
    "d" * 64,
    "team-" + "e" * 95,
    ("x" * 43 + ".y-z") * 5,
    "f" * 253,
    ("g" * 61 + ".") * 4 + "h",
]


def upstream_listener_name(ars_name: str, namespace: str, group: str, url: str) -> str:
    return f"{ars_name}-{naming.fnv_hash_string(f'{namespace}@{group}@{url}')[:8]}-listener"


def test_names_upstream_can_have_derive_exactly_as_upstream() -> None:
    """A scale set name of at most 45 characters (the chart's cap) keeps upstream's names, so objects an
    upstream controller or an earlier arcsm made are found again."""
    for name in ("arc", "a" * 45, "team.runners-x64"):
        assert naming.listener_name(name, "ns", "g", URL) == upstream_listener_name(name, "ns", "g", URL)
        assert naming.name_label(name) == name
    assert naming.listener_name("arc", "default", "", URL) == "arc-5d54b466-listener"
    assert naming.runner_set_proxy_secret_name("arc", "default") == "arc-68c4584d-runner-proxy"
    assert naming.runner_set_proxy_secret_name("p" * 231, "ns").startswith("p" * 231 + "-")
    assert naming.name_label("c" * 63) == "c" * 63


@pytest.mark.parametrize("ars_name", NAMES, ids=lambda n: f"{len(n)}-chars")
def test_every_derived_name_is_valid_for_any_scale_set_name(ars_name: str) -> None:
    listener = naming.listener_name(ars_name, "default", "", URL)
    assert validation.is_dns1123_subdomain(ars_name) == []
    assert len(listener) <= 63 and validation.is_dns1123_subdomain(listener) == []
    assert validation.is_label_value(listener) == []
    for derived in (
        naming.listener_config_secret_name(listener),
        naming.listener_proxy_secret_name(listener),
    ):
        assert validation.is_dns1123_subdomain(derived) == []
    proxy = naming.runner_set_proxy_secret_name(ars_name, "default")
    assert validation.is_dns1123_subdomain(proxy) == []
    assert validation.is_label_value(naming.name_label(ars_name)) == []


def test_a_shortened_name_is_deterministic_and_tells_long_names_apart() -> None:
    first, second = "r" * 60 + "-one", "r" * 60 + "-two"
    a = naming.listener_name(first, "ns", "", URL)
    assert a == naming.listener_name(first, "ns", "", URL)
    assert a != naming.listener_name(second, "ns", "", URL)
    assert a.startswith("r" * 45 + "-") and a.endswith("-listener") and len(a) == 63
    # Still a function of the namespace, runner group and URL, as upstream's is.
    assert a != naming.listener_name(first, "other", "", URL)
    assert a != naming.listener_name(first, "ns", "group", URL)
    assert naming.name_label(first) != naming.name_label(second)
    assert naming.name_label(first).startswith("r" * 54 + "-")
    long_set = "s" * 240
    assert naming.runner_set_proxy_secret_name(long_set, "a") != naming.runner_set_proxy_secret_name(
        long_set, "b"
    )


def test_a_cut_never_ends_a_name_on_a_separator() -> None:
    dotted = "a" * 44 + ".b" * 10  # the cut at 45 lands just after a dot
    name = naming.listener_name(dotted, "ns", "", URL)
    assert ".-" not in name and validation.is_dns1123_subdomain(name) == []
    label = naming.name_label("a" * 53 + "-" * 3 + "b" * 10)  # the cut at 54 lands on the dashes
    assert label.startswith("a" * 53 + "-") and "--" not in label
