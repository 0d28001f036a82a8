"""The Kueue objects of the example stack and of wider variants pass Kueue v0.19.2's own checks as
far as they run here: the v1beta2 CRD schemas (strict), every ``x-kubernetes-validations`` CEL rule
of them (cel-python, after OpenAPI defaulting) and the ported webhook rules
(`accelplane.kueue_rules`). Kueue's Go webhooks themselves cannot be built here (Go 1.26)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.kueue import API_VERSION
from accelplane.kueue_rules import cluster_queue_errors, resource_flavor_errors
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import validate_document

from tests.support.kueue_cel import violations
from tests.support.paths import REPO_ROOT, reference
from tests.support.specs import stack_document
from tests.support.validators import crd_schema, validate_crd_object

KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue")


def _spec(doc: dict[str, Any]) -> Spec:
    assert validate_document(doc) == []
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return spec


def _objects(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [o.manifest for o in build_all(_spec(doc)).objects if o.manifest["apiVersion"].startswith("kueue.x-k8s.io/")]


def _wide() -> dict[str, Any]:
    """The example plus a three-level queue tree, an AMD pool (a second GPU resource), a pool
    without labels or taints, a queue without deserved and one without capability."""
    doc = stack_document("kueue-gpus")
    doc["nodePools"] += [
        {"name": "mi300", "nodes": 2, "cpu": 128, "memory": "1536Gi",
         "gpu": {"vendor": "amd", "model": "AMD Instinct MI300X", "perNode": 8},
         "labels": {"accelplane.io/pool": "mi300"},
         "taints": [{"key": "amd.com/gpu", "value": "present", "effect": "NoSchedule"},
                    {"key": "amd.com/gpu", "value": "present", "effect": "NoExecute"}]},
        {"name": "t4", "nodes": 1, "cpu": 16, "memory": "64Gi", "gpu": {"vendor": "nvidia", "model": "Tesla T4", "perNode": 4}},
    ]
    doc["queues"] += [
        {"name": "research", "parent": "gpu-platform"},
        {"name": "vision", "parent": "research", "deserved": {"cpu": 32, "memory": "128Gi", "amd.com/gpu": 8}},
        {"name": "nlp", "parent": "research", "reclaimable": False,
         "capability": {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": 4}},
        {"name": "solo", "deserved": {"cpu": 8, "memory": "32Gi"}},
    ]
    cluster = copy.deepcopy(doc["flink"]["clusters"][0])
    cluster.update(name="vision-train", queue="vision", namespace="research")
    cluster["taskManager"] = {"replicas": 1, "slots": 1, "cpu": 8, "memory": "32Gi", "gpu": {"amount": 4, "pool": "mi300"}}
    cluster["job"]["parallelism"] = 1
    cluster["config"] = {"execution.checkpointing.dir": "s3://x/vision"}
    doc["flink"]["clusters"].append(cluster)
    return doc


CASES = {"example": lambda: stack_document("kueue-gpus"), "wide": _wide}


@pytest.fixture(scope="module", params=sorted(CASES))
def objects(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return _objects(CASES[request.param]())


def test_every_kind_is_rendered_at_v1beta2(objects: list[dict[str, Any]]) -> None:
    assert {o["kind"] for o in objects} == set(KINDS)
    assert {o["apiVersion"] for o in objects} == {API_VERSION}


def test_v1beta2_is_served_and_stored_by_kueue_0_19_2() -> None:
    for name in ("resourceflavors", "clusterqueues", "cohorts", "localqueues"):
        crd = yaml.safe_load(reference(f"kueue/kueue.x-k8s.io_{name}.yaml").read_text())
        (v,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta2"]
        assert v["served"] and v["storage"], name


def test_objects_pass_the_crd_schemas_strictly(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        validate_crd_object(obj)


def test_objects_pass_every_cel_rule_after_defaulting(objects: list[dict[str, Any]]) -> None:
    evaluated: set[str] = set()
    for obj in objects:
        broken, rules = violations(crd_schema("kueue.x-k8s.io", obj["kind"], "v1beta2"), obj)
        assert broken == [], f"{obj['kind']}/{obj['metadata']['name']}: {broken}"
        evaluated |= set(rules)
    # the rules on what accelplane writes are reached: per-flavor resource counts, limits only in a
    # cohort, taint effects
    assert any("size(x.resources) == size(self.coveredResources)" in r for r in evaluated)
    assert any("borrowingLimit" in r and "cohortName" in r for r in evaluated)
    assert any("x.effect in ['NoSchedule'" in r for r in evaluated)


def test_objects_pass_the_ported_webhook_rules(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["kind"] == "ClusterQueue":
            assert cluster_queue_errors(obj) == []
        elif obj["kind"] == "ResourceFlavor":
            assert resource_flavor_errors(obj) == []


def test_the_cel_evaluation_rejects_what_kueue_rejects() -> None:
    """Controls: the same evaluator refuses a ClusterQueue with a borrowingLimit but no cohort, a
    flavor with fewer resources than coveredResources, and a ResourceFlavor taint effect Kueue does
    not know."""
    (cq,) = [o for o in _objects(stack_document("kueue-gpus")) if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "batch"]
    schema = crd_schema("kueue.x-k8s.io", "ClusterQueue", "v1beta2")
    no_cohort = copy.deepcopy(cq)
    del no_cohort["spec"]["cohortName"]
    assert any("borrowingLimit must be nil" in m for m in violations(schema, no_cohort)[0])
    short = copy.deepcopy(cq)
    short["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert any("same number of resources" in m for m in violations(schema, short)[0])
    rf = {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": "x"},
          "spec": {"nodeTaints": [{"key": "k", "value": "v", "effect": "Sometimes"}]}}
    assert violations(crd_schema("kueue.x-k8s.io", "ResourceFlavor", "v1beta2"), rf)[0]


def test_gpu_models_give_per_model_quota() -> None:
    """batch lists only NVIDIA L4 in gpuModels: its GPUs are all on the L4 flavor, none on A100."""
    (cq,) = [o for o in _objects(stack_document("kueue-gpus")) if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "batch"]
    gpus = {
        f["name"]: next(r for r in f["resources"] if r["name"] == "nvidia.com/gpu")
        for f in cq["spec"]["resourceGroups"][0]["flavors"]
    }
    assert gpus["l4-nvidia-l4"] == {"name": "nvidia.com/gpu", "nominalQuota": "16", "borrowingLimit": "8"}
    assert gpus["a100-nvidia-a100-sxm4-80gb"]["nominalQuota"] == "0"
    assert gpus["a100-nvidia-a100-sxm4-80gb"]["borrowingLimit"] == "0"
    assert gpus["cpu"]["nominalQuota"] == "0"


def test_quota_adds_up_to_deserved() -> None:
    """Per resource, the flavors' nominal quotas add up to the queue's deserved."""
    from accelplane.quantity import parse_quantity

    doc = stack_document("kueue-gpus")
    queues = {q["name"]: q for q in doc["queues"]}
    for cq in (o for o in _objects(doc) if o["kind"] == "ClusterQueue"):
        deserved = queues[cq["metadata"]["name"]]["deserved"]
        for name, value in deserved.items():
            total = sum(
                parse_quantity(r["nominalQuota"])
                for f in cq["spec"]["resourceGroups"][0]["flavors"] for r in f["resources"] if r["name"] == name
            )
            assert total == parse_quantity(value), (cq["metadata"]["name"], name)


KUBERNETES_STACKS = sorted(
    p.stem for p in (REPO_ROOT / "stacks").glob("*.yaml")
    if not p.name.startswith("Pulumi.") and "kubernetes" in stack_document(p.stem)["cluster"]["platforms"]
)


UNADMITTED = {
    "dra-gpus": "DRA TaskManagers request no GPU and their queues deserve no cpu/memory beyond the JobManagers'",
    "shared-gpus": "queue features deserves nothing, so under Kueue its pods have no nominal quota",
}
"""Examples written for Volcano whose pods Kueue would never admit (AP2610), and why."""


@pytest.mark.parametrize("stack", KUBERNETES_STACKS)
def test_every_kubernetes_example_under_kueue(stack: str) -> None:
    """Every Kubernetes example switched to ``scheduler: kueue`` (MIG, shared, AMD and DRA pools,
    several queue trees): accelplane reports no Kueue error that is not a real one, and what it
    renders passes the CRD schemas, every CEL rule and the ported webhook rules."""
    doc = stack_document(stack)
    doc["scheduler"] = "kueue"
    for block in ("volcano", "yunikorn"):
        doc.pop(block, None)
    spec = _spec(doc)
    errors = [p for p in run_checks(spec) if p.finding is not None and p.finding.code.startswith("AP26")
              and p.finding.severity.value == "error"]
    if stack in UNADMITTED:
        # real: Kueue needs quota for every resource a pod requests, Volcano does not
        assert errors and {p.finding.code for p in errors if p.finding} == {"AP2610"}, errors
    else:
        assert errors == []
    for obj in _objects(doc):
        validate_crd_object(obj)
        broken, _ = violations(crd_schema("kueue.x-k8s.io", obj["kind"], "v1beta2"), obj)
        assert broken == [], broken
        if obj["kind"] == "ClusterQueue":
            assert cluster_queue_errors(obj) == []
        elif obj["kind"] == "ResourceFlavor":
            assert resource_flavor_errors(obj) == []
