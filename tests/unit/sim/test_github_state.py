"""The fake Actions service's pure model (sim.github.state): scale sets, runner groups, agents, sessions,
the message queue and the job lifecycle, driven with an injected clock and no I/O."""

from __future__ import annotations

import pytest

from sim.github import errors
from sim.github.records import JobState, Statistics, version_at_least
from sim.github.scopes import Scope, from_path, from_url
from sim.github.state import State


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


ORG = Scope("organization", "acme")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def state(clock: Clock) -> State:
    return State(clock=clock, seed=1, session_timeout=60.0)


def scale_set(state: State, name: str = "arc", scope: Scope = ORG) -> int:
    tenant = state.tenant(scope)
    return state.create_scale_set(tenant.id, name=name, runner_group_id=1).id


def queue(state: State, scale_set_id: int, n: int = 1) -> list[int]:
    return [
        state.queue_job(
            scale_set_id, owner="acme", repository="r", workflow_ref="w", display_name="d", event_name="push"
        ).runner_request_id
        for _ in range(n)
    ]


def online_runner(state: State, scale_set_id: int, name: str) -> int:
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    agent = state.add_agent(tenant_id, scale_set_id, name=name, work_folder="", secret="s")
    state.connect_agent(agent.id, "s", "2.330.0", "2.300.0")
    return agent.id


def kinds(state: State, session_id: str) -> list[tuple[str, int]]:
    """Every job message the session has to deliver, acknowledged as the listener does."""
    session = state.sessions[session_id]
    seen: list[tuple[str, int]] = []
    while (message := state.poll(session, 0, None)) is not None:
        state.delete_message(session, message.id)
        seen.extend((e.kind, e.job.runner_request_id) for e in message.events)
    return seen


# -- scopes and versions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind", "key"),
    [
        ("/acme", "organization", "orgs/acme"),
        ("acme/", "organization", "orgs/acme"),
        ("/Acme/Repo", "repository", "repos/acme/repo"),
        ("/enterprises/Big", "enterprise", "enterprises/big"),
    ],
)
def test_config_url_paths_name_their_scope(path: str, kind: str, key: str) -> None:
    scope = from_path(path)
    assert (scope.kind, scope.key) == (kind, key)
    assert from_url("http://127.0.0.1:1234/" + path.lstrip("/")).key == key


def test_a_config_url_without_a_scope_is_refused() -> None:
    with pytest.raises(ValueError):
        from_url("http://127.0.0.1:1234/")
    with pytest.raises(ValueError):
        from_path("a/b/c")


@pytest.mark.parametrize(
    ("version", "minimum", "accepted"),
    [
        ("2.330.0", "2.330.0", True),
        ("2.331.0", "2.330.0", True),
        ("v2.330.1", "2.330", True),
        ("2.329.9", "2.330.0", False),
        ("2.10.0", "2.9.0", True),
        ("latest", "0.0.0", False),
        ("", "0.0.0", False),
    ],
)
def test_runner_versions_compare_numerically(version: str, minimum: str, accepted: bool) -> None:
    assert version_at_least(version, minimum) is accepted


# -- runner groups and scale sets ------------------------------------------------------------------------


def test_each_tenant_starts_with_the_default_group_1(state: State) -> None:
    tenant = state.tenant(ORG)
    assert [(g.id, g.name, g.is_default) for g in state.groups(tenant.id)] == [(1, "Default", True)]
    assert state.groups(tenant.id, "default")[0].id == 1  # names are case-insensitive
    assert state.tenant(Scope("organization", "ACME")) is tenant
    assert state.tenant(Scope("organization", "other")).id != tenant.id


def test_added_groups_get_the_next_id(state: State) -> None:
    gpu = state.add_group(ORG, "gpu")
    assert gpu.id == 2
    with pytest.raises(ValueError):
        state.add_group(ORG, "GPU")


def test_scale_sets_are_keyed_by_group_and_name_with_ids_from_1(state: State) -> None:
    tenant = state.tenant(ORG)
    gpu = state.add_group(ORG, "gpu")
    first = state.create_scale_set(tenant.id, name="arc", runner_group_id=1)
    second = state.create_scale_set(tenant.id, name="arc", runner_group_id=gpu.id)
    assert (first.id, second.id) == (1, 2)
    assert first.labels == [{"name": "arc", "type": "System"}]
    with pytest.raises(errors.ServiceError) as raised:
        state.create_scale_set(tenant.id, name="ARC", runner_group_id=1)
    assert (raised.value.status, raised.value.type_key) == (409, "RunnerScaleSetExistsException")
    assert state.find_scale_sets(tenant.id, 1, "arc") == [first]
    assert state.find_scale_sets(tenant.id, 1, "missing") == []


def test_labels_without_a_type_get_system(state: State) -> None:
    tenant = state.tenant(ORG)
    created = state.create_scale_set(
        tenant.id, name="arc", runner_group_id=1, labels=[{"name": "arc"}, {"type": "User", "name": "x"}]
    )
    assert created.labels == [{"name": "arc", "type": "System"}, {"type": "User", "name": "x"}]


def test_a_scale_set_in_an_unknown_group_is_refused(state: State) -> None:
    tenant = state.tenant(ORG)
    with pytest.raises(errors.ServiceError) as raised:
        state.create_scale_set(tenant.id, name="arc", runner_group_id=7)
    assert raised.value.type_key == "RunnerGroupNotFoundException"


def test_update_moves_a_scale_set_and_renames_it(state: State) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    gpu = state.add_group(ORG, "gpu")
    moved = state.update_scale_set(tenant_id, scale_set_id, runner_group_id=gpu.id)
    assert (moved.runner_group_id, moved.name) == (gpu.id, "arc")
    renamed = state.update_scale_set(tenant_id, scale_set_id, name="arc-2")
    assert (renamed.runner_group_id, renamed.name) == (gpu.id, "arc-2")


def test_another_tenant_cannot_see_a_scale_set(state: State) -> None:
    scale_set_id = scale_set(state)
    other = state.tenant(Scope("organization", "other"))
    with pytest.raises(errors.ServiceError) as raised:
        state.scale_set(other.id, scale_set_id)
    assert raised.value.status == 404


def test_deleting_a_scale_set_removes_its_runners_and_session_and_cancels_its_jobs(state: State) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    runner = online_runner(state, scale_set_id, "r1")
    session = state.create_session(tenant_id, scale_set_id, "listener")
    (job_id,) = queue(state, scale_set_id)
    state.acquire(session, [job_id])
    assert state.take_job(runner) is not None
    state.delete_scale_set(tenant_id, scale_set_id)
    assert scale_set_id not in state.scale_sets
    assert state.agents == {} and state.sessions == {}
    assert state.jobs[job_id].state == JobState.CANCELED
    state.delete_scale_set(tenant_id, scale_set_id)  # unknown ids are a no-op


# -- agents ------------------------------------------------------------------------------------------------


def test_runner_names_are_unique_within_a_tenant(state: State) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    first = state.add_agent(tenant_id, scale_set_id, name="r1", work_folder="", secret="s")
    assert (first.id, first.work_folder, first.online) == (1, "_work", False)
    with pytest.raises(errors.ServiceError) as raised:
        state.add_agent(tenant_id, scale_set_id, name="R1", work_folder="", secret="s")
    assert (raised.value.status, raised.value.type_key) == (409, "AgentExistsException")
    other_set = scale_set(state, "arc", Scope("organization", "other"))
    other_tenant = state.scale_sets[other_set].tenant_id
    assert state.add_agent(other_tenant, other_set, name="r1", work_folder="", secret="s").id == 2


def test_removing_an_unknown_runner_succeeds_and_a_busy_one_is_refused(state: State) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    state.remove_agent(tenant_id, 0)
    state.remove_agent(tenant_id, 99)
    runner = online_runner(state, scale_set_id, "r1")
    session = state.create_session(tenant_id, scale_set_id, "listener")
    state.acquire(session, queue(state, scale_set_id))
    state.take_job(runner)
    with pytest.raises(errors.ServiceError) as raised:
        state.remove_agent(tenant_id, runner)
    assert raised.value.type_key == "JobStillRunningException"
    assert raised.value.status in (400, 409)


def test_an_old_runner_version_stays_offline(state: State) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    agent = state.add_agent(tenant_id, scale_set_id, name="r1", work_folder="", secret="s")
    _, accepted = state.connect_agent(agent.id, "s", "2.299.0", "2.300.0")
    assert (accepted, state.agents[agent.id].online) == (False, False)
    _, accepted = state.connect_agent(agent.id, "s", "2.300.0", "2.300.0")
    assert (accepted, state.agents[agent.id].online) == (True, True)
    with pytest.raises(errors.ServiceError):
        state.connect_agent(agent.id, "wrong", "2.300.0", "2.300.0")


# -- sessions and messages ---------------------------------------------------------------------------------


def test_one_session_per_scale_set_until_it_is_abandoned(state: State, clock: Clock) -> None:
    scale_set_id = scale_set(state)
    tenant_id = state.scale_sets[scale_set_id].tenant_id
    first = state.create_session(tenant_id, scale_set_id, "a")
    with pytest.raises(errors.ServiceError) as raised:
        state.create_session(tenant_id, scale_set_id, "b")
    assert (raised.value.status, raised.value.type_key) == (409, "RunnerScaleSetSessionConflictException")
    first.polling = 1
    clock.now += 3600
    with pytest.raises(errors.ServiceError):
        state.create_session(tenant_id, scale_set_id, "b")  # still polled: not abandoned
    first.polling = 0
    second = state.create_session(tenant_id, scale_set_id, "b")
    assert list(state.sessions) == [second.id]


def test_messages_batch_job_events_and_are_redelivered_until_deleted(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    assert state.poll(session, 0, None) is None
    queue(state, scale_set_id, 2)
    first = state.poll(session, 0, None)
    assert first is not None
    assert [e.kind for e in first.events] == ["JobAvailable", "JobAvailable"]
    assert first.statistics == Statistics(available=2)
    assert state.poll(session, 0, None) is first  # not deleted: delivered again
    queue(state, scale_set_id)
    state.delete_message(session, first.id)
    second = state.poll(session, 0, None)
    assert second is not None and second.id > first.id
    assert state.poll(session, second.id, None) is None  # lastMessageId acknowledges


def test_a_new_session_is_offered_every_available_job(state: State) -> None:
    scale_set_id = scale_set(state)
    jobs = queue(state, scale_set_id, 2)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    assert kinds(state, session.id) == [("JobAvailable", jobs[0]), ("JobAvailable", jobs[1])]


def test_acquire_returns_the_still_available_subset_up_to_capacity(state: State) -> None:
    scale_set_id = scale_set(state)
    other_set = scale_set(state, "other")
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    mine = queue(state, scale_set_id, 3)
    (theirs,) = queue(state, other_set)
    assert state.acquire(session, [mine[0], theirs, 999]) == [mine[0]]
    assert state.acquire(session, [mine[0]]) == []  # already acquired
    state.poll(session, 0, 2)  # X-ScaleSetMaxCapacity: 2, one already assigned
    assert state.acquire(session, [mine[1], mine[2]]) == [mine[1]]
    assert state.statistics(scale_set_id) == Statistics(available=1, acquired=2, assigned=2)


def test_the_job_lifecycle_sends_assigned_started_completed(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    (job_id,) = queue(state, scale_set_id)
    runner = online_runner(state, scale_set_id, "r1")
    assert state.take_job(runner) is None  # not acquired yet
    assert state.statistics(scale_set_id) == Statistics(available=1, registered=1, idle=1)
    state.acquire(session, [job_id])
    job = state.take_job(runner)
    assert job is not None and (job.state, job.runner_id, job.runner_name) == (JobState.RUNNING, runner, "r1")
    assert state.statistics(scale_set_id) == Statistics(
        acquired=1, assigned=1, running=1, registered=1, busy=1
    )
    done = state.complete_job(job_id, "succeeded")
    assert done is not None and done.result == "succeeded"
    assert runner not in state.agents  # ephemeral: removed after its job
    assert kinds(state, session.id) == [
        ("JobAvailable", job_id),
        ("JobAssigned", job_id),
        ("JobStarted", job_id),
        ("JobCompleted", job_id),
    ]
    assert state.statistics(scale_set_id) == Statistics()
    assert state.complete_job(job_id) is None


def test_started_messages_carry_the_runner_as_it_was(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    state.acquire(session, queue(state, scale_set_id))
    runner = online_runner(state, scale_set_id, "r1")
    state.take_job(runner)
    message = state.poll(session, 0, None)
    assert message is not None
    started = message.events[-1]
    assert (started.kind, started.job.runner_name, started.job.state) == (
        "JobStarted",
        "r1",
        JobState.RUNNING,
    )


def test_a_completion_reoffers_jobs_left_available(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    first, second = queue(state, scale_set_id, 2)
    state.poll(session, 0, 1)
    assert state.acquire(session, [first, second]) == [first]
    kinds(state, session.id)
    state.complete_job(first, "canceled")
    assert kinds(state, session.id) == [("JobCompleted", first), ("JobAvailable", second)]


def test_a_busy_runner_that_disconnects_fails_its_job(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    (job_id,) = queue(state, scale_set_id)
    state.acquire(session, [job_id])
    idle = online_runner(state, scale_set_id, "idle")
    assert state.disconnect_agent(idle) is None
    assert not state.agents[idle].online
    busy = online_runner(state, scale_set_id, "busy")
    state.take_job(busy)
    failed = state.disconnect_agent(busy)
    assert failed is not None and (failed.state, failed.result) == (JobState.COMPLETED, "failed")


def test_cancel_drops_an_available_job_and_completes_an_assigned_one(state: State) -> None:
    scale_set_id = scale_set(state)
    session = state.create_session(state.scale_sets[scale_set_id].tenant_id, scale_set_id, "l")
    available, assigned = queue(state, scale_set_id, 2)
    state.acquire(session, [assigned])
    canceled = state.cancel_job(available)
    assert canceled is not None and canceled.state == JobState.CANCELED
    completed = state.cancel_job(assigned)
    assert completed is not None and (completed.state, completed.result) == (JobState.COMPLETED, "canceled")


def test_every_change_names_the_scale_set_it_changed(clock: Clock) -> None:
    changed: list[int | None] = []
    state = State(clock=clock, seed=1, session_timeout=60.0, on_change=changed.append)
    a, b = scale_set(state, "a"), scale_set(state, "b")
    session = state.create_session(state.scale_sets[a].tenant_id, a, "listener")
    changed.clear()
    [job] = queue(state, a)
    runner = online_runner(state, a, "runner-a")
    state.acquire(session, [job])
    state.take_job(runner)
    state.complete_job(job)
    state.delete_session(a, session.id)
    state.delete_scale_set(state.scale_sets[b].tenant_id, b)
    assert changed == [a, a, a, a, a, a, a, b]
    state.add_group(ORG, "other")  # may concern every scale set of the tenant
    assert changed[-1] is None


def test_many_scale_sets_keep_their_own_jobs_statistics_and_sessions(state: State) -> None:
    sets = [scale_set(state, f"set-{i}") for i in range(30)]
    tenant_id = state.scale_sets[sets[0]].tenant_id
    sessions = {s: state.create_session(tenant_id, s, f"listener-{s}") for s in sets}
    for _ in range(3):  # jobs of every set interleaved in queue order
        for s in sets:
            queue(state, s)
    for s in sets:
        first, second, third = [j for j in state.jobs.values() if j.scale_set_id == s]
        assert state.acquire(sessions[s], [second.runner_request_id, first.runner_request_id]) == [
            second.runner_request_id,
            first.runner_request_id,
        ]
        runner = online_runner(state, s, f"runner-{s}")
        assert state.take_job(runner) is first  # the oldest assigned job of its own set
        state.complete_job(first.runner_request_id)
        state.cancel_job(third.runner_request_id)
        assert state.session_of(s) is sessions[s]
        assert state.statistics(s) == Statistics(acquired=1, assigned=1, registered=0)
    last = sets[-1]
    state.delete_scale_set(tenant_id, last)
    assert state.session_of(last) is None and last not in state.scale_sets
    left = [j.state for j in state.jobs.values() if j.scale_set_id == last]
    assert left == [JobState.COMPLETED, JobState.CANCELED, JobState.CANCELED]
    assert state.statistics(sets[0]) == Statistics(acquired=1, assigned=1)
