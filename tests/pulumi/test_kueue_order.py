"""Pulumi orders Kueue's objects by the names they reference (docs/pulumi.md "Order", docs/kueue.md
"Day one and day two"): a LocalQueue after its ClusterQueue, a ClusterQueue after its Cohort and
every ResourceFlavor it lists, a Cohort after its parent Cohort, a workload whose pod template carries
``kueue.x-k8s.io/queue-name`` after that LocalQueue. Pulumi creates in that order and deletes in the
reverse one, so on day two a ResourceFlavor or ClusterQueue is deleted only after the ClusterQueues or
LocalQueues naming it (Kueue's resource-in-use finalizer would otherwise hold the delete)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.derive.kueue import QUEUE_NAME_LABEL
from accelplane.model_convert import build_model
from accelplane.pulumi.planning import SPEC_REFERENCES, creation_order, dependencies, logical_name

from tests.kueue.test_render import _wide
from tests.pulumi.conftest import RunProgram, stack_config
from tests.support.paths import reference
from tests.support.pulumi_program import by_name
from tests.support.specs import stack_document
from tests.support.validators import CRD_FILES

STACK = "kueue-gpus"

EXPECTED = {
    "localqueue/flink/streaming": {"clusterqueue/streaming", "namespace/flink"},
    "localqueue/flink-batch/batch": {"clusterqueue/batch"},
    **{
        f"clusterqueue/{q}": {
            "cohort/gpu-platform",
            "resourceflavor/cpu",
            "resourceflavor/a100-nvidia-a100-sxm4-80gb",
            "resourceflavor/l4-nvidia-l4",
        }
        for q in ("streaming", "batch")
    },
    "cohort/gpu-platform": set(),
    "resourceflavor/cpu": set(),
    "resourceflavor/a100-nvidia-a100-sxm4-80gb": set(),
    "resourceflavor/l4-nvidia-l4": set(),
}
"""The Kueue objects of stacks/kueue-gpus.yaml and what each must wait for (read off the rendered
manifests: build/kueue-gpus/kubernetes/{localqueue,clusterqueue,cohort}_*.yaml)."""


def test_kueue_objects_depend_on_what_they_name(pulumi_run: RunProgram) -> None:
    run = pulumi_run(stack_config(STACK), stack=STACK)
    names = by_name(run)
    urn_name = {r.urn: n for n, r in names.items()}
    order = {r.urn: i for i, r in enumerate(run.registrations)}
    for name, expected in EXPECTED.items():
        reg = names[name]
        assert {urn_name[d] for d in reg.dependencies} == expected, name
        for dep in reg.dependencies:
            assert order[dep] < order[reg.urn], (name, urn_name[dep])
    # the operator cluster's pod templates carry the queue-name label: its FlinkDeployment waits for
    # the LocalQueue (Kueue would keep its pods gated on a missing LocalQueue)
    fd = names["flinkdeployment/flink-batch/video-embeddings"]
    labels = fd.inputs["spec"]["taskManager"]["podTemplate"]["metadata"]["labels"]
    assert labels[QUEUE_NAME_LABEL] == "batch"
    assert names["localqueue/flink-batch/batch"].urn in fd.dependencies
    assert order[names["localqueue/flink-batch/batch"].urn] < order[fd.urn]


def _objects(doc: dict[str, Any]) -> list[Any]:
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return build_all(spec).objects


@pytest.mark.parametrize("case", ["example", "wide"])
def test_creation_order_puts_every_referent_first(case: str) -> None:
    objects = _objects(stack_document(STACK) if case == "example" else _wide())
    deps = dependencies(objects)
    position = {o.key: i for i, o in enumerate(creation_order(objects, deps))}
    by_key = {o.key: o for o in objects}
    edges = 0
    for obj in objects:
        for dep in deps[obj.key]:
            assert position[dep] < position[obj.key], (logical_name(obj), logical_name(by_key[dep]))
            edges += dep[0] == "kueue.x-k8s.io"
    # example: 2 LocalQueues, 2 ClusterQueues x (cohort + 3 flavors), the FlinkDeployment's LocalQueue
    assert edges >= 11


def test_a_nested_cohort_waits_for_its_parent_and_its_cluster_queues_for_it() -> None:
    objects = _objects(_wide())
    logical = {o.key: logical_name(o) for o in objects}
    named = {logical[key]: {logical[d] for d in deps} for key, deps in dependencies(objects).items()}
    flavors = {n for n in named if n.startswith("resourceflavor/")}
    assert named["cohort/research"] == {"cohort/gpu-platform"}
    assert named["cohort/gpu-platform"] == set()
    assert "cohort/research" in named["clusterqueue/vision"]
    assert "cohort/research" in named["clusterqueue/nlp"]
    # a ClusterQueue outside any cohort names no Cohort, only its flavors
    assert named["clusterqueue/solo"] == flavors


def test_day_two_deletes_referrers_before_referents() -> None:
    """Removing queue ``batch`` (its ClusterQueue and LocalQueue go, nothing else names them):
    Pulumi deletes in reverse dependency order of the state, so the LocalQueue goes before the
    ClusterQueue, the ClusterQueues before the flavors and the Cohort."""
    objects = _objects(stack_document(STACK))
    reverse = [logical_name(o) for o in reversed(creation_order(objects))]
    assert reverse.index("localqueue/flink-batch/batch") < reverse.index("clusterqueue/batch")
    for cq in ("clusterqueue/batch", "clusterqueue/streaming"):
        for referent in ("cohort/gpu-platform", "resourceflavor/cpu", "resourceflavor/l4-nvidia-l4"):
            assert reverse.index(cq) < reverse.index(referent)
    assert reverse.index("flinkdeployment/flink-batch/video-embeddings") < reverse.index("localqueue/flink-batch/batch")


def _storage_schema(group: str, kind: str) -> dict[str, Any]:
    crd = yaml.safe_load(reference(CRD_FILES[(group, kind)]).read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize(
    ("group", "kind"), sorted(k for k in SPEC_REFERENCES if k in CRD_FILES), ids=lambda v: str(v)
)
def test_every_reference_path_is_a_string_field_of_the_crd(group: str, kind: str) -> None:
    """The table's paths against the upstream CRDs' storage versions (Kueue v1beta2 of v0.19.2,
    ../shared/reference/kueue): a misspelt field (``cohort`` for v1beta2's ``cohortName``) would
    silently order nothing."""
    for field in SPEC_REFERENCES[(group, kind)]:
        node = _storage_schema(group, kind)["properties"]["spec"]
        for step in field.path.split("."):
            node = node["properties"][step.removesuffix("[]")]
            if step.endswith("[]"):
                assert node["type"] == "array", (kind, field.path)
                node = node["items"]
        assert node["type"] == "string", (kind, field.path)
