"""The host-side rules of a YARN stack (stacks/yarn-analytics.yaml), unit-tested by
``promtool test rules``: the discovery script's ``accelplane_gpu_owner`` series (node-exporter
textfile) joined with dcgm-exporter's series on the GPU UUID: a busy GPU, an idle held GPU, a held
GPU no exporter reports (the TaskManager without metrics) and a MIG device (left out of the join:
no exporter labels MIG UUIDs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from accelplane.builders.monitoring import rules_document

from tests.monitoring.promtool import check_rules, run_rule_tests
from tests.support.paths import REPO_ROOT
from tests.support.specs import model_of

SPEC = REPO_ROOT / "stacks" / "yarn-analytics.yaml"
N = 120


def _owner(uuid: str, index: int, host: str, pid: int) -> dict[str, str]:
    labels = f'flink_cluster="sessions-v100",gpu_index="{index}",gpu_uuid="{uuid}",host="{host}",pid="{pid}"'
    return {"series": f'accelplane_gpu_owner{{{labels},instance="{host}:9100",job="node"}}', "values": f"1x{N}"}


def _dcgm(uuid: str, host: str, util: int) -> list[dict[str, str]]:
    labels = f'gpu="0",UUID="{uuid}",Hostname="{host}",instance="{host}:9400",job="dcgm"'
    return [
        {"series": f"DCGM_FI_DEV_GPU_UTIL{{{labels}}}", "values": f"{util}x{N}"},
        {"series": f"DCGM_FI_DEV_FB_USED{{{labels}}}", "values": f"100x{N}"},
        {"series": f"DCGM_FI_DEV_FB_FREE{{{labels}}}", "values": f"100x{N}"},
    ]


def test_host_rules(tmp_path: Path) -> None:
    rules = rules_document(model_of(SPEC))
    (tmp_path / "check.yaml").write_text(yaml.safe_dump(rules))
    check_rules(tmp_path / "check.yaml")
    series = [
        _owner("GPU-busy", 0, "v100-0", 4242),
        _owner("GPU-idle", 1, "v100-0", 4242),
        _owner("GPU-dark", 0, "v100-1", 777),
        _owner("MIG-slice", 0, "v100-2", 99),
        *_dcgm("GPU-busy", "v100-0", 80),
        *_dcgm("GPU-idle", "v100-0", 1),
        *_dcgm("GPU-free", "v100-1", 0),
    ]
    busy_tm, dark_tm = "v100-0/4242", "v100-1/777"
    tests: list[dict[str, Any]] = [
        {
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": [
                {
                    "expr": "accelplane:taskmanager_gpu_utilization:avg",
                    "eval_time": "10m",
                    "exp_samples": [
                        {
                            "labels": f'accelplane:taskmanager_gpu_utilization:avg{{flink_cluster="sessions-v100",taskmanager="{busy_tm}"}}',
                            "value": 0.405,
                        }
                    ],
                },
                {
                    "expr": "accelplane:queue_gpus:count",
                    "eval_time": "10m",
                    "exp_samples": [{"labels": 'accelplane:queue_gpus:count{queue="analytics"}', "value": 2}],
                },
            ],
            "alert_rule_test": [
                {
                    "eval_time": "40m",
                    "alertname": "AccelplaneGpuAllocatedIdle",
                    "exp_alerts": [
                        {
                            "exp_labels": {
                                "severity": "warning",
                                "gpu": "0",
                                "UUID": "GPU-idle",
                                "Hostname": "v100-0",
                                "instance": "v100-0:9400",
                                "job": "dcgm",
                                "vendor": "nvidia",
                                "holder": "process",
                                "flink_cluster": "sessions-v100",
                                "taskmanager": busy_tm,
                            },
                            "exp_annotations": {
                                "summary": "GPU held by Flink cluster sessions-v100 is idle",
                                "description": (
                                    f"TaskManager {busy_tm} of Flink cluster sessions-v100 holds a GPU (UUID GPU-idle) "
                                    "whose utilisation stayed below 0.05 for 30m."
                                ),
                            },
                        }
                    ],
                },
                {
                    "eval_time": "15m",
                    "alertname": "AccelplaneGpuTaskManagerWithoutMetrics",
                    "exp_alerts": [
                        {
                            "exp_labels": {
                                "severity": "warning",
                                "UUID": "GPU-dark",
                                "flink_cluster": "sessions-v100",
                                "taskmanager": dark_tm,
                            },
                            "exp_annotations": {
                                "summary": f"GPU TaskManager {dark_tm} has no GPU metrics",
                                "description": (
                                    f"TaskManager {dark_tm} of Flink cluster sessions-v100 holds GPU GPU-dark "
                                    "(coordination file), but no GPU exporter reports that GPU: run dcgm-exporter on "
                                    "the host and scrape it."
                                ),
                            },
                        }
                    ],
                },
            ],
        }
    ]
    run_rule_tests(tmp_path, rules, tests)
