"""A Flink cluster's gang on YuniKorn (issue #43 items 2-5): admitted against the smallest max on
its queue path, resources absent from max unlimited, the Hard style refused, and the placeholders
placed where Flink puts the pods."""

from __future__ import annotations

import json
from typing import Any

import yaml
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.yunikorn import TASK_GROUPS_ANNOTATION

from tests.support.yunikorn import parse_task_groups, scheduling_policy
from tests.yunikorn.test_checks import GPU_POOL, K8S, _spec

GPU = "nvidia.com/gpu"


def _cluster(**extra: Any) -> dict[str, Any]:
    return {
        "name": "f",
        "target": "kubernetes",
        "queue": "leaf",
        "taskManager": {"replicas": 4, "gpu": {"amount": 2, "pool": "a100"}},
        **extra,
    }


def _doc(queues: list[dict[str, Any]], scheduler: str = "yunikorn", **cluster: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "cluster": K8S,
        "nodePools": [GPU_POOL],
        "queues": queues,
        "flink": {"clusters": [_cluster(**cluster)]},
    }
    if scheduler == "yunikorn":
        doc["scheduler"] = "yunikorn"
    return doc


def _errors(doc: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
    """Queue and gang errors (AP2xxx; the GPU image's AP8010 is not this file's subject)."""
    return sorted(
        (p.finding.code, p.path, p.message)
        for p in run_checks(_spec(doc))
        if p.finding is not None and not p.is_warning and p.finding.code.startswith("AP2")
    )


def test_a_gang_above_an_ancestors_max_is_one_yunikorn_error() -> None:
    """Item 3: 8 GPUs under a parent capped at 6 (the leaf sets no max): partition.go rejects the
    application; the finding speaks of YuniKorn's placeholders, not of a Volcano PodGroup."""
    queues = [{"name": "top", "capability": {GPU: 6}}, {"name": "leaf", "parent": "top"}]
    ((code, path, message),) = _errors(_doc(queues))
    assert (code, path) == ("AP2590", ("flink", "clusters", 0, "queue"))
    assert "PodGroup" not in message and "Volcano" not in message
    assert "queue 'top' allows 6" in message and "root.top.leaf" in message
    queues[0]["capability"][GPU] = 8
    assert _errors(_doc(queues)) == []


def test_the_gang_counts_one_pod_per_member() -> None:
    """k8shim GetTGResource adds ``pods`` = members: 1 JobManager + 4 TaskManagers under pods 4."""
    queues = [{"name": "top", "capability": {"pods": 4}}, {"name": "leaf", "parent": "top"}]
    assert [e[0] for e in _errors(_doc(queues))] == ["AP2590"]
    queues[0]["capability"]["pods"] = 5
    assert _errors(_doc(queues)) == []


def test_volcano_keeps_its_leaf_rules() -> None:
    queues = [{"name": "leaf", "capability": {GPU: 6, "cpu": 512, "memory": "4Ti", "pods": 100}}]
    assert [e[0] for e in _errors(_doc(queues, scheduler="volcano"))] == ["AP2040"]


def test_a_capability_without_the_gpu_resource_is_fine_on_yunikorn() -> None:
    """Item 2: AP2041 (volcano#3426) is Volcano's; YuniKorn leaves a resource absent from max
    unlimited (resources.go fitIn, skipUndef)."""
    queues = [{"name": "leaf", "capability": {"cpu": 512, "memory": "4Ti", "pods": 100}}]
    assert _errors(_doc(queues)) == []
    on_volcano = _doc(queues, scheduler="volcano")
    on_volcano["volcano"] = {"version": "1.8"}  # before 1.9 Volcano blocks on the unset dimension
    assert "AP2041" in [e[0] for e in _errors(on_volcano)]


def _policy(doc: dict[str, Any]) -> tuple[int, str]:
    bundle = build_all(_spec(doc))
    template = next(f for f in bundle.files if f.path.endswith("jobmanager-pod-template.yaml"))
    annotations = yaml.safe_load(template.text)["metadata"]["annotations"]
    return scheduling_policy(annotations["yunikorn.apache.org/schedulingPolicyParameters"])


def test_soft_is_the_default_and_hard_is_refused() -> None:
    """Item 4: a Hard gang that times out fails the application for good; the JobManager Deployment's
    new pod joins the failed application (same applicationId) and is never scheduled."""
    queues = [{"name": "leaf"}]
    doc = _doc(queues)
    assert _errors(doc) == []
    assert _policy(doc) == (900, "Soft")
    doc["yunikorn"] = {"gangSchedulingStyle": "Hard"}
    ((code, path, message),) = _errors(doc)
    assert (code, path) == ("AP2591", ("yunikorn", "gangSchedulingStyle"))
    assert "never scheduled" in message
    # without a Flink cluster on Kubernetes no application can fail: nothing to refuse
    doc["flink"] = {"clusters": []}
    assert _errors(doc) == []


def test_config_placement_goes_into_the_task_groups() -> None:
    """Item 5 (Flink's own pod factories show the same in test_placement_flink.py): the JobManager
    group gets ``kubernetes.jobmanager.*``, the TaskManager group the pool's and the config's."""
    config = {
        "kubernetes.jobmanager.node-selector": "zone:a",
        "kubernetes.taskmanager.node-selector": "zone:b",
        "kubernetes.taskmanager.tolerations": "key:spot,operator:Exists,effect:NoSchedule,tolerationSeconds:30",
    }
    doc = _doc([{"name": "leaf"}], config=config)
    assert _errors(doc) == []
    bundle = build_all(_spec(doc))
    template = next(f for f in bundle.files if f.path.endswith("taskmanager-pod-template.yaml"))
    raw = json.loads(yaml.safe_load(template.text)["metadata"]["annotations"][TASK_GROUPS_ANNOTATION])
    groups = {g.name: g for g in parse_task_groups(json.dumps(raw)) or []}
    assert groups["jobmanager"].node_selector == {"zone": "a"}
    assert groups["taskmanager"].node_selector == {"accelplane.io/pool": "a100", "zone": "b"}
    assert groups["taskmanager"].tolerations[-1] == {
        "key": "spot", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30,
    }


def test_a_toleration_seconds_flink_cannot_read_is_an_error() -> None:
    config = {"kubernetes.taskmanager.tolerations": "key:spot,operator:Exists,tolerationSeconds:1.5"}
    doc = _doc([{"name": "leaf"}], config=config)
    codes = [(p.finding.code, p.path) for p in run_checks(_spec(doc)) if p.finding is not None and not p.is_warning]
    assert ("AP4090", ("flink", "clusters", 0, "config", "kubernetes.taskmanager.tolerations")) in codes
