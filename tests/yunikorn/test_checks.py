"""The YuniKorn findings (AP25xx): each root cause reported once, at its path, with its severity; and
every error is one YuniKorn's validator (tests/support/yunikorn.py) really rejects."""

from __future__ import annotations

from typing import Any

import pytest
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.yunikorn import CONFIGMAP, QUEUES_KEY
from accelplane.errors import Problem
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import validate_document

from tests.support.yunikorn import YuniKornError, validate_config

K8S = {"name": "yk", "platforms": ["kubernetes"]}
GPU_POOL = {
    "name": "a100",
    "nodes": 2,
    "cpu": 64,
    "memory": "512Gi",
    "gpu": {"vendor": "nvidia", "perNode": 8},
    "labels": {"accelplane.io/pool": "a100"},
}


def _spec(doc: dict[str, Any]) -> Spec:
    assert validate_document(doc) == []
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return spec


def _codes(doc: dict[str, Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
    problems: list[Problem] = list(run_checks(_spec(doc)))
    return sorted(
        (p.finding.code, p.path, p.finding.severity.value)
        for p in problems
        if p.finding is not None and p.finding.code.startswith("AP25")
    )


def _yunikorn(**extra: Any) -> dict[str, Any]:
    return {"cluster": K8S, "scheduler": "yunikorn", **extra}


def _accepted_by_yunikorn(doc: dict[str, Any]) -> bool:
    bundle = build_all(_spec(doc))
    (cm,) = [o for o in bundle.objects if o.kind == "ConfigMap" and o.name == CONFIGMAP]
    try:
        validate_config(cm.manifest["data"][QUEUES_KEY])
    except YuniKornError:
        return False
    return True


def test_volcano_block_on_a_yunikorn_cluster_is_one_warning() -> None:
    assert _codes(_yunikorn(volcano={"namespace": "vc", "version": "1.15"})) == [
        ("AP2501", ("volcano",), "warning")
    ]


@pytest.mark.parametrize(
    "doc",
    [
        {"cluster": K8S, "yunikorn": {"namespace": "yk"}},
        {"cluster": {"name": "y", "platforms": ["yarn"]}, "scheduler": "yunikorn", "yunikorn": {"namespace": "yk"}},
    ],
    ids=["volcano-cluster", "no-kubernetes"],
)
def test_yunikorn_block_without_yunikorn_is_one_warning(doc: dict[str, Any]) -> None:
    where = "scheduler" if "scheduler" in doc else "yunikorn"
    assert _codes(doc) == [("AP2502", (where,), "warning")]


def test_fields_yunikorn_ignores_are_warnings() -> None:
    doc = _yunikorn(
        queues=[
            {
                "name": "a",
                "weight": 3,
                "capability": {"cpu": 8, "deviceclass/gpu.nvidia.com": 4},
                "deserved": {"cpu": 4},
                "guarantee": {"cpu": 2},
            }
        ]
    )
    assert _codes(doc) == [
        ("AP2503", ("queues", 0, "weight"), "warning"),
        ("AP2504", ("queues", 0, "guarantee"), "warning"),
        ("AP2505", ("queues", 0, "capability", "deviceclass/gpu.nvidia.com"), "warning"),
    ]
    assert _accepted_by_yunikorn(doc)


def test_the_same_fields_on_volcano_raise_no_yunikorn_finding() -> None:
    doc = {"cluster": K8S, "queues": [{"name": "a", "deserved": {"cpu": 4}, "guarantee": {"cpu": 2}}]}
    assert _codes(doc) == []


def test_fractions_yunikorn_cannot_parse_are_errors() -> None:
    doc = _yunikorn(queues=[{"name": "a", "capability": {"cpu": "0.0005", "memory": "1.5"}}])
    assert _codes(doc) == [
        ("AP2506", ("queues", 0, "capability", "cpu"), "error"),
        ("AP2506", ("queues", 0, "capability", "memory"), "error"),
    ]


def test_a_max_above_a_grandparents_max_is_an_error_yunikorn_shares() -> None:
    doc = _yunikorn(
        queues=[
            {"name": "top", "capability": {"cpu": 10}},
            {"name": "mid", "parent": "top"},
            {"name": "leaf", "parent": "mid", "capability": {"cpu": 20}},
        ]
    )
    assert _codes(doc) == [("AP2507", ("queues", 2, "capability", "cpu"), "error")]
    assert not _accepted_by_yunikorn(doc)
    doc["queues"][2]["capability"]["cpu"] = 10
    assert _codes(doc) == []
    assert _accepted_by_yunikorn(doc)


@pytest.mark.parametrize(
    ("parent", "bound"),
    [({"deserved": {"cpu": 5}}, "guaranteed"), ({"capability": {"cpu": 5}}, "max")],
)
def test_childrens_guaranteed_above_the_parents_is_an_error_yunikorn_shares(
    parent: dict[str, Any], bound: str
) -> None:
    doc = _yunikorn(
        queues=[
            {"name": "p", **parent},
            {"name": "x", "parent": "p", "deserved": {"cpu": 3}},
            {"name": "y", "parent": "p", "guarantee": {"cpu": 3}},
        ]
    )
    problems = [p for p in run_checks(_spec(doc)) if p.finding is not None and p.finding.code == "AP2508"]
    assert len(problems) == 1 and f"more than its {bound}" in problems[0].message
    assert not _accepted_by_yunikorn(doc)


def test_a_parent_named_default_breaks_the_fallback_rule() -> None:
    doc = _yunikorn(queues=[{"name": "default"}, {"name": "child", "parent": "default"}])
    assert ("AP2510", ("queues", 0, "name"), "error") in _codes(doc)
    assert not _accepted_by_yunikorn(doc)


def test_a_queue_path_longer_than_a_label_value_is_an_error() -> None:
    long = "q" * 40
    doc = _yunikorn(
        queues=[{"name": long}, {"name": long + "x", "parent": long}],
        flink={"clusters": [{"name": "f", "target": "kubernetes", "queue": long + "x"}]},
    )
    assert _codes(doc) == [("AP2509", ("flink", "clusters", 0, "queue"), "error")]


def test_two_clusters_on_a_queue_whose_path_is_too_long_are_one_finding() -> None:
    """One root cause, one finding (#39 item 4): the queue's names are the one fix for both clusters."""
    long = "q" * 40
    doc = _yunikorn(
        queues=[{"name": long}, {"name": long + "x", "parent": long}],
        flink={"clusters": [{"name": n, "target": "kubernetes", "queue": long + "x"} for n in ("f", "g")]},
    )
    assert _codes(doc) == [("AP2509", ("flink", "clusters", 0, "queue"), "error")]
    [message] = [p.message for p in run_checks(_spec(doc)) if p.finding is not None and p.finding.code == "AP2509"]
    assert "queue label of Flink clusters f, g would be" in message
    doc["queues"] = [{"name": "q"}, {"name": "qx", "parent": "q"}]  # the fix: shorter queue names
    for c in doc["flink"]["clusters"]:
        c["queue"] = "qx"
    assert _codes(doc) == []


def test_dra_taskmanagers_on_yunikorn_are_one_warning() -> None:
    pool = {**GPU_POOL, "gpu": {**GPU_POOL["gpu"], "allocation": "dra", "model": "NVIDIA A100-SXM4-80GB"}}
    doc = _yunikorn(
        nodePools=[pool],
        flink={
            "clusters": [
                {"name": "f", "target": "kubernetes", "taskManager": {"gpu": {"amount": 1, "pool": "a100"}}}
            ]
        },
    )
    assert _codes(doc) == [("AP2511", ("flink", "clusters", 0, "taskManager", "gpu"), "warning")]


def test_a_partial_gpu_capability_is_fine_on_yunikorn() -> None:
    """Volcano needs cpu, memory and pods next to a GPU capability (volcano#3426); YuniKorn leaves
    unset resources unlimited, so the same queue is no error there."""
    queues = [{"name": "a", "capability": {"nvidia.com/gpu": 8}}]
    old = {"cluster": K8S, "nodePools": [GPU_POOL], "queues": queues, "volcano": {"version": "1.8"}}
    volcano = [p for p in run_checks(_spec(old))]  # Volcano before 1.9 (docs/volcano.md)
    assert [p.message for p in volcano if not p.is_warning and "volcano#3426" in p.message]
    doc = _yunikorn(nodePools=[GPU_POOL], queues=queues)
    assert [p for p in run_checks(_spec(doc)) if not p.is_warning] == []
    assert _accepted_by_yunikorn(doc)


def test_flink_labels_or_annotations_that_override_yunikorns_are_errors() -> None:
    config = {
        "kubernetes.taskmanager.labels": "queue:root.other,team:x",
        "kubernetes.jobmanager.annotations": "yunikorn.apache.org/task-groups:[],scheduling.k8s.io/group-name:pg",
    }
    doc = _yunikorn(flink={"clusters": [{"name": "f", "target": "kubernetes", "config": config}]})
    assert _codes(doc) == [
        ("AP2512", ("flink", "clusters", 0, "config", "kubernetes.jobmanager.annotations"), "error"),
        ("AP2512", ("flink", "clusters", 0, "config", "kubernetes.taskmanager.labels"), "error"),
    ]
    # the Volcano PodGroup annotation means nothing on YuniKorn: no Volcano finding either
    assert not [p for p in run_checks(_spec(doc)) if "PodGroup" in p.message]


def test_equal_caps_on_parent_and_grandparent_are_one_finding() -> None:
    """Issue #43 item 6: a capability above the parent's and the grandparent's equal ones is one root
    cause (AP2014, the parent's), not AP2014 and AP2507 too."""
    doc = _yunikorn(
        queues=[
            {"name": "top", "capability": {"nvidia.com/gpu": 6}},
            {"name": "mid", "parent": "top", "capability": {"nvidia.com/gpu": 6}},
            {"name": "leaf", "parent": "mid", "capability": {"nvidia.com/gpu": 8}},
        ]
    )
    errors = [(p.finding.code, p.path) for p in run_checks(_spec(doc)) if p.finding is not None and not p.is_warning]
    assert errors == [("AP2014", ("queues", 2, "capability", "nvidia.com/gpu"))]
    assert not _accepted_by_yunikorn(doc)


def _deep_tree(levels: int) -> list[dict[str, Any]]:
    return [{"name": f"l{i}", **({"parent": f"l{i - 1}"} if i else {})} for i in range(levels)]


@pytest.mark.parametrize("scheduler", ["yunikorn", "kueue"])
def test_a_queue_tree_deeper_than_volcanos_limit_is_fine_elsewhere(scheduler: str) -> None:
    """AP2004 is Volcano's limit (5 levels). YuniKorn's validator takes any depth (our port of it
    accepts the rendered 7-level tree) and Kueue's cohort trees have none: no finding there."""
    queues = _deep_tree(7)
    doc = {"cluster": K8S, "scheduler": scheduler, "queues": queues,
           "flink": {"clusters": [{"name": "f", "target": "kubernetes", "queue": "l6"}]}}
    codes = [p.finding.code for p in run_checks(_spec(doc)) if p.finding is not None]
    assert "AP2004" not in codes
    if scheduler == "yunikorn":
        assert _accepted_by_yunikorn(doc)
    doc["scheduler"] = "volcano"
    codes = [p.finding.code for p in run_checks(_spec(doc)) if p.finding is not None]
    assert codes.count("AP2004") == 2  # levels 6 and 7 (queues l5, l6), each at its parent field
