"""Facts about a Flink cluster live on the model and are asked one way (issue 27): the target is a
`FlinkTarget` (a StrEnum, so it still equals the spec's string), the platform, "on Kubernetes?" and
"uses GPUs?" are properties, and the old spellings do not come back."""

from __future__ import annotations

import ast

import pytest
from accelplane.model import FlinkTarget
from accelplane.quantity import Quantity

from tests.conftest import EXAMPLE_SPECS
from tests.foundation.test_layers import ALL
from tests.support.specs import model_of

PLATFORMS = {"kubernetes": "kubernetes", "kubernetes-operator": "kubernetes", "yarn": "yarn", "standalone": "standalone"}


@pytest.mark.parametrize("target", sorted(PLATFORMS))
def test_target_is_a_str_enum_with_its_platform(target: str) -> None:
    t = FlinkTarget(target)
    assert t == target and f"{t}" == target and isinstance(t, str)
    assert t.platform == PLATFORMS[target]
    assert t.on_kubernetes == (PLATFORMS[target] == "kubernetes")


def test_every_schema_target_is_a_flink_target() -> None:
    from accelplane.schema_document import property_schema

    assert sorted(property_schema("$defs.flinkSettings.target")["enum"]) == sorted(t.value for t in FlinkTarget)


def test_cluster_properties_on_every_example_cluster() -> None:
    clusters = [c for spec in EXAMPLE_SPECS for c in model_of(spec).flink_clusters]
    for c in clusters:
        gpu = c.task_manager.gpu
        amount = gpu.amount if gpu is not None else 0
        assert (c.uses_gpus, c.gpus_per_task_manager, c.task_manager.gpus) == (amount > 0, amount, amount)
        assert isinstance(c.target, FlinkTarget) and c.platform == PLATFORMS[c.target]
        assert c.on_kubernetes == (c.platform == "kubernetes")
        assert c.task_manager.cpu_amount == c.task_manager.cpu.number
    assert {c.target for c in clusters} == set(FlinkTarget)
    assert Quantity.parse("500m").number == 0.5 and Quantity.parse("4").number == 4
    assert isinstance(Quantity.parse("4").number, int)


RETIRED = {"KUBERNETES_TARGETS", "TARGET_PLATFORM", "gpu_amount", "target_platform", "is_kubernetes", "cpu_number"}


@pytest.mark.parametrize("name", sorted(n for n in ALL if n != "accelplane.job_helpers.pyflink_slot_groups"))
def test_cluster_facts_are_asked_one_way(name: str) -> None:
    """No module defines or uses the retired helpers, or tests a target against a collection."""
    tree = ast.parse(ALL[name].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.alias) and (node.id if isinstance(node, ast.Name) else node.name) in RETIRED:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.FunctionDef) and node.name in RETIRED:
            found.append(f"line {node.lineno}: def {node.name}")
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Attribute)
            and node.left.attr == "target"
            and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)} (use .on_kubernetes / .platform)")
    assert not found, "\n".join(found)
