"""The rules against series shaped as each exporter emits them in each GPU setup (issue 44):
time-sliced GPUs renamed (``nvidia.com/gpu.shared``) and not, MPS, MIG, DRA (whole GPUs and MIG
devices), AMD, and a default kube-prometheus-stack whose kube-state-metrics exports no pod labels.

The series come from `tests.support.exporter_series` (our restatement of dcgm-exporter 4.3.1-4.4.0
and AMD device-metrics-exporter v1.4.0, citing their lines), fed the environment of the exporter
DaemonSet the stack renders for the pool: a setting the stack forgets changes the series as it
would on a node, and ``promtool test rules`` sees the TaskManager without metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders.monitoring import rules_document
from accelplane.derive.monitoring import queue_capabilities
from accelplane.model import Spec

from tests.monitoring.promtool import check_rules, run_rule_tests
from tests.support.exporter_series import (
    MIB,
    AmdGpu,
    Claim,
    Holder,
    NvidiaDevice,
    amd_series,
    dcgm_series,
    kube_state_metrics,
)
from tests.support.paths import REPO_ROOT
from tests.support.render import objects_for
from tests.support.specs import model_of, node_pool, stack_document, write_spec

SAMPLES = 30  # one a minute; the alerts wait monitoring.missingMetricsFor = 10m
MAIN_ENV = {"DCGM_EXPORTER_KUBERNETES": "true"}
"""The environment of the one dcgm-exporter DaemonSet before issue 44 (pod mapping, nothing else)."""


def _exporter_env(spec_path: Path, name: str) -> dict[str, str]:
    """The environment of the rendered exporter DaemonSet ``name`` (fails when it is not rendered)."""
    (ds,) = [o for o in objects_for(spec_path) if o["kind"] == "DaemonSet" and o["metadata"]["name"] == name]
    (container,) = ds["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def _namespaces(spec: Spec) -> dict[str, str]:
    return {c.name: c.namespace for c in spec.flink_clusters}


def _taskmanagers(spec: Spec, pods: dict[str, str], labels: bool = True) -> list[dict[str, str]]:
    """kube-state-metrics series of running TaskManager pods (pod → Flink cluster)."""
    ns = _namespaces(spec)
    out: list[dict[str, str]] = []
    for pod, cluster in pods.items():
        out += kube_state_metrics(spec.name, cluster, ns[cluster], pod, SAMPLES, labels=labels)
    return out


def _sample(record: str, value: float, **labels: str) -> dict[str, Any]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"labels": f"{record}{{{inner}}}", "value": value}


def _no_alert(name: str, at: str = "20m") -> dict[str, Any]:
    return {"eval_time": at, "alertname": name, "exp_alerts": []}


def _without_metrics(spec: Spec, pod: str, cluster: str) -> dict[str, Any]:
    ns = _namespaces(spec)[cluster]
    return {
        "exp_labels": {"severity": "warning", "namespace": ns, "pod": pod, "flink_cluster": cluster, "taskmanager": pod},
        "exp_annotations": {
            "summary": f"GPU TaskManager {pod} has no GPU metrics",
            "description": (
                f"Running TaskManager {ns}/{pod} of Flink cluster {cluster} asks for GPUs, but no GPU exporter "
                "reports a device for it: the exporter is not running on its node, lacks the kubelet pod-resources "
                "mapping, or the pod got no GPU."
            ),
        },
    }


def _run(tmp_path: Path, spec: Spec, series: list[dict[str, str]], exprs: list[dict[str, Any]], alerts: list[dict[str, Any]]) -> None:
    rules = rules_document(spec)
    (tmp_path / "check.yaml").write_text(yaml.safe_dump(rules))
    check_rules(tmp_path / "check.yaml")
    run_rule_tests(
        tmp_path,
        rules,
        [{"interval": "1m", "input_series": series, "promql_expr_test": exprs, "alert_rule_test": alerts}],
    )


# --- time-slicing and MPS (stacks/shared-gpus.yaml: t4-shared, 4 replicas per T4) -------------------

T4 = [NvidiaDevice(i, f"GPU-t4-{i}", "t4-0", util=u, fb_used_mib=m, fb_free_mib=16000 - m, model="Tesla T4")
      for i, u, m in ((0, 0.6, 3000), (1, 0.2, 1000), (2, 0.0, 0))]  # fmt: skip
MIG_A100 = [
    NvidiaDevice(0, "GPU-a100-0", "a100-0", util=0.3, fb_used_mib=2000, fb_free_mib=7000,
                 mig=("1g.10gb", 7), mig_uuid="MIG-a100-0-7"),
]  # fmt: skip
RANKING = {f"ranking-inference-taskmanager-1-{i}": "ranking-inference" for i in (1, 2, 3)}
EMBEDDINGS_MIG = {"embeddings-mig-taskmanager-1-1": "embeddings-mig"}


def _shared_holders(resource: str) -> list[Holder]:
    """Three TaskManagers: two on replicas 0 and 1 of T4 0, one on replica 2 of T4 1; T4 2 is free."""
    ids = ("GPU-t4-0::0", "GPU-t4-0::1", "GPU-t4-1::2")
    return [Holder("inference", pod, resource, (i,)) for pod, i in zip(RANKING, ids, strict=True)]


def _shared_spec(tmp_path: Path, sharing: dict[str, Any] | None) -> tuple[Path, Spec]:
    doc = stack_document("shared-gpus")
    if sharing is not None:
        node_pool(doc, "t4-shared")["gpu"]["sharing"] = sharing
        if sharing.get("renameByDefault") is False:  # the slices keep the dedicated name
            for queue in doc["queues"]:
                for key in ("capability", "deserved"):
                    if "nvidia.com/gpu.shared" in queue.get(key, {}):
                        queue[key]["nvidia.com/gpu"] = queue[key].pop("nvidia.com/gpu.shared")
    path = write_spec(tmp_path / "spec", doc)
    return path, model_of(path)


SHARING_CASES = {
    "time-sliced-renamed": (None, "nvidia.com/gpu.shared"),
    "time-sliced-not-renamed": ({"strategy": "timeSlicing", "replicas": 4, "renameByDefault": False}, "nvidia.com/gpu"),
    "mps-renamed": ({"strategy": "mps", "replicas": 4, "renameByDefault": True}, "nvidia.com/gpu.shared"),
    "mps-not-renamed": ({"strategy": "mps", "replicas": 4, "renameByDefault": False}, "nvidia.com/gpu"),
}


@pytest.mark.parametrize("case", SHARING_CASES, ids=str)
def test_shared_gpus_are_attributed_and_counted_once(tmp_path: Path, case: str) -> None:
    """Each replica's holder gets the GPU's series (``vgpu``), a GPU two TaskManagers share counts
    once for their cluster and its memory once, the queue capability is in GPUs (96 slices / 4 + 16
    MIG devices = 40), and no TaskManager alerts; the MIG pool next to it keeps its own exporter."""
    sharing, resource = SHARING_CASES[case]
    path, spec = _shared_spec(tmp_path, sharing)
    shared_env = _exporter_env(path, "dcgm-exporter-shared")
    assert shared_env.get("KUBERNETES_VIRTUAL_GPUS") == "true"
    assert ("NVIDIA_RESOURCE_NAMES" in shared_env) is (resource == "nvidia.com/gpu.shared")
    mig_env = _exporter_env(path, "dcgm-exporter")
    assert mig_env == {**MAIN_ENV, "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "utility"}
    series = [
        *_taskmanagers(spec, RANKING | EMBEDDINGS_MIG),
        *dcgm_series(shared_env, T4, _shared_holders(resource), SAMPLES),
        *dcgm_series(mig_env, MIG_A100, [Holder("flink-jobs", "embeddings-mig-taskmanager-1-1", "nvidia.com/mig-1g.10gb", ("MIG-a100-0-7",))], SAMPLES),
    ]
    pods = list(RANKING)
    exprs = [
        {
            "expr": "accelplane:flink_cluster_gpus:count",
            "eval_time": "15m",
            "exp_samples": [
                _sample("accelplane:flink_cluster_gpus:count", 2, flink_cluster="ranking-inference"),
                _sample("accelplane:flink_cluster_gpus:count", 1, flink_cluster="embeddings-mig"),
            ],
        },
        {
            "expr": 'accelplane:flink_cluster_gpu_memory_used:bytes{flink_cluster="ranking-inference"}',
            "eval_time": "15m",
            "exp_samples": [_sample("accelplane:flink_cluster_gpu_memory_used:bytes", (3000 + 1000) * MIB, flink_cluster="ranking-inference")],
        },
        {
            "expr": "accelplane:taskmanager_gpu_utilization:avg",
            "eval_time": "15m",
            "exp_samples": [
                _sample("accelplane:taskmanager_gpu_utilization:avg", 0.6, flink_cluster="ranking-inference", taskmanager=pods[0]),
                _sample("accelplane:taskmanager_gpu_utilization:avg", 0.6, flink_cluster="ranking-inference", taskmanager=pods[1]),
                _sample("accelplane:taskmanager_gpu_utilization:avg", 0.2, flink_cluster="ranking-inference", taskmanager=pods[2]),
                _sample("accelplane:taskmanager_gpu_utilization:avg", 0.3, flink_cluster="embeddings-mig", taskmanager="embeddings-mig-taskmanager-1-1"),
            ],
        },
        {
            "expr": "accelplane:queue_gpus:count",
            "eval_time": "15m",
            "exp_samples": [_sample("accelplane:queue_gpus:count", 3, queue="inference")],
        },
        {
            "expr": "accelplane:queue_gpu_capability:count",
            "eval_time": "1m",
            "exp_samples": [
                _sample("accelplane:queue_gpu_capability:count", 40, queue="inference"),
                _sample("accelplane:queue_gpu_capability:count", 32, queue="features"),
            ],
        },
    ]
    alerts = [_no_alert("AccelplaneGpuTaskManagerWithoutMetrics"), _no_alert("AccelplaneTaskManagerPodLabelsMissing")]
    _run(tmp_path, spec, series, exprs, alerts)


@pytest.mark.parametrize("case", ["time-sliced-renamed", "time-sliced-not-renamed"], ids=str)
def test_shared_gpus_without_the_settings_alert(tmp_path: Path, case: str) -> None:
    """The exporter as the stack rendered it before issue 44 (pod mapping only): renamed replicas are
    skipped as non-NVIDIA resources, unrenamed ones collapse onto one UUID where the last container
    wins; those TaskManagers fire AccelplaneGpuTaskManagerWithoutMetrics."""
    sharing, resource = SHARING_CASES[case]
    _, spec = _shared_spec(tmp_path, sharing)
    series = [*_taskmanagers(spec, RANKING), *dcgm_series(MAIN_ENV, T4, _shared_holders(resource), SAMPLES)]
    pods = list(RANKING)
    silent = pods if resource == "nvidia.com/gpu.shared" else [pods[0]]  # pods[1] is listed after pods[0]
    alert = {
        "eval_time": "20m",
        "alertname": "AccelplaneGpuTaskManagerWithoutMetrics",
        "exp_alerts": [_without_metrics(spec, pod, "ranking-inference") for pod in silent],
    }
    _run(tmp_path, spec, series, [], [alert])


# --- DRA (stacks/dra-gpus.yaml) -------------------------------------------------------------------

A100_DRA = [NvidiaDevice(i, f"GPU-a100-{i}", "a100-dra-0", util=0.7, fb_used_mib=5000) for i in (0, 1)]
H100_MIG = [
    NvidiaDevice(0, "GPU-h100-0", "h100-0", util=0.4, fb_used_mib=9000, model="NVIDIA H100 80GB HBM3"),
    *(NvidiaDevice(0, "GPU-h100-0", "h100-0", util=0.4, fb_used_mib=1000, fb_free_mib=9000, model="NVIDIA H100 80GB HBM3",
                   mig=("1g.10gb", gi), mig_uuid=f"MIG-h100-0-{gi}") for gi in (7, 8)),
]  # fmt: skip
T4_PLUGIN = [NvidiaDevice(0, "GPU-t4p-0", "t4-plugin-0", util=0.9, fb_used_mib=2000, model="Tesla T4")]
DRA_PODS = {
    "fraud-scoring-taskmanager-1-1": "fraud-scoring",
    "embeddings-mig-taskmanager-1-1": "embeddings-mig",
    "embeddings-mig-taskmanager-1-2": "embeddings-mig",
    "legacy-ranking-taskmanager-1-1": "legacy-ranking",
}


def _dra_holders(ns: dict[str, str]) -> tuple[list[Holder], list[Holder], list[Holder]]:
    fraud = Holder(ns["fraud-scoring"], "fraud-scoring-taskmanager-1-1", "", claims=tuple(
        Claim("fraud-scoring-taskmanager-1-1-gpu-x", "a100-dra-0", f"gpu-{i}", f"GPU-a100-{i}") for i in (0, 1)))  # fmt: skip
    mig = [
        Holder(ns["embeddings-mig"], f"embeddings-mig-taskmanager-1-{n}", "", claims=(
            Claim(f"embeddings-mig-taskmanager-1-{n}-gpu-x", "h100-0", f"gpu-0-mig-{gi}", "GPU-h100-0", "1g.10gb", f"MIG-h100-0-{gi}"),))
        for n, gi in ((1, 7), (2, 8))
    ]  # fmt: skip
    plugin = [Holder(ns["legacy-ranking"], "legacy-ranking-taskmanager-1-1", "nvidia.com/gpu", ("GPU-t4p-0",))]
    return [fraud], mig, plugin


def test_dra_claims_are_attributed(tmp_path: Path) -> None:
    """dcgm-exporter-dra (KUBERNETES_ENABLE_DRA) labels each claimed GPU with its TaskManager and each
    MIG claim's parent GPU with the claim's MIG device (``dra_mig_device_uuid``): two MIG claims on one
    H100 are two devices; the device-plugin T4 pool keeps its own exporter."""
    path = REPO_ROOT / "stacks" / "dra-gpus.yaml"
    spec = model_of(path)
    dra_env = _exporter_env(path, "dcgm-exporter-dra")
    assert dra_env["KUBERNETES_ENABLE_DRA"] == "true"
    fraud, mig, plugin = _dra_holders(_namespaces(spec))
    series = [
        *_taskmanagers(spec, DRA_PODS),
        *dcgm_series(dra_env, A100_DRA, fraud, SAMPLES),
        *dcgm_series(dra_env, H100_MIG, mig, SAMPLES),
        *dcgm_series(_exporter_env(path, "dcgm-exporter"), T4_PLUGIN, plugin, SAMPLES),
    ]
    exprs = [
        {
            "expr": "accelplane:flink_cluster_gpus:count",
            "eval_time": "15m",
            "exp_samples": [
                _sample("accelplane:flink_cluster_gpus:count", 2, flink_cluster="fraud-scoring"),
                _sample("accelplane:flink_cluster_gpus:count", 2, flink_cluster="embeddings-mig"),
                _sample("accelplane:flink_cluster_gpus:count", 1, flink_cluster="legacy-ranking"),
            ],
        },
        {
            "expr": "accelplane:queue_gpu_capability:count",
            "eval_time": "1m",
            "exp_samples": [
                _sample("accelplane:queue_gpu_capability:count", 24 + 56 + 16, queue="streaming"),
                _sample("accelplane:queue_gpu_capability:count", 16, queue="research"),
            ],
        },
    ]
    _run(tmp_path, spec, series, exprs, [_no_alert("AccelplaneGpuTaskManagerWithoutMetrics")])


def test_dra_claims_without_the_setting_alert(tmp_path: Path) -> None:
    """Without KUBERNETES_ENABLE_DRA (4.2.3-4.1.3 has no such setting) no claimed GPU names its pod."""
    spec = model_of(REPO_ROOT / "stacks" / "dra-gpus.yaml")
    fraud, _, _ = _dra_holders(_namespaces(spec))
    pods = {"fraud-scoring-taskmanager-1-1": "fraud-scoring"}
    series = [*_taskmanagers(spec, pods), *dcgm_series(MAIN_ENV, A100_DRA, fraud, SAMPLES)]
    alert = {
        "eval_time": "20m",
        "alertname": "AccelplaneGpuTaskManagerWithoutMetrics",
        "exp_alerts": [_without_metrics(spec, "fraud-scoring-taskmanager-1-1", "fraud-scoring")],
    }
    _run(tmp_path, spec, series, [], [alert])


# --- AMD and the default install (stacks/prod-eu.yaml) ----------------------------------------------

PROD = REPO_ROOT / "stacks" / "prod-eu.yaml"
AMD_POD = "embeddings-amd-taskmanager-1-1"
GIB = 1024**3


def test_amd_vram_is_mib(tmp_path: Path) -> None:
    """AMD's exporter reports VRAM as bytes / 1024 / 1024 (its "MB" are MiB): a GPU using exactly
    1 GiB of its 192 GiB comes out as 1 GiB and 192 GiB, not 1.07e9 / 1.048576."""
    spec = model_of(PROD)
    holder = Holder(_namespaces(spec)["embeddings-amd"], AMD_POD, "amd.com/gpu")
    gpus = [AmdGpu(0, "mi300-0", 40, GIB, 192 * GIB, holder), AmdGpu(1, "mi300-0", 0, 0, 192 * GIB)]
    series = [*_taskmanagers(spec, {AMD_POD: "embeddings-amd"}), *amd_series(gpus, SAMPLES)]
    exprs = [
        {
            "expr": "accelplane:taskmanager_gpu_memory_used:bytes",
            "eval_time": "15m",
            "exp_samples": [_sample("accelplane:taskmanager_gpu_memory_used:bytes", GIB, flink_cluster="embeddings-amd", taskmanager=AMD_POD)],
        },
        {
            "expr": 'accelplane:gpu_memory_total:bytes{gpu_id="1"}',
            "eval_time": "15m",
            "exp_samples": [_sample("accelplane:gpu_memory_total:bytes", 192 * GIB, gpu_id="1", hostname="mi300-0", vendor="amd")],
        },
        {
            "expr": "accelplane:flink_cluster_gpu_utilization:avg",
            "eval_time": "15m",
            "exp_samples": [_sample("accelplane:flink_cluster_gpu_utilization:avg", 0.4, flink_cluster="embeddings-amd")],
        },
    ]
    _run(tmp_path, spec, series, exprs, [_no_alert("AccelplaneGpuTaskManagerWithoutMetrics")])


def _labels_missing_alert() -> dict[str, Any]:
    return {
        "exp_labels": {
            "severity": "warning",
            "label_accelplane_io_cluster": "prod-eu",
            "label_accelplane_io_component": "taskmanager",
        },
        "exp_annotations": {
            "summary": "No pod labels of accelplane stack prod-eu in kube-state-metrics",
            "description": (
                "GPU TaskManagers of accelplane stack prod-eu are running, but kube-state-metrics exports no "
                "kube_pod_labels with their accelplane.io labels, so no GPU is attributed to a Flink cluster or queue "
                "and AccelplaneGpuTaskManagerWithoutMetrics cannot fire: start kube-state-metrics with "
                "--metric-labels-allowlist=pods=[accelplane.io/cluster,accelplane.io/component,"
                "accelplane.io/flink-cluster] (kube-prometheus-stack: monitoring/kube-prometheus-stack-values.yaml)."
            ),
        },
    }


@pytest.mark.parametrize("labels", [False, True], ids=["default-install", "allowlisted"])
def test_missing_pod_labels_alert(tmp_path: Path, labels: bool) -> None:
    """A default kube-prometheus-stack (no --metric-labels-allowlist): running GPU TaskManagers, no
    kube_pod_labels; every per-cluster series is empty and only the new alert says why. With the
    allowlist (monitoring/kube-prometheus-stack-values.yaml) it stays quiet."""
    spec = model_of(PROD)
    pods = {"fraud-scoring-taskmanager-1-1": "fraud-scoring", AMD_POD: "embeddings-amd"}
    ns = _namespaces(spec)
    series = [
        *_taskmanagers(spec, pods, labels=labels),
        *dcgm_series(MAIN_ENV, [NvidiaDevice(0, "GPU-a", "a100-0")], [Holder(ns["fraud-scoring"], "fraud-scoring-taskmanager-1-1", "nvidia.com/gpu", ("GPU-a",))], SAMPLES),
        *amd_series([AmdGpu(0, "mi300-0", 40, GIB, 192 * GIB, Holder(ns["embeddings-amd"], AMD_POD, "amd.com/gpu"))], SAMPLES),
        # a pod of another workload whose name only looks alike: not a TaskManager of this stack
        *kube_state_metrics("other", "x", "default", "fraud-scoring-jobmanager-1", SAMPLES, labels=False),
    ]
    exprs = [{"expr": "accelplane:flink_cluster_gpus:count", "eval_time": "15m", "exp_samples": [] if not labels else [
        _sample("accelplane:flink_cluster_gpus:count", 1, flink_cluster="fraud-scoring"),
        _sample("accelplane:flink_cluster_gpus:count", 1, flink_cluster="embeddings-amd"),
    ]}]  # fmt: skip
    alerts: list[dict[str, Any]] = [
        _no_alert("AccelplaneTaskManagerPodLabelsMissing", "5m"),  # pending for missingMetricsFor (10m)
        {
            "eval_time": "15m",
            "alertname": "AccelplaneTaskManagerPodLabelsMissing",
            "exp_alerts": [] if labels else [_labels_missing_alert()],
        },
        _no_alert("AccelplaneGpuTaskManagerWithoutMetrics", "15m"),
    ]
    _run(tmp_path, spec, series, exprs, alerts)


def test_no_running_taskmanagers_no_labels_alert(tmp_path: Path) -> None:
    """No GPU TaskManager running (only a Pending one): nothing to attribute, no alert."""
    spec = model_of(PROD)
    series = [
        {"series": 'kube_pod_status_phase{namespace="flink",pod="fraud-scoring-taskmanager-1-1",phase="Running"}', "values": f"0x{SAMPLES}"},
        {"series": 'kube_pod_status_phase{namespace="flink",pod="fraud-scoring-taskmanager-1-1",phase="Pending"}', "values": f"1x{SAMPLES}"},
    ]
    _run(tmp_path, spec, series, [], [_no_alert("AccelplaneTaskManagerPodLabelsMissing")])


def test_capability_of_a_name_pools_replicate_differently_counts_one_each(tmp_path: Path) -> None:
    """``nvidia.com/gpu`` from an unshared pool and from an unrenamed shared one: the name says
    nothing about the device, so its units count one each; alone on the shared pool, 1/replicas."""
    sharing = {"strategy": "timeSlicing", "replicas": 4, "renameByDefault": False}
    _, spec = _shared_spec(tmp_path, sharing)
    assert {c.name: c.gpus for c in queue_capabilities(spec)} == {"inference": 40, "features": 32}
    doc = stack_document("shared-gpus")
    node_pool(doc, "t4-shared")["gpu"]["sharing"] = sharing
    doc["queues"][0]["capability"]["nvidia.com/gpu"] = doc["queues"][0]["capability"].pop("nvidia.com/gpu.shared")
    doc["queues"][0]["deserved"]["nvidia.com/gpu"] = doc["queues"][0]["deserved"].pop("nvidia.com/gpu.shared")
    doc["nodePools"].append({**node_pool(doc, "t4-shared"), "name": "t4-whole", "labels": {"accelplane.io/pool": "t4-whole"},
                             "gpu": {**node_pool(doc, "t4-shared")["gpu"], "sharing": {"strategy": "none"}}})  # fmt: skip
    spec = model_of(write_spec(tmp_path / "mixed", doc))
    assert {c.name: c.gpus for c in queue_capabilities(spec)} == {"inference": 96 + 16, "features": 32}
