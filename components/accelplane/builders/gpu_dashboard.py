"""The Grafana dashboard of GPU usage per queue, Flink cluster and TaskManager, built with
grafana-foundation-sdk (Grafana's own typed dashboard objects) over the recording rules of
`accelplane.builders.prometheus_rules`.

Panels: GPUs held, mean utilisation and memory used per queue (when the spec's clusters name
queues), per Flink cluster and per TaskManager, and a table of held GPUs below the idle threshold.
A ``datasource`` variable picks the Prometheus data source, ``flink_cluster`` filters the cluster
and TaskManager panels.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from grafana_foundation_sdk.builders import dashboard as gdash
from grafana_foundation_sdk.builders import prometheus, table, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from accelplane.builders.prometheus_rules import HELD_UTIL
from accelplane.derive.monitoring import cluster_queues
from accelplane.model import Spec

DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
CLUSTER_FILTER = 'flink_cluster=~"${flink_cluster}"'


UID_MAX = 40
"""Grafana's limit on a dashboard uid (it refuses a longer one: "uid too long, max 40 characters")."""
UID_DIGEST = 8


def dashboard_uid(spec: Spec) -> str:
    """Stable dashboard uid, unique per stack: ``accelplane-gpu-<cluster>`` when that fits Grafana's
    40 characters, else its first 31 characters, ``-`` and 8 hex digits of the SHA-256 of the
    cluster name, so two names that share a long prefix (``analytics-platform-europe-west1`` and
    ``…-west2``) never get one uid, where one dashboard would replace the other in Grafana."""
    uid = f"accelplane-gpu-{spec.name}"
    if len(uid) <= UID_MAX:
        return uid
    digest = hashlib.sha256(spec.name.encode()).hexdigest()[:UID_DIGEST]
    return f"{uid[: UID_MAX - UID_DIGEST - 1]}-{digest}"


def _query(expr: str, legend: str, ref: str = "A") -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref)


def _series(title: str, expr: str, legend: str, unit: str, width: int = 8) -> timeseries.Panel:
    panel = (
        timeseries.Panel().title(title).datasource(DATASOURCE).unit(unit).span(width).height(8)
        .with_target(_query(expr, legend))
    )
    if unit == "percentunit":
        panel = panel.min(0).max(1)
    return panel


def build_dashboard(spec: Spec) -> dict[str, Any]:
    """The dashboard as Grafana's JSON model (a plain dict, keys as Grafana stores them)."""
    threshold = spec.monitoring.idle_threshold
    board = (
        gdash.Dashboard(f"accelplane GPU usage: {spec.name}")
        .uid(dashboard_uid(spec))
        .tags(["accelplane", "gpu", "flink"])
        .description(
            "GPU utilisation and memory per queue, Flink cluster and TaskManager, from accelplane's recording "
            "rules (docs/monitoring.md)."
        )
        .refresh("1m")
        .time("now-6h", "now")
        .with_variable(gdash.DatasourceVariable("datasource").label("Data source").type("prometheus"))
        .with_variable(
            gdash.QueryVariable("flink_cluster")
            .label("Flink cluster")
            .datasource(DATASOURCE)
            .query("label_values(accelplane:flink_cluster_gpus:count, flink_cluster)")
            .multi(True)
            .include_all(True)
        )
    )
    if cluster_queues(spec):
        board = board.with_row(gdash.Row("Queues"))
        board = board.with_panel(
            _series("GPUs held per queue", "accelplane:queue_gpus:count", "{{queue}}", "none")
            .with_target(_query("accelplane:queue_gpu_capability:count", "{{queue}} capability", "B"))
        )
        board = board.with_panel(
            _series("GPU utilisation per queue", "accelplane:queue_gpu_utilization:avg", "{{queue}}", "percentunit")
        )
        board = board.with_panel(
            _series("GPU memory used per queue", "accelplane:queue_gpu_memory_used:bytes", "{{queue}}", "bytes")
        )
    board = board.with_row(gdash.Row("Flink clusters"))
    for title, record, unit in (
        ("GPUs held per Flink cluster", "accelplane:flink_cluster_gpus:count", "none"),
        ("GPU utilisation per Flink cluster", "accelplane:flink_cluster_gpu_utilization:avg", "percentunit"),
        ("GPU memory used per Flink cluster", "accelplane:flink_cluster_gpu_memory_used:bytes", "bytes"),
    ):
        board = board.with_panel(_series(title, f"{record}{{{CLUSTER_FILTER}}}", "{{flink_cluster}}", unit))
    board = board.with_row(gdash.Row("TaskManagers"))
    board = board.with_panel(
        _series(
            "GPU utilisation per TaskManager",
            f"accelplane:taskmanager_gpu_utilization:avg{{{CLUSTER_FILTER}}}",
            "{{flink_cluster}} {{taskmanager}}",
            "percentunit",
            12,
        )
    )
    board = board.with_panel(
        _series(
            "GPU memory used per TaskManager",
            f"accelplane:taskmanager_gpu_memory_used:bytes{{{CLUSTER_FILTER}}}",
            "{{flink_cluster}} {{taskmanager}}",
            "bytes",
            12,
        )
    )
    board = board.with_row(gdash.Row("Idle GPUs"))
    board = board.with_panel(
        table.Panel()
        .title(f"Held GPUs below {threshold:g} utilisation")
        .description("GPUs a TaskManager holds whose utilisation is below monitoring.idleThreshold now.")
        .datasource(DATASOURCE)
        .unit("percentunit")
        .span(24)
        .height(8)
        .with_target(
            _query(f"{HELD_UTIL}{{{CLUSTER_FILTER}}} < {threshold}", "", "A").instant().format(PromQueryFormat.TABLE)
        )
    )
    data: dict[str, Any] = json.loads(json.dumps(board.build(), cls=JSONEncoder, sort_keys=True))
    return data


def dashboard_json(spec: Spec) -> str:
    """The dashboard file: Grafana's JSON model, keys sorted, two-space indent, final newline."""
    return json.dumps(build_dashboard(spec), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
