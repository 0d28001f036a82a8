"""The Prometheus recording rules and alerts of GPU usage monitoring (docs/monitoring.md).

Device series come from the exporters: dcgm-exporter (``DCGM_FI_PROF_GR_ENGINE_ACTIVE``, a 0..1
ratio that also exists per MIG device, else ``DCGM_FI_DEV_GPU_UTIL`` in percent, which MIG devices
lack; ``DCGM_FI_DEV_FB_USED``/``_FREE`` in MiB) and AMD's device-metrics-exporter
(``gpu_gfx_activity`` in percent, ``gpu_used_vram``/``gpu_total_vram`` in MiB). With the kubelet's
pod-resources mapping both label a device held by a container with its ``pod`` and ``namespace``;
a scrape without ``honorLabels`` (the GPU Operator's ServiceMonitor) renames those to
``exported_pod``/``exported_namespace``, so the first rules take either.

Shared GPUs: dcgm-exporter reports a GPU's metrics once per container holding one of its replicas
(``vgpu`` label, time-slicing and MPS) or per DRA claim, so the same physical device can appear in
several held series; every aggregate first keeps one series per device (`DEVICE_KEY`), so counts
are physical devices (as the queue capabilities, `accelplane.derive.monitoring.queue_capabilities`)
and memory is not summed twice.

Who holds a device: on Kubernetes the pod's labels from kube-state-metrics (``kube_pod_labels``
with accelplane's ``accelplane.io/cluster``, ``accelplane.io/flink-cluster`` and
``accelplane.io/component`` allowed by ``--metric-labels-allowlist``); on YARN and standalone
hosts ``accelplane_gpu_owner``, written by the discovery script for node-exporter's textfile
collector and joined on the GPU UUID. Queues come from the spec (a constant series per cluster).
"""

from __future__ import annotations

from typing import Any

from accelplane.derive.monitoring import (
    cluster_queues,
    host_gpu_clusters,
    kube_state_metrics_allowlist,
    kubernetes_gpu_clusters,
    queue_capabilities,
)
from accelplane.model import Spec

MIB = 1048576
GROUP_RECORDS = "accelplane-gpu-usage"
GROUP_ALERTS = "accelplane-gpu-alerts"

UTIL = "accelplane:gpu_utilization:ratio"
MEM_USED = "accelplane:gpu_memory_used:bytes"
MEM_TOTAL = "accelplane:gpu_memory_total:bytes"
POD_OWNER = "accelplane:taskmanager_pod:info"
HOST_OWNER = "accelplane:gpu_owner_host:info"
HELD_UTIL = "accelplane:gpu_held_utilization:ratio"
HELD_MEM = "accelplane:gpu_held_memory_used:bytes"
CLUSTER_QUEUE = "accelplane:flink_cluster_queue:info"
QUEUE_CAPABILITY = "accelplane:queue_gpu_capability:count"
OWNER_METRIC = "accelplane_gpu_owner"
DEVICE_KEY = "vendor, UUID, GPU_I_ID, dra_mig_device_uuid, Hostname, hostname, gpu_id"
"""Labels that tell one physical device from another in any exporter's series: dcgm-exporter's GPU
``UUID`` and MIG ``GPU_I_ID`` (``internal/pkg/rendermetrics/render_metrics.go`` 47 at 4.3.1-4.4.0),
``dra_mig_device_uuid`` (a DRA MIG claim is reported on its parent GPU's series, ``kubernetes.go``
308-317 at 4.3.1-4.4.0), AMD's ``gpu_id`` on its ``hostname``. A label a series lacks is empty in the grouping."""
POD_LABELS_METRIC = "kube_pod_labels"


def _pod_labels(expr: str) -> str:
    """``expr`` with ``exported_pod``/``exported_namespace`` (a scrape without honorLabels) moved
    back to ``pod``/``namespace``; unchanged when the exporter's labels were honoured."""
    inner = f'label_replace({expr}, "pod", "$1", "exported_pod", "(.+)")'
    return f'label_replace({inner}, "namespace", "$1", "exported_namespace", "(.+)")'


def _record(record: str, expr: str, **labels: str) -> dict[str, Any]:
    """A recording rule; ``labels`` are set on its series (and tell apart rules of one record name)."""
    rule: dict[str, Any] = {"record": record, "expr": expr}
    if labels:
        rule["labels"] = labels
    return rule


def _device_rules() -> list[dict[str, Any]]:
    """One series per GPU or MIG device, in common units, labelled with its vendor."""
    nvidia_util = "(DCGM_FI_PROF_GR_ENGINE_ACTIVE or DCGM_FI_DEV_GPU_UTIL / 100)"
    return [
        _record(UTIL, _pod_labels(nvidia_util), vendor="nvidia"),
        _record(UTIL, _pod_labels("gpu_gfx_activity / 100"), vendor="amd"),
        _record(MEM_USED, _pod_labels(f"DCGM_FI_DEV_FB_USED * {MIB}"), vendor="nvidia"),
        _record(MEM_USED, _pod_labels(f"gpu_used_vram * {MIB}"), vendor="amd"),
        _record(MEM_TOTAL, _pod_labels(f"(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) * {MIB}"), vendor="nvidia"),
        _record(MEM_TOTAL, _pod_labels(f"gpu_total_vram * {MIB}"), vendor="amd"),
    ]


def _names(clusters: list[str]) -> str:
    """A regex matching exactly these Flink cluster names (DNS labels: no regex metacharacters)."""
    return "|".join(sorted(set(clusters)))


def _owner_rules(spec: Spec) -> list[dict[str, Any]]:
    """Who holds each device: TaskManager pods on Kubernetes, TaskManager processes on hosts."""
    rules: list[dict[str, Any]] = []
    kube = [c.name for c in kubernetes_gpu_clusters(spec)]
    if kube:
        selector = (
            f'kube_pod_labels{{label_accelplane_io_cluster="{spec.name}",'
            f'label_accelplane_io_component="taskmanager",label_accelplane_io_flink_cluster=~"{_names(kube)}"}}'
        )
        labelled = (
            f'label_replace(label_replace({selector}, "flink_cluster", "$1", "label_accelplane_io_flink_cluster", '
            '"(.+)"), "taskmanager", "$1", "pod", "(.+)")'
        )
        rules.append(
            {"record": POD_OWNER, "expr": f"max by (namespace, pod, flink_cluster, taskmanager) ({labelled})"}
        )
        for record, source in ((HELD_UTIL, UTIL), (HELD_MEM, MEM_USED)):
            join = f"{source} * on (namespace, pod) group_left (flink_cluster, taskmanager) {POD_OWNER}"
            rules.append(_record(record, join, holder="pod"))
    hosts = [c.name for c in host_gpu_clusters(spec)]
    if hosts:
        # MIG devices are recorded by their MIG UUID, which no exporter labels: whole GPUs only.
        owners = f'{OWNER_METRIC}{{flink_cluster=~"{_names(hosts)}",gpu_uuid=~"GPU-.+"}}'
        labelled = f'label_replace(label_join({owners}, "taskmanager", "/", "host", "pid"), "UUID", "$1", "gpu_uuid", "(.+)")'
        rules.append({"record": HOST_OWNER, "expr": f"max by (UUID, flink_cluster, taskmanager) ({labelled})"})
        for record, source in ((HELD_UTIL, UTIL), (HELD_MEM, MEM_USED)):
            join = f'{source}{{pod=""}} * on (UUID) group_left (flink_cluster, taskmanager) {HOST_OWNER}'
            rules.append(_record(record, join, holder="process"))
    return rules


def _per_device(level_by: str, expr: str) -> str:
    """``expr`` with one series per physical device at each ``level_by`` group (`DEVICE_KEY`)."""
    return f"max by ({level_by}, {DEVICE_KEY}) ({expr})"


def _usage_rules(spec: Spec) -> list[dict[str, Any]]:
    """Per TaskManager, Flink cluster and queue: mean utilisation, memory used, devices held; each
    over the distinct physical devices of the group (a GPU whose replicas two TaskManagers of one
    cluster hold counts once for the cluster)."""
    rules: list[dict[str, Any]] = []
    for level, by in (("taskmanager", "flink_cluster, taskmanager"), ("flink_cluster", "flink_cluster")):
        util = _per_device(by, HELD_UTIL)
        rules += [
            {"record": f"accelplane:{level}_gpu_utilization:avg", "expr": f"avg by ({by}) ({util})"},
            {"record": f"accelplane:{level}_gpu_memory_used:bytes", "expr": f"sum by ({by}) ({_per_device(by, HELD_MEM)})"},
            {"record": f"accelplane:{level}_gpus:count", "expr": f"count by ({by}) ({util})"},
        ]
    pairs = cluster_queues(spec)
    for cluster, queue in pairs:
        rules.append(_record(CLUSTER_QUEUE, "vector(1)", flink_cluster=cluster, queue=queue))
    if pairs:
        join = f"on (flink_cluster) group_left (queue) {CLUSTER_QUEUE}"
        util = _per_device("queue", f"{HELD_UTIL} * {join}")
        rules += [
            {"record": "accelplane:queue_gpu_utilization:avg", "expr": f"avg by (queue) ({util})"},
            {
                "record": "accelplane:queue_gpu_memory_used:bytes",
                "expr": f"sum by (queue) ({_per_device('queue', f'{HELD_MEM} * {join}')})",
            },
            {"record": "accelplane:queue_gpus:count", "expr": f"count by (queue) ({util})"},
        ]
    for cap in queue_capabilities(spec):
        rules.append(_record(QUEUE_CAPABILITY, f"vector({cap.gpus.normalize():f})", queue=cap.name))
    return rules


def _running_taskmanagers(spec: Spec) -> str:
    """Running TaskManager pods of the stack's Kubernetes GPU clusters, from series kube-state-metrics
    exports by default (``kube_pod_status_phase``), by Flink's pod name ``<cluster-id>-taskmanager-
    <attempt>-<n>`` per namespace: what still says GPU TaskManagers run when pod labels are missing."""
    by_namespace: dict[str, list[str]] = {}
    for cluster in kubernetes_gpu_clusters(spec):
        by_namespace.setdefault(cluster.namespace, []).append(cluster.name)
    selectors = [
        f'kube_pod_status_phase{{phase="Running",namespace="{ns}",pod=~"({_names(names)})-taskmanager-.+"}}'
        for ns, names in sorted(by_namespace.items())
    ]
    return " or ".join(selectors)


def _alert(name: str, expr: str, duration: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": duration,
        "labels": {"severity": "warning"},
        "annotations": {"summary": summary, "description": description},
    }


def _alert_rules(spec: Spec) -> list[dict[str, Any]]:
    m = spec.monitoring
    rules = [
        _alert(
            "AccelplaneGpuAllocatedIdle",
            f"{HELD_UTIL} < {m.idle_threshold}",
            m.idle_for,
            "GPU held by Flink cluster {{ $labels.flink_cluster }} is idle",
            "TaskManager {{ $labels.taskmanager }} of Flink cluster {{ $labels.flink_cluster }} holds a GPU "
            "(UUID {{ $labels.UUID }}) whose utilisation stayed below " + f"{m.idle_threshold:g} for {m.idle_for}.",
        )
    ]
    kube = [c.name for c in kubernetes_gpu_clusters(spec)]
    if kube:
        running = 'max by (namespace, pod) (kube_pod_status_phase{phase="Running"}) == 1'
        rules.append(
            _alert(
                "AccelplaneGpuTaskManagerWithoutMetrics",
                f"({POD_OWNER} * on (namespace, pod) group_left () ({running})) unless on (namespace, pod) {UTIL}",
                m.missing_metrics_for,
                "GPU TaskManager {{ $labels.pod }} has no GPU metrics",
                "Running TaskManager {{ $labels.namespace }}/{{ $labels.pod }} of Flink cluster "
                "{{ $labels.flink_cluster }} asks for GPUs, but no GPU exporter reports a device for it: "
                "the exporter is not running on its node, lacks the kubelet pod-resources mapping, or the "
                "pod got no GPU.",
            )
        )
        rules.append(
            _alert(
                "AccelplaneTaskManagerPodLabelsMissing",
                f'absent({POD_LABELS_METRIC}{{label_accelplane_io_cluster="{spec.name}",'
                f'label_accelplane_io_component="taskmanager"}}) and on () '
                f"(count(({_running_taskmanagers(spec)}) == 1) > 0)",
                m.missing_metrics_for,
                "No pod labels of accelplane stack " + spec.name + " in kube-state-metrics",
                "GPU TaskManagers of accelplane stack " + spec.name + " are running, but kube-state-metrics exports "
                "no kube_pod_labels with their accelplane.io labels, so no GPU is attributed to a Flink cluster or "
                "queue and AccelplaneGpuTaskManagerWithoutMetrics cannot fire: start kube-state-metrics with "
                f"--metric-labels-allowlist={kube_state_metrics_allowlist()} (kube-prometheus-stack: "
                "monitoring/kube-prometheus-stack-values.yaml).",
            )
        )
    if host_gpu_clusters(spec):
        rules.append(
            _alert(
                "AccelplaneGpuTaskManagerWithoutMetrics",
                f'{HOST_OWNER} unless on (UUID) {UTIL}{{pod=""}}',
                m.missing_metrics_for,
                "GPU TaskManager {{ $labels.taskmanager }} has no GPU metrics",
                "TaskManager {{ $labels.taskmanager }} of Flink cluster {{ $labels.flink_cluster }} holds GPU "
                "{{ $labels.UUID }} (coordination file), but no GPU exporter reports that GPU: run "
                "dcgm-exporter on the host and scrape it.",
            )
        )
    if queue_capabilities(spec):
        rules.append(
            _alert(
                "AccelplaneQueueGpusNearCapability",
                f"accelplane:queue_gpus:count / on (queue) {QUEUE_CAPABILITY} >= {m.queue_near_capability_ratio}",
                m.queue_near_capability_for,
                "Queue {{ $labels.queue }} holds most of its GPU capability",
                "The Flink clusters of queue {{ $labels.queue }} hold {{ $value | humanizePercentage }} of its GPU "
                f"capability (alert at {m.queue_near_capability_ratio:g}); new GPU TaskManagers will wait.",
            )
        )
    return rules


def rule_groups(spec: Spec) -> list[dict[str, Any]]:
    """The two rule groups: the recording rules in one group (Prometheus evaluates a group's rules
    in order, so each sees the results of the ones above it at the same instant), then the alerts."""
    records = [*_device_rules(), *_owner_rules(spec), *_usage_rules(spec)]
    return [{"name": GROUP_RECORDS, "rules": records}, {"name": GROUP_ALERTS, "rules": _alert_rules(spec)}]
