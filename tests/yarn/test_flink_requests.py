"""Flink's own YARN code requests ``yarn.io/gpu`` and the GPU-model node label for every rendered config.

`FlinkYarnRequestProbe` (tests/yarn/java) runs the steps of Flink 1.20's ``YarnResourceManagerDriver``
with its own classes from flink-dist — TaskExecutorProcessSpec → container ``Resource``
(``TaskExecutorProcessSpecContainerResourcePriorityAdapter``, external resources through
``external-resource.<name>.yarn.config-key``) → ``AMRMClient.ContainerRequest`` with
``yarn.taskmanager.node-label`` (``ContainerRequestReflector``) — on Hadoop's classes from pyspark's
jars, with the rendered ``resource-types.xml`` first on the classpath. One command:
``pytest -m hadoop tests/yarn`` (needs the Flink distribution, ``pip install '.[hadoop]'`` and a JDK).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.derive.yarn_labels import taskmanager_label
from accelplane.derive.yarn_types import yarn_gpu_clusters
from accelplane.render import write_tree

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.yarn.hadoop import FlinkProbe
from tests.yarn.support import BASE

pytestmark = pytest.mark.hadoop

YARN_STACKS = [p for p in EXAMPLE_SPECS if "yarn" in model_of(p).platforms]
SPECS = {
    "base": BASE,
    "amd-model": BASE.replace("model: Tesla V100-SXM2-32GB}}", "model: AMD Instinct MI300X}}"),
    "no-labels": BASE.replace("  nodeLabels: true\n", "").replace(
        "gpu: {amount: 2, model: Tesla V100-SXM2-32GB}", "gpu: {amount: 3}"
    ),
}


def _requests(path: Path, out: Path, probe: FlinkProbe) -> dict[str, tuple[dict[str, str], int, str]]:
    """Cluster name → (what Flink requests, the spec's GPU amount, the expected label)."""
    spec = model_of(path)
    tree = write_tree(files_for(path), out)
    clusters = yarn_gpu_clusters(spec)
    dirs = [tree / "flink" / c.name for c in clusters]
    got = probe.requests(tree / "yarn", *dirs)
    return {
        c.name: (got[str(d)], c.task_manager.gpu.amount, taskmanager_label(spec, c) or "")  # type: ignore[union-attr]
        for c, d in zip(clusters, dirs, strict=True)
    }


@pytest.mark.parametrize("name", [*(p.stem for p in YARN_STACKS), *SPECS])
def test_flink_requests_yarn_io_gpu_and_the_model_label(
    name: str, flink_yarn_probe: FlinkProbe, write_spec: Callable[..., Path], tmp_path: Path
) -> None:
    path = next((p for p in YARN_STACKS if p.stem == name), None) or write_spec(SPECS[name], f"{name}.yaml")
    requests = _requests(path, tmp_path / "out", flink_yarn_probe)
    assert requests, "every YARN example must run a GPU Flink cluster on YARN"
    for cluster, (got, amount, label) in requests.items():
        assert "error" not in got, (cluster, got)
        gpu_types = {k for k in got if k.startswith("resource:") and k not in ("resource:memory-mb", "resource:vcores")}
        assert gpu_types == {"resource:yarn.io/gpu"}, (cluster, got)
        assert got["resource:yarn.io/gpu"] == str(amount), (cluster, got)
        assert got["label"] == label, (cluster, got)
    if name in ("yarn-analytics", "base", "amd-model"):
        assert all(label for _, _, label in requests.values()), requests


def test_example_stacks_place_by_model(flink_yarn_probe: FlinkProbe, tmp_path: Path) -> None:
    labels = set()
    for i, path in enumerate(YARN_STACKS):
        for got, _, _ in _requests(path, tmp_path / f"s{i}", flink_yarn_probe).values():
            labels.add(got["label"])
    assert labels - {""}, "some example stack must place TaskManagers by GPU-model node label"


def test_the_former_per_model_request_left_yarn_io_gpu_out(
    flink_yarn_probe: FlinkProbe, write_spec: Callable[..., Path], tmp_path: Path
) -> None:
    """Why per-model types were dropped: a config-key of yarn.io/gpu-<model> makes Flink request that
    type instead of yarn.io/gpu, the only type YARN's GPU plugin gives devices to."""
    tree = write_tree(files_for(write_spec(BASE)), tmp_path / "out")
    rt = tree / "yarn" / "resource-types.xml"
    rt.write_text(rt.read_text().replace(
        "<value>yarn.io/gpu</value>", "<value>yarn.io/gpu,yarn.io/gpu-teslav100sxm232gb</value>", 1
    ))
    conf = tree / "flink" / "scoring" / "config.yaml"
    text = conf.read_text()
    assert 'external-resource.gpu.yarn.config-key: "yarn.io/gpu"' in text
    conf.write_text(text.replace('yarn.config-key: "yarn.io/gpu"', 'yarn.config-key: "yarn.io/gpu-teslav100sxm232gb"'))
    got = flink_yarn_probe.requests(tree / "yarn", conf.parent)[str(conf.parent)]
    assert got["resource:yarn.io/gpu-teslav100sxm232gb"] == "2"
    assert got["resource:yarn.io/gpu"] == "0"
