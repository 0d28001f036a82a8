"""The Flink Kubernetes Operator's own FlinkDeployment CRD (release-1.15.0, byte for byte in
../shared/reference/flink-kubernetes-operator) validates what accelplane renders, strictly, and is
not vacuous: it refuses the mistakes a hand-written manifest makes. The operator's admission rules
(tests/flink/operator_schema.py) catch what the CRD lets through."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLE_SPECS
from tests.flink.operator_schema import validate_flink_deployment
from tests.support.paths import reference
from tests.support.render import objects_for
from tests.support.validators import CRD_FILES, validate_crd_object, validate_k8s_object

SHARED = next(p for p in EXAMPLE_SPECS if p.stem == "shared-gpus")


@pytest.fixture(scope="module")
def deployment() -> dict[str, Any]:
    """A FlinkDeployment accelplane renders for the shared-gpus example (MIG pod template)."""
    return next(o for o in objects_for(SHARED) if o["kind"] == "FlinkDeployment")


def test_we_render_the_crds_served_storage_version() -> None:
    for kind in ("FlinkDeployment", "FlinkSessionJob"):
        crd = yaml.safe_load(reference(CRD_FILES[("flink.apache.org", kind)]).read_text())
        assert crd["spec"]["names"]["kind"] == kind
        assert [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]] == [
            ("v1beta1", True, True)
        ]


def test_the_rendered_deployment_passes_the_crd_and_the_admission_rules(deployment: dict[str, Any]) -> None:
    validate_crd_object(deployment)
    validate_flink_deployment(deployment)
    validate_k8s_object(deployment)  # what fuzzing and the examples route it through: both


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[last] = value

    return mutate


@pytest.mark.parametrize(
    "mutate",
    [
        _set("spec.taskManager.resource.gpu", 1),  # no such field: GPUs go into the pod template
        _set("spec.taskManager.replica", 2),  # misspelt replicas
        _set("spec.flinkVersion", "v1_99"),
        _set("spec.mode", "session"),
        _set("spec.taskManager.resource.cpu", "2"),  # a number in the CRD
        _set("spec.taskManager.podTemplate.spec.containers.0.resource", {}),  # misspelt resources
        _set("spec.job", {"jarURI": "local:///a.jar", "upgradeMode": "last_state"}),
    ],
    ids=[
        "resource-gpu",
        "replica",
        "flink-version",
        "mode",
        "cpu-string",
        "container-resource",
        "upgrade-mode",
    ],
)
def test_the_crd_refuses_what_the_operator_would(
    deployment: dict[str, Any], mutate: Callable[[dict[str, Any]], None]
) -> None:
    broken = copy.deepcopy(deployment)
    mutate(broken)
    with pytest.raises(AssertionError):
        validate_crd_object(broken)


def test_admission_rules_catch_what_the_crd_lets_through(deployment: dict[str, Any]) -> None:
    """``flinkConfiguration`` is free-form in the CRD (x-kubernetes-preserve-unknown-fields); the
    operator's DefaultValidator refuses a namespace set there."""
    broken = copy.deepcopy(deployment)
    broken["spec"]["flinkConfiguration"]["kubernetes.namespace"] = "elsewhere"
    validate_crd_object(broken)
    with pytest.raises(AssertionError):
        validate_flink_deployment(broken)
