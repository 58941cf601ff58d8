"""Naming and label helpers: upstream-compatible hashes and names, URL labels, merges."""

from __future__ import annotations

import pytest

from statemachines import naming


def test_fnv32a_matches_the_reference_vectors() -> None:
    # FNV-1a 32-bit reference values.
    assert naming.fnv32a("") == 0x811C9DC5
    assert naming.fnv32a("a") == 0xE40C292C
    assert naming.fnv32a("foobar") == 0xBF9CF968


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
