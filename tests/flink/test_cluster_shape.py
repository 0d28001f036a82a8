"""The cluster the spec describes is the cluster that starts (issue 13 §4).

* ``job.parallelism`` vs ``replicas × slots``: Flink's active resource managers (native Kubernetes,
  YARN) start ``ceil(parallelism / slots)`` TaskManagers and the Flink Kubernetes Operator sets the
  parallelism from ``replicas × slots``, while the PodGroup, queue checks and report count
  ``replicas``: they must agree (standalone: enough slots).
* GPU TaskManagers on Kubernetes need an image with python3 for the discovery script, pinned.
* A shared (time-sliced/MPS) pool must say ``renameByDefault``; ``false`` is the explicit opt-in
  to slices under ``nvidia.com/gpu``, which ``report`` counts apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.derive.flink_pods import min_resources, taskmanagers_for_parallelism
from accelplane.pipeline import load_validated
from accelplane.report.data import build_report

from tests.support.findings_text import without_tags

IMAGE = "registry.example.internal/flink-gpu:1.20.5-py3"
K8S = """\
cluster: {{name: shape, platforms: [kubernetes]}}
nodePools:
  - {{name: a100, nodes: 4, cpu: 64, memory: 512Gi, gpu: {{vendor: nvidia, perNode: 8}}, labels: {{pool: a100}}}}
flink:
  clusters:
    - name: job
      target: {target}
      {image}
      taskManager: {{replicas: {replicas}, slots: 2, gpu: {{amount: 1, pool: a100}}}}
      job: {{jarURI: "local:///opt/flink/usrlib/job.jar", parallelism: {parallelism}}}
"""


def _k8s(target: str = "kubernetes", replicas: int = 2, parallelism: int = 4, image: str = IMAGE) -> str:
    return K8S.format(
        target=target, replicas=replicas, parallelism=parallelism, image=f"image: {image}" if image else ""
    )


def _errors(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code = main(["validate", str(path)])  # errors name the file as typed: the absolute path
    lines = [line.replace(str(path), path.name, 1) for line in without_tags(capsys.readouterr().err).splitlines()]
    assert (code == 0) == (lines == []), lines
    return lines[:-1]


@pytest.mark.parametrize("target", ["kubernetes", "kubernetes-operator"])
def test_parallelism_equal_to_slots_is_valid_and_counted_once(
    target: str, write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(_k8s(target))
    assert _errors(path, capsys) == []
    spec = load_validated(path).model
    (c,) = spec.flink_clusters
    assert taskmanagers_for_parallelism(c) == c.task_manager.replicas == 2
    assert min_resources(spec, c)["nvidia.com/gpu"] == 2
    assert build_report(spec).flink[0].total == 2


@pytest.mark.parametrize(
    ("target", "replicas", "parallelism", "how"),
    [
        ("kubernetes", 2, 9, "Flink's native Kubernetes resource manager starts ceil(9 / 2) = 5 TaskManagers"),
        ("kubernetes", 4, 4, "Flink's native Kubernetes resource manager starts ceil(4 / 2) = 2 TaskManagers"),
        ("kubernetes-operator", 2, 9, "the Flink Kubernetes Operator sets the parallelism to replicas × slots"),
    ],
    ids=["above", "below", "operator"],
)
def test_parallelism_that_changes_the_taskmanager_count_is_rejected(
    target: str,
    replicas: int,
    parallelism: int,
    how: str,
    write_spec: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_spec(_k8s(target, replicas, parallelism))
    needed = -(-parallelism // 2)
    assert _errors(path, capsys) == [
        f"{path.name}: flink.clusters[0].job.parallelism: parallelism {parallelism} with 2 slots per "
        f"TaskManager means {needed} TaskManagers but taskManager.replicas is {replicas} ({how}; the "
        f"PodGroup, queue checks and report count replicas) — set taskManager.replicas to {needed} or "
        f"parallelism to {replicas * 2}"
    ]


def test_yarn_parallelism_is_checked_too(write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(
        "cluster: {name: y, platforms: [yarn]}\n"
        "nodePools: [{name: g, platform: yarn, nodes: 2, gpu: {vendor: nvidia, perNode: 4}}]\n"
        "yarn: {cgroups: v1}\n"
        "flink:\n  clusters:\n"
        "    - {name: j, target: yarn, taskManager: {replicas: 1, slots: 1, gpu: {amount: 1}}, "
        "job: {parallelism: 3}}\n"
    )
    (line,) = _errors(path, capsys)
    assert "flink.clusters[0].job.parallelism: parallelism 3 with 1 slots per TaskManager means 3" in line
    assert "Flink's YARN resource manager starts ceil(3 / 1) = 3 TaskManagers" in line


def test_standalone_needs_enough_slots(write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    base = (
        "cluster: {name: s, platforms: [standalone]}\n"
        "nodePools: [{name: h, platform: standalone, nodes: 1, hosts: [h1.example.internal], "
        "gpu: {vendor: nvidia, perNode: 4}}]\n"
        "flink:\n  clusters:\n"
        "    - {name: j, target: standalone, taskManager: {replicas: 2, slots: 2, gpu: {amount: 1}}, "
        "job: {parallelism: PAR}}\n"
    )
    assert _errors(write_spec(base.replace("PAR", "3"), "ok.yaml"), capsys) == []
    (line,) = _errors(write_spec(base.replace("PAR", "5"), "bad.yaml"), capsys)
    assert "job.parallelism: parallelism 5 needs 5 slots but the 2 standalone TaskManagers × 2 slots offer 4" in line


def test_gpu_cluster_without_image_is_rejected(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(_k8s(image=""))
    assert _errors(path, capsys) == [
        f"{path.name}: flink.clusters[0].image: GPU TaskManagers would run the stock image flink:1.20-java17: a "
        "floating tag without python3, which the GPU discovery script needs — set image (a pinned tag or "
        "digest of an image with python3, such as the one nodeImage builds) or nodeImage.image"
    ]
    # the image nodeImage builds (nodeImage.image) is used when the cluster names none
    with_node_image = _k8s(image="") + f"nodeImage: {{image: {IMAGE}}}\n"
    assert _errors(write_spec(with_node_image, "node-image.yaml"), capsys) == []


SHARED = """\
cluster: {{name: shared, platforms: [kubernetes]}}
nodePools:
  - {{name: a100, nodes: 2, gpu: {{vendor: nvidia, perNode: 8}}, labels: {{pool: a100}}}}
  - name: t4
    nodes: 3
    gpu: {{vendor: nvidia, perNode: 1, sharing: {{strategy: timeSlicing, replicas: 4{rename}}}}}
    labels: {{pool: t4}}
"""


def test_shared_pool_must_choose_the_resource_name(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(SHARED.format(rename=""))
    assert main(["validate", "--strict", str(path)]) == 1  # a warning (AP3100): the upstream default applies
    line, summary = [ln.replace(str(path), path.name, 1) for ln in without_tags(capsys.readouterr().err).splitlines()]
    assert summary == "accelplane: 1 warning"
    assert line.startswith(
        f"{path.name}: nodePools[1].gpu.sharing: with time-slicing the device plugin advertises 4 slices "
        "per GPU; without renameByDefault they keep the dedicated name (nvidia.com/gpu)"
    )


def test_unrenamed_slices_are_counted_apart(write_spec: Callable[..., Path]) -> None:
    report = build_report(load_validated(write_spec(SHARED.format(rename=", renameByDefault: false"))).model)
    assert report.cluster_total("nvidia.com/gpu") == 2 * 8 + 3 * 4
    assert report.slice_total("nvidia.com/gpu") == 12
    renamed = build_report(load_validated(write_spec(SHARED.format(rename=", renameByDefault: true"), "r.yaml")).model)
    assert (renamed.cluster_total("nvidia.com/gpu"), renamed.slice_total("nvidia.com/gpu")) == (16, 0)
    assert renamed.cluster_total("nvidia.com/gpu.shared") == 12
