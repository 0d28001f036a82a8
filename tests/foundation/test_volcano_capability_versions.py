"""A Volcano queue capability that leaves dimensions out (volcano#3426; #39 item 9).

Before Volcano 1.9 the ``proportion`` plugin took a queue's real capability as
``helpers.Min(total, capability)``, so every dimension the capability leaves out became 0 and a
GPU-only capability blocked every job. From 1.9.0 (volcano-sh/volcano commit a6421813b; the same
change is PR #3448, merge bb611bf75, first in v1.10.0 on the main line) it is
``MinDimensionResource(capability, Infinity)``: an unset scalar dimension stays the cluster's total,
unset cpu and memory are ``MaxFloat64``; the ``capacity`` plugin at v1.12.0 does the same
(``capacity.go``, flat and hierarchical). So AP2013 and AP2041 hold only before 1.9; from 1.9 a
capability that leaves out the GPU resource a cluster requests does not limit it (warning AP2070).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.specs import WriteSpec, findings_of

GPU_ONLY = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}
volcano: {version: "VERSION"}
queues:
  - {name: a, capability: {nvidia.com/gpu: 4}}
"""

NO_GPU = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}
volcano: {version: "VERSION"}
queues:
  - {name: a, capability: {cpu: 16, memory: 64Gi, pods: 10}}
flink:
  clusters:
    - {name: f, queue: a, image: "registry.example.com/flink-gpu:1.20", taskManager: {replicas: 1, memory: 4Gi, cpu: 2, gpu: {amount: 1}}}
"""


def _codes(path: Path) -> list[tuple[str, str]]:
    return [
        (f.finding.code, f.path)
        for f in findings_of(path)
        if f.finding and f.finding.code in {"AP2013", "AP2041", "AP2070"}
    ]


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.8", [("AP2013", "queues[0].capability")]), ("1.9", []), ("1.12", []), ("1.15", [])],
)
def test_a_gpu_only_capability_is_an_error_only_before_volcano_1_9(
    version: str, expected: list[tuple[str, str]], write_spec: WriteSpec
) -> None:
    assert _codes(write_spec(GPU_ONLY.replace("VERSION", version))) == expected


@pytest.mark.parametrize(("version", "code"), [("1.8", "AP2041"), ("1.9", "AP2070"), ("1.12", "AP2070")])
def test_a_capability_without_the_requested_gpu_resource_is_an_error_only_before_1_9(
    version: str, code: str, write_spec: WriteSpec
) -> None:
    found = [
        f
        for f in findings_of(write_spec(NO_GPU.replace("VERSION", version)))
        if f.finding and f.finding.code == code
    ]
    assert [f.path for f in found] == ["flink.clusters[0].queue"]
    assert found[0].is_warning == (code == "AP2070")


def test_two_clusters_in_a_queue_without_the_gpu_resource_are_one_finding(write_spec: WriteSpec) -> None:
    """One root cause (the queue's capability), one finding naming both clusters (#39 item 4)."""
    text = NO_GPU.replace("VERSION", "1.8") + (
        '    - {name: g, queue: a, image: "registry.example.com/flink-gpu:1.20", '
        "taskManager: {replicas: 1, memory: 4Gi, cpu: 2, gpu: {amount: 1}}}\n"
    )
    found = [f for f in findings_of(write_spec(text)) if f.finding and f.finding.code == "AP2041"]
    assert [f.path for f in found] == ["flink.clusters[0].queue"]
    assert "cluster(s) 'f', 'g' request" in found[0].message
