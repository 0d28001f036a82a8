"""Volcano Queues, PriorityClasses and the scheduler ConfigMap, checked by their real validators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from accelplane.builders.volcano import SCHEDULER_CONF_KEY

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import objects_for
from tests.support.validators import reference, validate_crd_object, validate_k8s_object

FULL_QUEUE = """\
cluster: {name: demo, platforms: [kubernetes]}
nodePools:
  - {name: gpus, nodes: 2, gpu: {vendor: nvidia, perNode: 8}, labels: {pool: gpus}}
priorityClasses:
  - {name: crit, value: 1000000000, globalDefault: false, preemptionPolicy: PreemptLowerPriority, description: "urgent: yes"}
queues:
  - name: top
    priority: 7
    reclaimable: false
    capability: {cpu: 64, memory: 256Gi, pods: 100, nvidia.com/gpu: 8}
    deserved: {cpu: 32, memory: 128Gi, nvidia.com/gpu: 4}
    guarantee: {cpu: 8, nvidia.com/gpu: 2}
  - {name: child, parent: top, deserved: {nvidia.com/gpu: 2}}
"""


def _by_kind(objs: list[dict]) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    out: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for o in objs:
        out.setdefault(o["kind"], []).append(o)
    return out


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_every_example_object_passes_its_real_validator(spec: Path) -> None:
    for obj in objects_for(spec):
        validate_k8s_object(obj)


def test_queue_has_every_field_camel_case(write_spec: Callable[..., Path]) -> None:
    objs = _by_kind(objects_for(write_spec(FULL_QUEUE)))
    top = next(q for q in objs["Queue"] if q["metadata"]["name"] == "top")
    assert top["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert top["spec"] == {
        "weight": 1,
        "priority": 7,
        "reclaimable": False,
        "capability": {"cpu": "64", "memory": "256Gi", "pods": "100", "nvidia.com/gpu": "8"},
        "deserved": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"},
        "guarantee": {"resource": {"cpu": "8", "nvidia.com/gpu": "2"}},
    }
    child = next(q for q in objs["Queue"] if q["metadata"]["name"] == "child")
    assert child["spec"] == {"weight": 1, "parent": "top", "deserved": {"nvidia.com/gpu": "2"}}
    for q in objs["Queue"]:
        validate_crd_object(q)
        assert q["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "accelplane"


def test_crd_validator_rejects_wrong_queue() -> None:
    bad = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "x"},
        "spec": {"weight": 0, "capabilty": {}},
    }
    with pytest.raises(AssertionError) as exc:
        validate_crd_object(bad)
    assert "capabilty" in str(exc.value) and "weight" in str(exc.value)


def test_priority_class(write_spec: Callable[..., Path]) -> None:
    pc = _by_kind(objects_for(write_spec(FULL_QUEUE)))["PriorityClass"][0]
    assert pc == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "name": "crit",
            "labels": {"accelplane.io/cluster": "demo", "app.kubernetes.io/managed-by": "accelplane"},
        },
        "value": 1000000000,
        "globalDefault": False,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "urgent: yes",
    }
    validate_k8s_object(pc)


def _scheduler_conf(spec: Path) -> dict:  # type: ignore[type-arg]
    cm = _by_kind(objects_for(spec))["ConfigMap"]
    (conf,) = [c for c in cm if c["metadata"]["name"] == "volcano-scheduler-configmap"]
    assert conf["metadata"]["namespace"] == "volcano-system"
    return yaml.safe_load(conf["data"][SCHEDULER_CONF_KEY])  # type: ignore[no-any-return]


def _plugins(conf: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {p["name"]: p for tier in conf["tiers"] for p in tier["plugins"]}


def test_hierarchy_uses_capacity_with_enable_hierarchy_and_reclaim(write_spec: Callable[..., Path]) -> None:
    conf = _scheduler_conf(write_spec(FULL_QUEUE))
    plugins = _plugins(conf)
    assert plugins["capacity"] == {"name": "capacity", "enableHierarchy": True}
    assert "proportion" not in plugins
    actions = [a.strip() for a in conf["actions"].split(",")]
    assert actions == ["enqueue", "allocate", "backfill", "reclaim", "preempt"]


def test_flat_queues_use_proportion_without_reclaim(write_spec: Callable[..., Path]) -> None:
    conf = _scheduler_conf(
        write_spec("cluster: {name: d, platforms: [kubernetes]}\nqueues: [{name: a}, {name: b, weight: 2}]\n")
    )
    plugins = _plugins(conf)
    assert "proportion" in plugins and "capacity" not in plugins
    assert conf["actions"] == "enqueue, allocate, backfill"


def test_scheduler_conf_matches_upstream_shape() -> None:
    upstream = yaml.safe_load(reference("volcano/volcano-scheduler.conf").read_text())
    ours = _scheduler_conf(next(p for p in EXAMPLE_SPECS if p.stem == "prod-eu"))
    assert set(ours) == set(upstream) == {"actions", "tiers"}
    # every upstream tier-1 plugin is kept with the same options
    assert ours["tiers"][0] == upstream["tiers"][0]


def test_scheduler_config_can_be_left_to_volcano(write_spec: Callable[..., Path]) -> None:
    spec = write_spec(
        "cluster: {name: d, platforms: [kubernetes]}\nvolcano: {manageSchedulerConfig: false}\nqueues: [{name: a}]\n"
    )
    assert "ConfigMap" not in _by_kind(objects_for(spec))


def test_yarn_only_cluster_renders_no_kubernetes_scheduling(write_spec: Callable[..., Path]) -> None:
    spec = write_spec(FULL_QUEUE.replace("platforms: [kubernetes]", "platforms: [yarn]"))
    assert not [o for o in objects_for(spec) if o["kind"] in ("Queue", "PriorityClass")]
