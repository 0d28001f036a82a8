"""URN stability: list order never changes a URN; renaming a queue changes exactly that queue's URN."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.pulumi.conftest import ProgramRun, RunProgram, stack_config
from tests.support.pulumi_program import PULUMI_STACKS, by_name, copy_project

PERMUTATIONS = ("reverse", "rotate", "shuffle-1", "shuffle-2", "shuffle-3")


def permute(data: Any, how: str, rng: random.Random) -> Any:
    """Reorder every list in a document, recursively."""
    if isinstance(data, dict):
        return {k: permute(v, how, rng) for k, v in data.items()}
    if isinstance(data, list):
        items = [permute(v, how, rng) for v in data]
        if how == "reverse":
            return items[::-1]
        if how == "rotate":
            return items[1:] + items[:1]
        rng.shuffle(items)
        return items
    return data


def urn_graph(run: ProgramRun) -> dict[str, list[str]]:
    """Every registered URN → the URNs it depends on."""
    return {r.urn: r.dependencies for r in run.registrations}


def run_project(pulumi_run: RunProgram, stack: str, project: Path) -> ProgramRun:
    config = stack_config(stack)
    config.pop("accelplane:renderDir", None)
    return pulumi_run(config, stack=stack, project_dir=project)


@pytest.mark.parametrize("how", PERMUTATIONS)
@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_permuting_every_list_changes_no_urn(
    stack: str, how: str, pulumi_run: RunProgram, tmp_path: Path
) -> None:
    baseline = run_project(pulumi_run, stack, copy_project(tmp_path / "a"))
    rng = random.Random(f"{stack}/{how}")
    permuted = run_project(
        pulumi_run, stack, copy_project(tmp_path / "b", lambda _rel, data: permute(data, how, rng))
    )
    assert urn_graph(permuted) == urn_graph(baseline)


def rename_queue(old: str, new: str) -> Any:
    """A spec transform renaming queue ``old`` everywhere it is named (queue, parents, Flink clusters)."""

    def transform(_rel: str, data: Any) -> Any:
        for q in data.get("queues") or []:
            if q.get("name") == old:
                q["name"] = new
            if q.get("parent") == old:
                q["parent"] = new
        for cluster in (data.get("flink") or {}).get("clusters") or []:
            if cluster.get("queue") == old:
                cluster["queue"] = new
        return data

    return transform


@pytest.mark.parametrize("old", ["batch", "gpu-platform"])
def test_renaming_a_queue_changes_exactly_its_urn(old: str, pulumi_run: RunProgram, tmp_path: Path) -> None:
    new = f"{old}-renamed"
    before = run_project(pulumi_run, "prod-eu", copy_project(tmp_path / "a"))
    after = run_project(pulumi_run, "prod-eu", copy_project(tmp_path / "b", rename_queue(old, new)))

    old_urn = by_name(before)[f"queue/{old}"].urn
    new_urn = by_name(after)[f"queue/{new}"].urn
    assert old_urn.endswith(f"::queue/{old}") and new_urn.endswith(f"::queue/{new}")
    assert set(urn_graph(before)) - set(urn_graph(after)) == {old_urn}
    assert set(urn_graph(after)) - set(urn_graph(before)) == {new_urn}

    # Dependants keep their URNs; they now depend on the renamed queue's new URN.
    dependants = [r for r in before.registrations if old_urn in r.dependencies]
    if old == "gpu-platform":
        assert {r.logical for r in dependants} >= {"queue/streaming", "queue/batch"}
    after_by_urn = after.by_urn()
    for r in dependants:
        assert new_urn in after_by_urn[r.urn].dependencies
        assert old_urn not in after_by_urn[r.urn].dependencies


def test_urns_depend_only_on_kind_namespace_and_name(pulumi_run: RunProgram) -> None:
    run = pulumi_run({"accelplane:spec": "stacks/prod-eu.yaml"}, stack="prod-eu")
    for r in run.kubernetes():
        meta = r.inputs["metadata"]
        kind = r.type.rsplit(":", 1)[1].lower()
        expected = (
            f"{kind}/{meta['namespace']}/{meta['name']}" if "namespace" in meta else f"{kind}/{meta['name']}"
        )
        assert r.name == expected
        # The URN is stack, project, the type chain (kinds of the parents, never their names) and the
        # logical name (the program's one platform per stack uses no prefix): nothing else takes part.
        stack, project, qualified_type, name = r.urn.removeprefix("urn:pulumi:").split("::")
        assert (stack, project, name) == ("prod-eu", "accelplane", expected)
        *parents, own_type = qualified_type.split("$")
        assert own_type == r.type
        assert parents[-1].startswith("accelplane:") and parents[-1] != "accelplane:index:GpuPlatform"
