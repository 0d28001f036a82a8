"""What a YuniKorn cluster renders, checked with YuniKorn's own rules (tests/support/yunikorn.py, proven
against YuniKorn's tests in test_upstream_cases.py) and with kubernetes-validate --strict.

stacks/yunikorn-gpus.yaml is the example; every other Kubernetes example stack switched to
``scheduler: yunikorn`` must render a configuration YuniKorn accepts whenever our checks pass it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.yunikorn import (
    APP_ID_LABEL,
    CONFIGMAP,
    QUEUE_LABEL,
    QUEUES_KEY,
    SCHEDULING_POLICY_ANNOTATION,
    TASK_GROUP_NAME_ANNOTATION,
    TASK_GROUPS_ANNOTATION,
    format_value,
)
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.quantity import parse_quantity as k8s_quantity
from accelplane.schema import validate_document
from accelplane.spec_loader import load_spec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.support.render import files_for, objects_for
from tests.support.validators import validate_core_object, validate_k8s_object
from tests.support.yunikorn import parse_quantity, parse_task_groups, scheduling_policy, validate_config

EXAMPLE = STACKS_DIR / "yunikorn-gpus.yaml"


def _configmap(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == CONFIGMAP)


def test_example_queue_config_is_accepted_by_yunikorns_validator() -> None:
    cm = _configmap(objects_for(EXAMPLE))
    assert cm["metadata"]["namespace"] == "yunikorn"
    conf = validate_config(cm["data"][QUEUES_KEY])
    (partition,) = conf["partitions"]
    assert partition["name"] == "default"
    assert partition["placementrules"] == [
        {"name": "provided", "create": False},
        {"name": "fixed", "value": "root.default", "create": True},
    ]
    (root,) = partition["queues"]
    (platform,) = root["queues"]
    assert platform["resources"] == {
        "guaranteed": {"memory": "3Ti", "nvidia.com/gpu": "48", "vcore": "512"},
        "max": {"memory": "4Ti", "nvidia.com/gpu": "56", "vcore": "640"},
    }
    streaming = next(q for q in platform["queues"] if q["name"] == "streaming")
    assert streaming["properties"] == {
        "application.sort.policy": "fifo",
        "preemption.policy": "disabled",
        "priority.offset": "100",
    }
    # YuniKorn's units: vcore in milli-cores, memory in bytes
    assert parse_quantity(streaming["resources"]["guaranteed"]["vcore"], milli=True) == 256_000
    assert parse_quantity(streaming["resources"]["guaranteed"]["memory"]) == 1536 * 2**30


def test_no_volcano_objects_on_a_yunikorn_cluster() -> None:
    kinds = {(o["apiVersion"], o["kind"]) for o in objects_for(EXAMPLE)}
    assert not {k for k in kinds if k[0].startswith("scheduling.volcano.sh")}
    names = {o["metadata"]["name"] for o in objects_for(EXAMPLE)}
    assert "volcano-scheduler-configmap" not in names


def _templates(files: dict[str, tuple[str, int]], cluster: str) -> dict[str, dict[str, Any]]:
    return {
        role: yaml.safe_load(files[f"flink/{cluster}/{role}-pod-template.yaml"][0])
        for role in ("jobmanager", "taskmanager")
    }


@pytest.mark.parametrize(
    ("cluster", "queue", "replicas", "gpus", "pool"),
    [("fraud-scoring", "root.gpu-platform.streaming", 4, 2, "a100"), ("video-embeddings", "root.gpu-platform.batch", 3, 1, "l4")],
)
def test_pod_templates_carry_yunikorns_gang(cluster: str, queue: str, replicas: int, gpus: int, pool: str) -> None:
    files = files_for(EXAMPLE)
    templates = _templates(files, cluster)
    for role, template in templates.items():
        validate_core_object(template)
        meta = template["metadata"]
        assert template["spec"]["schedulerName"] == "yunikorn"
        assert meta["labels"][APP_ID_LABEL] == cluster
        assert meta["labels"][QUEUE_LABEL] == queue
        assert "scheduling.k8s.io/group-name" not in meta["annotations"]
        assert meta["annotations"][TASK_GROUP_NAME_ANNOTATION] == role
        assert scheduling_policy(meta["annotations"][SCHEDULING_POLICY_ANNOTATION]) == (600, "Soft")
        groups = parse_task_groups(meta["annotations"][TASK_GROUPS_ANNOTATION])
        assert groups is not None
        by_name = {g.name: g for g in groups}
        assert set(by_name) == {"jobmanager", "taskmanager"}
        assert by_name["jobmanager"].min_member == 1
        tm = by_name["taskmanager"]
        assert tm.min_member == replicas
        assert tm.min_resource["nvidia.com/gpu"] == gpus
        tm_spec = templates["taskmanager"]["spec"]
        assert tm.node_selector == tm_spec["nodeSelector"] == {"accelplane.io/pool": pool}
        assert tm.tolerations == tm_spec["tolerations"]
        # a real TaskManager replaces a placeholder only if it fits: every init container does
        for init in tm_spec["initContainers"]:
            resources = init["resources"]
            for name, raw in {**resources.get("limits", {}), **resources.get("requests", {})}.items():
                assert k8s_quantity(raw) <= tm.min_resource[name], (init["name"], name)


def test_the_operator_deployment_embeds_the_same_templates() -> None:
    files = files_for(EXAMPLE)
    templates = _templates(files, "video-embeddings")
    deployment = next(o for o in objects_for(EXAMPLE) if o["kind"] == "FlinkDeployment")
    validate_k8s_object(deployment)
    for key, role in (("jobManager", "jobmanager"), ("taskManager", "taskmanager")):
        embedded = deployment["spec"][key]["podTemplate"]
        assert embedded["metadata"] == templates[role]["metadata"]
        assert embedded["spec"] == templates[role]["spec"]


def _as_yunikorn(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(load_spec(path).data))
    doc["scheduler"] = "yunikorn"
    doc.pop("volcano", None)
    return doc


def _model(doc: dict[str, Any]) -> tuple[Spec, list[str]]:
    assert validate_document(doc) == []
    spec, problems = build_model(doc)
    assert spec is not None, problems
    errors = [f"{p.path}: {p.message}" for p in run_checks(spec) if not p.is_warning]
    return spec, errors


def _rendered_config(spec: Spec) -> str:
    bundle = build_all(spec)
    (cm,) = [o for o in bundle.objects if o.kind == "ConfigMap" and o.name == CONFIGMAP]
    text: str = cm.manifest["data"][QUEUES_KEY]
    return text


KUBERNETES_EXAMPLES = [
    p for p in EXAMPLE_SPECS if "kubernetes" in load_spec(p).data["cluster"]["platforms"] and p != EXAMPLE
]


@pytest.mark.parametrize("path", KUBERNETES_EXAMPLES, ids=lambda p: p.stem)
def test_every_kubernetes_example_on_yunikorn(path: Path) -> None:
    """Switched to YuniKorn (its volcano block removed), each example passes our checks, renders what
    YuniKorn accepts, and its Flink pod templates' task groups parse in YuniKorn's shim."""
    spec, errors = _model(_as_yunikorn(path))
    assert errors == []
    validate_config(_rendered_config(spec))
    bundle = build_all(spec)
    assert not [o for o in bundle.objects if o.kind in ("PodGroup", "Queue")]
    for f in bundle.files:
        if f.path.endswith("-pod-template.yaml"):
            template = yaml.safe_load(f.text)
            validate_core_object(template)
            assert parse_task_groups(template["metadata"]["annotations"][TASK_GROUPS_ANNOTATION])


@given(st.decimals(min_value=0, max_value=10**9, places=3, allow_nan=False, allow_infinity=False))
def test_cpu_values_round_trip_through_yunikorns_parser(value: Decimal) -> None:
    text = format_value("cpu", value)
    assert text is not None
    assert parse_quantity(text, milli=True) == value * 1000


@given(st.integers(min_value=0, max_value=2**62))
def test_integer_values_round_trip_through_yunikorns_parser(value: int) -> None:
    for name in ("memory", "nvidia.com/gpu", "pods"):
        text = format_value(name, Decimal(value))
        assert text is not None
        assert parse_quantity(text) == value


def test_values_yunikorn_cannot_hold_are_not_written() -> None:
    assert format_value("cpu", Decimal("0.0005")) is None
    assert format_value("memory", Decimal("1.5")) is None
    assert format_value("nvidia.com/gpu", Decimal("0.5")) is None
    assert format_value("memory", Decimal(-1)) is None
    assert format_value("cpu", Decimal(2**63 // 1000 + 1)) is None  # ParseVCore: overflow
    assert format_value("memory", Decimal(2**63)) is None
    assert format_value("memory", Decimal(2**63 - 1)) == str(2**63 - 1)


NAMES = ["a", "b", "c", "d", "e"]
RESOURCES = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.integers(min_value=0, max_value=8), max_size=3
)


@st.composite
def queue_trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Queue forests of up to five queues with random guaranteed/max values."""
    count = draw(st.integers(min_value=1, max_value=5))
    queues = []
    for i, name in enumerate(NAMES[:count]):
        q: dict[str, Any] = {"name": name}
        if i and draw(st.booleans()):
            q["parent"] = draw(st.sampled_from(NAMES[:i]))
        for field in ("capability", "deserved", "guarantee"):
            values = draw(RESOURCES)
            if values:
                q[field] = {k: (f"{v}Gi" if k == "memory" else v) for k, v in values.items()}
        queues.append(q)
    return queues


@settings(max_examples=300, deadline=None)
@given(queue_trees())
def test_checks_pass_exactly_the_queue_trees_yunikorn_accepts(queues: list[dict[str, Any]]) -> None:
    """No error from our checks ⇒ YuniKorn accepts the rendered configuration; and a configuration
    YuniKorn rejects is always one our checks reject (so users learn it at validate time)."""
    doc = {"cluster": {"name": "yk", "platforms": ["kubernetes"]}, "scheduler": "yunikorn", "queues": queues}
    spec, errors = _model(doc)
    text = _rendered_config(spec)
    try:
        validate_config(text)
        accepted = True
    except ValueError:
        accepted = False
    if not errors:
        assert accepted, text
    # the converse holds for the rules YuniKorn and our shared checks both apply (see checks/yunikorn)
    if accepted:
        # what our checks reject beyond YuniKorn's validator: Volcano-shared rules (deserved ≤
        # capability of the same queue is YuniKorn's guaranteed ≤ max only for the field it uses)
        assert all("guarantee" in e or "deserved" in e or "capability" in e for e in errors), errors
