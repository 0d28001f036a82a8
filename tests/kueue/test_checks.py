"""The Kueue findings (AP26xx): each root cause reported once, at its path, with its severity, on
the example stack changed in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.errors import Problem
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import validate_document

from tests.support.specs import node_pool, stack_document


def _spec(doc: dict[str, Any]) -> Spec:
    assert validate_document(doc) == []
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return spec


def _findings(doc: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
    problems: list[Problem] = list(run_checks(_spec(doc)))
    return sorted(
        (p.finding.code, p.path, p.finding.severity.value)
        for p in problems
        if p.finding is not None and p.finding.code.startswith("AP26")
    )


def _example() -> dict[str, Any]:
    return stack_document("kueue-gpus")


def test_the_example_is_clean() -> None:
    problems = [p for p in run_checks(_spec(_example())) if p.finding is not None]
    assert problems == []


def _cluster(doc: dict[str, Any], i: int = 0) -> dict[str, Any]:
    cluster: dict[str, Any] = doc["flink"]["clusters"][i]
    return cluster


def _old_version(doc: dict[str, Any]) -> None:
    doc["kueue"]["version"] = "0.15"


def _kueue_on_volcano(doc: dict[str, Any]) -> None:
    doc["scheduler"] = "volcano"
    for q in doc["queues"]:
        q.pop("gpuModels", None)
    for q in doc["queues"]:
        if "capability" in q:
            q["capability"]["pods"] = 1000


def _volcano_block(doc: dict[str, Any]) -> None:
    doc["volcano"] = {"namespace": "volcano-system"}


def _no_queue(doc: dict[str, Any]) -> None:
    del _cluster(doc)["queue"]


def _default_queue(doc: dict[str, Any]) -> None:
    doc["queues"][2]["name"] = "default"
    _cluster(doc, 1)["queue"] = "default"


def _kube_system(doc: dict[str, Any]) -> None:
    _cluster(doc)["namespace"] = "kube-system"


def _managed_no(doc: dict[str, Any]) -> None:
    _cluster(doc)["config"]["kubernetes.taskmanager.labels"] = "kueue.x-k8s.io/managed:false"


def _unknown_queue_name(doc: dict[str, Any]) -> None:
    _cluster(doc)["config"]["kubernetes.jobmanager.labels"] = "kueue.x-k8s.io/queue-name:elsewhere"


def _suspended_jobmanager(doc: dict[str, Any]) -> None:
    _cluster(doc)["config"]["kubernetes.jobmanager.annotations"] = "kueue.x-k8s.io/pod-suspending-parent:x"


def _too_big(doc: dict[str, Any]) -> None:
    # 4 TaskManagers of 2 A100 each fit streaming's 24 + 8 borrowable A100s; 40 GPUs each do not
    tm = _cluster(doc)["taskManager"]
    tm["gpu"]["amount"] = 40
    node_pool(doc, "a100")["gpu"]["perNode"] = 40


def _duplicate_taint(doc: dict[str, Any]) -> None:
    node_pool(doc, "a100")["taints"].append({"key": "nvidia.com/gpu", "value": "other", "effect": "NoSchedule"})


def _nine_labels(doc: dict[str, Any]) -> None:
    node_pool(doc, "l4")["labels"].update({f"example.com/l{i}": "x" for i in range(8)})


def _parent_deserved(doc: dict[str, Any]) -> None:
    doc["queues"][0]["deserved"] = {"cpu": 512}


def _long_resource(doc: dict[str, Any]) -> None:
    doc["queues"][1]["capability"]["example.com/" + "r" * 64] = 1


def _pods_capability(doc: dict[str, Any]) -> None:
    doc["queues"][1]["capability"]["pods"] = 100


CASES: dict[str, tuple[Callable[[dict[str, Any]], None], list[tuple[str, tuple[str | int, ...], str]]]] = {
    "version": (_old_version, [("AP2601", ("kueue", "version"), "error")]),
    "kueue block on volcano": (_kueue_on_volcano, [("AP2602", ("kueue",), "warning")]),
    "volcano block": (_volcano_block, [("AP2603", ("volcano",), "warning")]),
    "no queue": (_no_queue, [("AP2604", ("flink", "clusters", 0, "queue"), "warning")]),
    "default LocalQueue": (_default_queue, [("AP2605", ("queues", 2, "name"), "warning")]),
    "kube-system": (_kube_system, [("AP2606", ("flink", "clusters", 0, "namespace"), "warning")]),
    "managed false": (_managed_no, [("AP2607", ("flink", "clusters", 0, "config", "kubernetes.taskmanager.labels"), "error")]),
    "unknown queue-name": (_unknown_queue_name, [("AP2608", ("flink", "clusters", 0, "config", "kubernetes.jobmanager.labels"), "error")]),
    "suspending JobManager": (_suspended_jobmanager, [("AP2609", ("flink", "clusters", 0, "config", "kubernetes.jobmanager.annotations"), "error")]),
    "fits no flavor": (_too_big, [("AP2610", ("flink", "clusters", 0, "queue"), "error")]),
    "duplicate taint": (_duplicate_taint, [("AP2611", ("nodePools", 0), "error")]),
    "nine labels": (_nine_labels, [("AP2611", ("nodePools", 1), "error")]),
    "parent deserved": (_parent_deserved, [("AP2613", ("queues", 0, "deserved"), "warning")]),
    "resource name too long": (
        _long_resource, [("AP2615", ("queues", 1, "capability", "example.com/" + "r" * 64), "error")]
    ),
    "pods capability": (_pods_capability, [("AP2616", ("queues", 1, "capability", "pods"), "warning")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_finding_once_at_its_path(case: str) -> None:
    change, expected = CASES[case]
    doc = _example()
    change(doc)
    assert _findings(doc) == expected


def test_a_pod_that_fits_by_borrowing_is_admitted() -> None:
    """streaming deserves 24 A100s with a borrowingLimit of 8. batch, the other queue of the cohort,
    has no A100 quota in the example, so nothing can be borrowed: 24 fits, 25 does not. Once batch
    deserves 8 A100s (gpuModels) streaming may borrow them: 32 fits, 33 does not."""
    doc = _example()
    node_pool(doc, "a100")["gpu"]["perNode"] = 40
    tm = _cluster(doc)["taskManager"]
    tm["gpu"]["amount"] = 24
    assert _findings(doc) == []
    tm["gpu"]["amount"] = 25
    assert [f[0] for f in _findings(doc)] == ["AP2610"]
    doc["queues"][2]["gpuModels"]["NVIDIA A100-SXM4-80GB"] = {"deserved": 8, "capability": 8}
    tm["gpu"]["amount"] = 32
    assert _findings(doc) == []
    tm["gpu"]["amount"] = 33
    assert [f[0] for f in _findings(doc)] == ["AP2610"]


def test_no_kueue_objects_on_other_schedulers() -> None:
    doc = _example()
    _kueue_on_volcano(doc)
    del doc["kueue"]
    kinds = {o.kind for o in build_all(_spec(doc)).objects}
    assert not kinds & {"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue"}
    assert "Queue" in kinds and "PodGroup" in kinds


def test_pods_of_two_clusters_that_fit_no_flavor_are_one_finding_at_their_queue() -> None:
    """One root cause, one finding (#39 item 4): streaming's quota is too small for the pods of two
    clusters (and both the JobManager and the TaskManager of one): one AP2610 naming each pod."""
    doc = _example()
    _too_big(doc)
    second = dict(_cluster(doc), name="fraud-replay", taskManager=dict(_cluster(doc)["taskManager"], replicas=1))
    second["jobManager"] = {"cpu": 300, "memory": "2Gi"}
    doc["flink"]["clusters"].append(second)
    problems = [p for p in run_checks(_spec(doc)) if p.finding is not None and p.finding.code == "AP2610"]
    assert [p.path for p in problems] == [("flink", "clusters", 2, "queue")]  # fraud-replay, first by name
    message = problems[0].message
    assert message.count("pod of") == 3, message
    assert "a jobmanager pod of 'fraud-replay' needs cpu 300" in message
    assert "no flavor of ClusterQueue 'streaming' they may use" in message


def test_raising_the_queue_admits_every_pod_it_named() -> None:
    """The fix of that one finding (raise the queue's deserved/capability) admits every pod it named."""
    doc = _example()
    _too_big(doc)
    second = dict(_cluster(doc), name="fraud-replay", taskManager=dict(_cluster(doc)["taskManager"], replicas=1))
    second["job"] = dict(second["job"], parallelism=2)
    doc["flink"]["clusters"].append(second)
    assert "AP2610" in [code for code, _, _ in _findings(doc)]
    doc["queues"][0]["capability"].update({"nvidia.com/gpu": 224})
    doc["queues"][1]["capability"].update({"nvidia.com/gpu": 200})
    doc["queues"][1]["deserved"].update({"nvidia.com/gpu": 200})
    assert [p for p in run_checks(_spec(doc)) if p.finding is not None] == []
