"""Day-two transitions under the real Pulumi program (issue 41): each (old, new) spec pair is run
through the program under mocks, the registered objects are compared by URN with pulumi-kubernetes'
replace rules and Kubernetes' immutable fields (`accelplane.lifecycle.plan`), and every state the
run passes through (creates and updates first, deletes last) is checked against the rules the
consumers enforce (Volcano's queue hierarchy). A transition either never passes a refused state, or
`accelplane diff` says it needs two applies (AP1602)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane.diff import compare, load_side
from accelplane.diff.impact.day2 import hierarchy_violations, queues_of
from accelplane.lifecycle import plan, states

from tests.pulumi.conftest import RunProgram
from tests.support.pulumi_program import copy_project, normalise
from tests.support.specs import write_spec
from tests.support.stack_copies import load

Edit = Callable[[dict[str, Any]], None]


def _bump_priority(d: dict[str, Any]) -> None:
    d["priorityClasses"] = [{"name": "flink-critical", "value": 100001}]


def _rename_queue(d: dict[str, Any]) -> None:
    next(q for q in d["queues"] if q["name"] == "streaming")["name"] = "realtime"
    next(c for c in d["flink"]["clusters"] if c["name"] == "fraud-scoring")["queue"] = "realtime"


def _lower_batch(d: dict[str, Any]) -> None:
    next(q for q in d["queues"] if q["name"] == "batch")["deserved"]["nvidia.com/gpu"] = 4


def _hand_over_scheduler_config(d: dict[str, Any]) -> None:
    d.setdefault("volcano", {})["manageSchedulerConfig"] = False


def _dra_amount(d: dict[str, Any]) -> None:
    c = next(c for c in d["flink"]["clusters"] if c.get("taskManager", {}).get("gpu"))
    c["taskManager"]["gpu"]["amount"] = c["taskManager"]["gpu"].get("amount", 1) + 1


def _objects(run: Any) -> dict[str, dict[str, Any]]:
    return {r.urn: normalise(r.inputs) for r in run.kubernetes()}


def _transition(tmp_path: Path, pulumi_run: RunProgram, stack: str, edit: Edit) -> tuple[list[Any], list[Any], list[str]]:
    project = copy_project(tmp_path / "project")
    data = load(project / "stacks" / f"{stack}.yaml")
    new_data = copy.deepcopy(data)
    edit(new_data)
    write_spec(project / "stacks", new_data, f"{stack}-new.yaml")
    old = _objects(pulumi_run({"accelplane:spec": f"stacks/{stack}.yaml"}, stack=stack, project_dir=project))
    new = _objects(pulumi_run({"accelplane:spec": f"stacks/{stack}-new.yaml"}, stack=stack, project_dir=project))
    steps = plan(old, new)
    diff = compare(
        load_side(str(project / "stacks" / f"{stack}.yaml")), load_side(str(project / "stacks" / f"{stack}-new.yaml"))
    )
    lines = [i.message for i in diff.impacts if i.category == "day2"]
    return steps, states(old, steps, new), lines


@pytest.mark.parametrize(
    ("stack", "edit", "expect"),
    [
        ("prod-eu", _bump_priority, {"replace-option"}),
        ("prod-eu", _lower_batch, {"update"}),
        ("prod-eu", _hand_over_scheduler_config, {"delete"}),
        ("dra-gpus", _dra_amount, {"replace-option"}),
    ],
    ids=["priority-value", "queue-deserved", "scheduler-config-hand-over", "dra-gpu-amount"],
)
def test_transition_passes_no_refused_state(
    stack: str, edit: Edit, expect: set[str], tmp_path: Path, pulumi_run: RunProgram
) -> None:
    steps, passed, lines = _transition(tmp_path, pulumi_run, stack, edit)
    actions = {s.action for s in steps}
    assert expect <= actions, steps
    assert "refused" not in actions, [s for s in steps if s.action == "refused"]
    for state in passed:
        assert hierarchy_violations(queues_of(list(state.values()))) == []
    assert not any("[AP1602]" in line for line in lines)
    if edit is _hand_over_scheduler_config:
        (delete,) = [s for s in steps if s.action == "delete"]
        assert delete.key.endswith("volcano-scheduler-configmap") and delete.retained
        assert any("NOT deleted (adopted, retainOnDelete)" in line for line in lines)


def test_queue_rename_passes_a_refused_state_and_the_diff_says_two_applies(
    tmp_path: Path, pulumi_run: RunProgram
) -> None:
    steps, passed, lines = _transition(tmp_path, pulumi_run, "prod-eu", _rename_queue)
    refused = [i for i, state in enumerate(passed) if hierarchy_violations(queues_of(list(state.values())))]
    assert refused, "the rename must pass through a state Volcano refuses"
    # the first refused state is a create, before any delete: Pulumi stops there
    assert steps[refused[0]].action in ("create", "update")
    assert all(s.action != "delete" for s in steps[: refused[0]])
    assert any("[AP1602]" in line and "two steps" in line for line in lines)
