"""The recording rules and alerts of a Kubernetes stack (stacks/prod-eu.yaml), unit-tested by
``promtool test rules`` on synthetic exporter and kube-state-metrics series: a busy GPU, an idle
held GPU, a MIG device scraped without honorLabels (``exported_pod``), an AMD GPU, a GPU nobody
holds, a running GPU TaskManager without GPU metrics, and a queue near its GPU capability."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from accelplane.builders.monitoring import rules_document

from tests.monitoring.promtool import check_rules, run_rule_tests
from tests.support.paths import REPO_ROOT
from tests.support.specs import model_of

SPEC = REPO_ROOT / "stacks" / "prod-eu.yaml"
MINUTES = 90  # samples per series (one a minute); the idle alert waits monitoring.idleFor = 1h
TM = "label_accelplane_io_component"


def _tm(cluster: str, namespace: str, pod: str) -> list[dict[str, str]]:
    """kube-state-metrics series of a running TaskManager pod with accelplane's labels."""
    return [
        {
            "series": (
                f'kube_pod_labels{{namespace="{namespace}",pod="{pod}",label_accelplane_io_cluster="prod-eu",'
                f'{TM}="taskmanager",label_accelplane_io_flink_cluster="{cluster}"}}'
            ),
            "values": f"1x{MINUTES}",
        },
        {"series": f'kube_pod_status_phase{{namespace="{namespace}",pod="{pod}",phase="Running"}}', "values": f"1x{MINUTES}"},
    ]


def _dcgm(labels: str, util: float | None, prof: float, fb_used: int, fb_free: int) -> list[dict[str, str]]:
    series = [
        {"series": f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}}", "values": f"{prof}x{MINUTES}"},
        {"series": f"DCGM_FI_DEV_FB_USED{{{labels}}}", "values": f"{fb_used}x{MINUTES}"},
        {"series": f"DCGM_FI_DEV_FB_FREE{{{labels}}}", "values": f"{fb_free}x{MINUTES}"},
    ]
    if util is not None:  # MIG devices have no DCGM_FI_DEV_GPU_UTIL
        series.append({"series": f"DCGM_FI_DEV_GPU_UTIL{{{labels}}}", "values": f"{util}x{MINUTES}"})
    return series


BUSY = "fraud-scoring-taskmanager-1-1"
IDLE = "fraud-scoring-taskmanager-1-2"
SILENT = "fraud-scoring-taskmanager-1-3"
MIG = "ad-hoc-taskmanager-1-1"
AMD = "embeddings-amd-taskmanager-1-1"
BUSY_GPU = 'gpu="0",UUID="GPU-busy",Hostname="a100-0",modelName="NVIDIA A100-SXM4-80GB"'
IDLE_GPU = 'gpu="1",UUID="GPU-idle",Hostname="a100-0",modelName="NVIDIA A100-SXM4-80GB"'
MIG_GPU = 'gpu="2",UUID="GPU-mig",GPU_I_ID="3",GPU_I_PROFILE="1g.10gb",Hostname="a100-1",modelName="NVIDIA A100-SXM4-80GB"'
FREE_GPU = 'gpu="3",UUID="GPU-free",Hostname="a100-1",modelName="NVIDIA A100-SXM4-80GB"'


def _input_series() -> list[dict[str, str]]:
    series = [
        *_tm("fraud-scoring", "flink", BUSY),
        *_tm("fraud-scoring", "flink", IDLE),
        *_tm("fraud-scoring", "flink", SILENT),
        *_tm("ad-hoc", "flink", MIG),
        *_tm("embeddings-amd", "flink-batch", AMD),
        # honorLabels: the holder's pod/namespace as the exporter reports them
        *_dcgm(f'{BUSY_GPU},namespace="flink",pod="{BUSY}",container="flink-main-container"', 90, 0.9, 40000, 41920),
        *_dcgm(f'{IDLE_GPU},namespace="flink",pod="{IDLE}",container="flink-main-container"', 0, 0.01, 500, 81420),
        # the GPU Operator's ServiceMonitor (honorLabels: false): exported_pod/exported_namespace
        *_dcgm(
            f'{MIG_GPU},exported_namespace="flink",exported_pod="{MIG}",namespace="gpu-operator",pod="nvidia-dcgm-exporter-x"',
            None,
            0.5,
            4000,
            5760,
        ),
        *_dcgm(FREE_GPU, 0, 0.0, 0, 81920),  # nobody holds it: never counted, never "idle"
        {"series": f'gpu_gfx_activity{{gpu_id="0",hostname="mi300-0",namespace="flink-batch",pod="{AMD}"}}', "values": f"40x{MINUTES}"},
        {"series": f'gpu_used_vram{{gpu_id="0",hostname="mi300-0",namespace="flink-batch",pod="{AMD}"}}', "values": f"1024x{MINUTES}"},
        {"series": f'gpu_total_vram{{gpu_id="0",hostname="mi300-0",namespace="flink-batch",pod="{AMD}"}}', "values": f"196608x{MINUTES}"},
        # a TaskManager of another accelplane stack in the same Prometheus: ignored
        {
            "series": (
                f'kube_pod_labels{{namespace="flink",pod="other-tm",label_accelplane_io_cluster="prod-us",'
                f'{TM}="taskmanager",label_accelplane_io_flink_cluster="fraud-scoring"}}'
            ),
            "values": f"1x{MINUTES}",
        },
    ]
    return series


def _queue_series(count: int) -> list[dict[str, str]]:
    """``count`` busy whole GPUs held by ad-hoc TaskManagers (queue batch, capability 32 GPUs)."""
    out: list[dict[str, str]] = []
    for i in range(count):
        pod = f"ad-hoc-taskmanager-2-{i}"
        out += _tm("ad-hoc", "flink", pod)
        out += _dcgm(f'gpu="{i % 8}",UUID="GPU-q{i}",Hostname="a100-q{i // 8}",namespace="flink",pod="{pod}"', 80, 0.8, 1, 1)
    return out


def _idle_annotations(tm: str, uuid: str) -> dict[str, str]:
    return {
        "summary": "GPU held by Flink cluster fraud-scoring is idle",
        "description": (
            f"TaskManager {tm} of Flink cluster fraud-scoring holds a GPU (UUID {uuid}) whose utilisation "
            "stayed below 0.05 for 1h."
        ),
    }


def test_rules_pass_promtool_check(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    import yaml

    path.write_text(yaml.safe_dump(rules_document(model_of(SPEC))))
    assert "SUCCESS" in check_rules(path)


def test_recording_rules_and_alerts(tmp_path: Path) -> None:
    rules = rules_document(model_of(SPEC))
    mig_held = (
        f'{{__name__="accelplane:gpu_held_utilization:ratio",{MIG_GPU},exported_namespace="flink",'
        f'exported_pod="{MIG}",namespace="flink",pod="{MIG}",vendor="nvidia",holder="pod",'
        f'flink_cluster="ad-hoc",taskmanager="{MIG}"}}'
    )
    gib = 1048576
    tests: list[dict[str, Any]] = [
        {
            "interval": "1m",
            "input_series": _input_series(),
            "promql_expr_test": [
                {
                    "expr": "accelplane:taskmanager_gpu_utilization:avg",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": f'accelplane:taskmanager_gpu_utilization:avg{{flink_cluster="fraud-scoring",taskmanager="{BUSY}"}}', "value": 0.9},
                        {"labels": f'accelplane:taskmanager_gpu_utilization:avg{{flink_cluster="fraud-scoring",taskmanager="{IDLE}"}}', "value": 0.01},
                        {"labels": f'accelplane:taskmanager_gpu_utilization:avg{{flink_cluster="ad-hoc",taskmanager="{MIG}"}}', "value": 0.5},
                        {"labels": f'accelplane:taskmanager_gpu_utilization:avg{{flink_cluster="embeddings-amd",taskmanager="{AMD}"}}', "value": 0.4},
                    ],
                },
                {  # the MIG device: its own series, utilisation from the profiling metric, pod from exported_pod
                    "expr": 'accelplane:gpu_held_utilization:ratio{GPU_I_ID="3"}',
                    "eval_time": "70m",
                    "exp_samples": [{"labels": mig_held, "value": 0.5}],
                },
                {
                    "expr": "accelplane:taskmanager_gpu_memory_used:bytes",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": f'accelplane:taskmanager_gpu_memory_used:bytes{{flink_cluster="fraud-scoring",taskmanager="{BUSY}"}}', "value": 40000 * gib},
                        {"labels": f'accelplane:taskmanager_gpu_memory_used:bytes{{flink_cluster="fraud-scoring",taskmanager="{IDLE}"}}', "value": 500 * gib},
                        {"labels": f'accelplane:taskmanager_gpu_memory_used:bytes{{flink_cluster="ad-hoc",taskmanager="{MIG}"}}', "value": 4000 * gib},
                        {"labels": f'accelplane:taskmanager_gpu_memory_used:bytes{{flink_cluster="embeddings-amd",taskmanager="{AMD}"}}', "value": 1024 * gib},
                    ],
                },
                {
                    "expr": "accelplane:flink_cluster_gpus:count",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": 'accelplane:flink_cluster_gpus:count{flink_cluster="fraud-scoring"}', "value": 2},
                        {"labels": 'accelplane:flink_cluster_gpus:count{flink_cluster="ad-hoc"}', "value": 1},
                        {"labels": 'accelplane:flink_cluster_gpus:count{flink_cluster="embeddings-amd"}', "value": 1},
                    ],
                },
                {
                    "expr": "accelplane:flink_cluster_gpu_utilization:avg",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": 'accelplane:flink_cluster_gpu_utilization:avg{flink_cluster="fraud-scoring"}', "value": 0.455},
                        {"labels": 'accelplane:flink_cluster_gpu_utilization:avg{flink_cluster="ad-hoc"}', "value": 0.5},
                        {"labels": 'accelplane:flink_cluster_gpu_utilization:avg{flink_cluster="embeddings-amd"}', "value": 0.4},
                    ],
                },
                {
                    "expr": "accelplane:queue_gpus:count",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": 'accelplane:queue_gpus:count{queue="streaming"}', "value": 2},
                        {"labels": 'accelplane:queue_gpus:count{queue="batch"}', "value": 2},
                    ],
                },
                {
                    "expr": "accelplane:queue_gpu_utilization:avg",
                    "eval_time": "70m",
                    "exp_samples": [
                        {"labels": 'accelplane:queue_gpu_utilization:avg{queue="streaming"}', "value": 0.455},
                        {"labels": 'accelplane:queue_gpu_utilization:avg{queue="batch"}', "value": 0.45},
                    ],
                },
                {
                    "expr": "accelplane:queue_gpu_capability:count",
                    "eval_time": "1m",
                    "exp_samples": [
                        {"labels": 'accelplane:queue_gpu_capability:count{queue="batch"}', "value": 32},
                        {"labels": 'accelplane:queue_gpu_capability:count{queue="streaming"}', "value": 32},
                    ],
                },
            ],
            "alert_rule_test": [
                {"eval_time": "50m", "alertname": "AccelplaneGpuAllocatedIdle", "exp_alerts": []},  # not idle for 1h yet
                {
                    "eval_time": "75m",
                    "alertname": "AccelplaneGpuAllocatedIdle",
                    "exp_alerts": [
                        {
                            "exp_labels": {
                                "severity": "warning",
                                "gpu": "1",
                                "UUID": "GPU-idle",
                                "Hostname": "a100-0",
                                "modelName": "NVIDIA A100-SXM4-80GB",
                                "container": "flink-main-container",
                                "namespace": "flink",
                                "pod": IDLE,
                                "vendor": "nvidia",
                                "holder": "pod",
                                "flink_cluster": "fraud-scoring",
                                "taskmanager": IDLE,
                            },
                            "exp_annotations": _idle_annotations(IDLE, "GPU-idle"),
                        }
                    ],
                },
                {"eval_time": "5m", "alertname": "AccelplaneGpuTaskManagerWithoutMetrics", "exp_alerts": []},
                {
                    "eval_time": "15m",
                    "alertname": "AccelplaneGpuTaskManagerWithoutMetrics",
                    "exp_alerts": [
                        {
                            "exp_labels": {
                                "severity": "warning",
                                "namespace": "flink",
                                "pod": SILENT,
                                "flink_cluster": "fraud-scoring",
                                "taskmanager": SILENT,
                            },
                            "exp_annotations": {
                                "summary": f"GPU TaskManager {SILENT} has no GPU metrics",
                                "description": (
                                    f"Running TaskManager flink/{SILENT} of Flink cluster fraud-scoring asks for GPUs, "
                                    "but no GPU exporter reports a device for it: the exporter is not running on its "
                                    "node, lacks the kubelet pod-resources mapping, or the pod got no GPU."
                                ),
                            },
                        }
                    ],
                },
                {"eval_time": "75m", "alertname": "AccelplaneQueueGpusNearCapability", "exp_alerts": []},
            ],
        },
        {  # 30 of the 32 GPUs of queue batch held (0.9375 >= 0.9) for longer than 15m
            "interval": "1m",
            "input_series": _queue_series(30),
            "alert_rule_test": [
                {"eval_time": "10m", "alertname": "AccelplaneQueueGpusNearCapability", "exp_alerts": []},
                {
                    "eval_time": "20m",
                    "alertname": "AccelplaneQueueGpusNearCapability",
                    "exp_alerts": [
                        {
                            "exp_labels": {"severity": "warning", "queue": "batch"},
                            "exp_annotations": {
                                "summary": "Queue batch holds most of its GPU capability",
                                "description": (
                                    "The Flink clusters of queue batch hold 93.75% of its GPU capability (alert at "
                                    "0.9); new GPU TaskManagers will wait."
                                ),
                            },
                        }
                    ],
                },
            ],
        },
        {  # 28 of 32 (0.875): below the ratio, no alert
            "interval": "1m",
            "input_series": _queue_series(28),
            "alert_rule_test": [{"eval_time": "30m", "alertname": "AccelplaneQueueGpusNearCapability", "exp_alerts": []}],
        },
    ]
    run_rule_tests(tmp_path, rules, tests)
