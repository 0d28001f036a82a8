"""A TaskManager or JobManager bigger than every node that may run it: one finding per process and
resource, on Kubernetes (the pod's effective request), YARN (the container) and standalone hosts
(the TaskManagers one host runs together)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from accelplane.derive.node_fit import init_container_requests, node_request
from accelplane.errors import SpecErrors
from accelplane.pipeline import ValidatedSpec, load_validated

from tests.conftest import STACKS_DIR
from tests.support.specs import node_pool, stack_document, write_spec


def _cluster(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["flink"]["clusters"] if c["name"] == name)


def _load(doc: dict[str, Any], tmp_path: Path) -> tuple[list[str], ValidatedSpec | None]:
    try:
        return [], load_validated(write_spec(tmp_path, doc))
    except SpecErrors as exc:
        return [str(e) for e in exc.errors], None


def _fit_errors(doc: dict[str, Any], tmp_path: Path) -> list[str]:
    errors, _ = _load(doc, tmp_path)
    return [e for e in errors if "a process runs on one node" in e or "workers file" in e]


def test_kubernetes_taskmanager_cpu_over_the_pool(tmp_path: Path) -> None:
    """A team sizes TaskManagers by the hardware sheet (160 threads) on 96-core A100 nodes."""
    doc = stack_document("prod-eu")
    _cluster(doc, "fraud-scoring")["taskManager"]["cpu"] = 160
    assert _fit_errors(doc, tmp_path) == [
        f"{tmp_path / 'spec.yaml'}: flink.clusters[0].taskManager.cpu: a TaskManager pod requests cpu 160 but the "
        "largest node of the pools that may run it has 96 (a100: 96); a process runs on one node, so the "
        "scheduler would leave it Pending forever: use at most 96 or add a pool with larger nodes"
    ]


def test_kubernetes_jobmanager_memory_over_every_pool(tmp_path: Path) -> None:
    doc = stack_document("prod-eu")
    _cluster(doc, "fraud-scoring")["jobManager"]["memory"] = "3Ti"
    (error,) = _fit_errors(doc, tmp_path)
    assert error.endswith(
        "flink.clusters[0].jobManager.memory: a JobManager pod requests memory 3Ti but the largest node of the "
        "pools that may run it has 2Ti (a100: 1Ti, mi300: 2Ti); a process runs on one node, so the scheduler "
        "would leave it Pending forever: use at most 2Ti or add a pool with larger nodes"
    )


def test_yarn_taskmanager_memory_over_its_partition(tmp_path: Path) -> None:
    """The V100 TaskManagers run in the V100 partition only: 600Gi fits no V100 NodeManager (512Gi)."""
    doc = stack_document("yarn-analytics")
    doc["yarn"]["maximumAllocation"] = {"memory": "1Ti", "vcores": 64}  # the nodes are the limit here
    _cluster(doc, "sessions-v100")["taskManager"]["memory"] = "600Gi"
    (error,) = _fit_errors(doc, tmp_path)
    assert error.endswith(
        "flink.clusters[0].taskManager.memory: a TaskManager container requests memory 600Gi but the largest "
        "node of the NodeManagers that may run it has 512Gi (v100: 512Gi); a process runs on one node, so YARN "
        "would never allocate it: use at most 512Gi or add a pool with larger nodes"
    )


def test_standalone_taskmanagers_add_up_on_a_host(tmp_path: Path) -> None:
    """96Gi TaskManagers on 64Gi hosts (the issue's case), and two per host on 128Gi hosts."""
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["memory"] = "64Gi"
    tm = _cluster(doc, "edge-inference")["taskManager"]
    tm["memory"] = "96Gi"
    tm["replicas"] = 2
    (error,) = _fit_errors(doc, tmp_path)
    assert error.endswith(
        "flink.clusters[0].taskManager.memory: the workers file puts one TaskManager on host "
        "edge-gpu-01.example.internal: 96Gi of process memory where it has 64Gi allocatable, so TaskManagers "
        "would be killed for lack of memory: lower taskManager.memory or replicas, or add hosts"
    )
    node_pool(doc, "edge-l4")["memory"] = "128Gi"
    tm["memory"] = "96Gi"
    tm["replicas"] = 4
    (error,) = _fit_errors(doc, tmp_path)
    assert "puts 2 TaskManagers × 96Gi on host edge-gpu-01.example.internal: 192Gi" in error


def test_standalone_cpu_beyond_the_host_is_a_warning(tmp_path: Path) -> None:
    doc = stack_document("edge-standalone")
    _cluster(doc, "edge-inference")["taskManager"]["cpu"] = 24  # 2 per host × 24 > 32 cores
    errors, spec = _load(doc, tmp_path)
    assert not errors and spec is not None
    (warning,) = [str(w) for w in spec.warnings if "workers file" in str(w)]
    assert "puts 2 TaskManagers × 24 on host edge-gpu-01.example.internal: 48 cores where it has 32" in warning


def test_the_pod_request_is_the_largest_init_container_not_the_sum(tmp_path: Path) -> None:
    """Kubernetes counts max(largest init container, sum of app containers): a GPU TaskManager of
    50m CPU asks 100m (the preflight init container), not 50m + 10m + 100m."""
    doc = stack_document("prod-eu")
    _cluster(doc, "ad-hoc")["taskManager"]["cpu"] = "50m"
    errors, spec = _load(doc, tmp_path)
    assert spec is not None, errors
    c = next(c for c in spec.model.flink_clusters if c.name == "ad-hoc")
    assert [r["cpu"] for r in init_container_requests(c, "taskManager")] == [Decimal("0.010"), Decimal("0.1")]
    assert node_request(c, "taskManager")["cpu"] == Decimal("0.1")
    assert node_request(c, "taskManager")["memory"] == 32 * 2**30


@pytest.mark.parametrize("stack", sorted(p.stem for p in STACKS_DIR.glob("*.yaml") if not p.name.startswith("Pulumi.")))
def test_every_example_fits_its_nodes(stack: str, tmp_path: Path) -> None:
    errors, spec = _load(stack_document(stack), tmp_path)
    assert not errors and spec is not None
    assert not [str(w) for w in spec.warnings if "workers file" in str(w)]


def test_yarn_jobmanager_fits_the_partition_its_application_label_names(tmp_path: Path) -> None:
    """The JobManager runs where Flink's yarn.application.node-label puts the ApplicationMaster: the
    T4 partition (256Gi NodeManagers), not the default partition's 192Gi edge nodes."""
    doc = stack_document("yarn-analytics")
    doc["yarn"]["maximumAllocation"] = {"memory": "1Ti", "vcores": 64}  # the nodes are the limit here
    c = _cluster(doc, "sessions-v100")
    c.setdefault("config", {})["yarn.application.node-label"] = "gpu-teslat4"
    c["jobManager"] = {"cpu": 2, "memory": "200Gi"}
    assert _fit_errors(doc, tmp_path) == []  # 200Gi fits a T4 node, though not an edge node
    c["jobManager"]["memory"] = "300Gi"
    (error,) = _fit_errors(doc, tmp_path)
    assert error.endswith(
        "flink.clusters[0].jobManager.memory: a JobManager container requests memory 300Gi but the largest node "
        "of the NodeManagers that may run it has 256Gi (t4: 256Gi); a process runs on one node, so YARN would "
        "never allocate it: use at most 256Gi or add a pool with larger nodes"
    )
