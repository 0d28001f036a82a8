"""What GPU usage monitoring covers: which exporters run where, which Flink clusters hold GPUs on
which platform, which queue each belongs to and each queue's GPU capability.

The monitoring builder (`accelplane.builders.monitoring`), the Flink keys (the discovery script's
``--owner-label``/``--metrics-file`` on hosts) and the docs read these, so what is scraped, joined
and alerted on is exactly what the stack renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from accelplane.derive.device_plugin_placement import (
    AMD_BASE_TOLERATIONS,
    AMD_NODE_SELECTOR,
    NVIDIA_BASE_TOLERATIONS,
    Placement,
    kubernetes_gpu_pools,
    plugin_enabled,
)
from accelplane.derive.discovery_paths import gpu_clusters
from accelplane.derive.node_selection import merged_tolerations
from accelplane.model import FlinkCluster, Spec, total_gpus

DCGM_EXPORTER_NAME = "dcgm-exporter"
AMD_EXPORTER_NAME = "amd-device-metrics-exporter"
TEXTFILE_NAME = "accelplane-gpu-owners.prom"
"""File the discovery script writes into node-exporter's textfile-collector directory."""
HOST_PLATFORMS = ("yarn", "standalone")


def monitoring_enabled(spec: Spec) -> bool:
    """True when the spec asks for GPU usage monitoring."""
    return spec.monitoring.enabled


def exporter_placements(spec: Spec) -> list[Placement]:
    """The GPU metrics exporter DaemonSets accelplane renders: only with ``exporters: accelplane``
    and only for the vendors whose device plugins accelplane renders (where the GPU Operator owns
    the plugins it also owns dcgm-exporter). One DaemonSet per vendor: the exporters have no
    per-node configuration, they only need to run on every GPU node of that vendor."""
    if not monitoring_enabled(spec) or spec.monitoring.exporters != "accelplane":
        return []
    out: list[Placement] = []
    if plugin_enabled(spec, "nvidia"):
        pools = tuple(kubernetes_gpu_pools(spec, "nvidia"))
        if pools:
            tolerations = tuple(merged_tolerations(NVIDIA_BASE_TOLERATIONS, pools))
            out.append(Placement(DCGM_EXPORTER_NAME, pools, tolerations))
    if plugin_enabled(spec, "amd"):
        pools = tuple(kubernetes_gpu_pools(spec, "amd"))
        if pools:
            tolerations = tuple(merged_tolerations(AMD_BASE_TOLERATIONS, pools))
            selector = tuple(sorted(AMD_NODE_SELECTOR.items()))
            out.append(Placement(AMD_EXPORTER_NAME, pools, tolerations, selector))
    return out


def kubernetes_gpu_clusters(spec: Spec) -> list[FlinkCluster]:
    """Flink clusters whose GPU TaskManagers are Kubernetes pods (joined through pod labels)."""
    if not monitoring_enabled(spec) or not spec.has_platform("kubernetes"):
        return []
    return gpu_clusters(spec, ("kubernetes",))


def host_gpu_clusters(spec: Spec) -> list[FlinkCluster]:
    """Flink clusters whose GPU TaskManagers run on YARN/standalone hosts in coordination mode:
    the discovery script exports which of them holds which GPU (node-exporter textfile)."""
    if not monitoring_enabled(spec):
        return []
    return [c for c in gpu_clusters(spec, HOST_PLATFORMS) if c.coordination and spec.has_platform(c.platform)]


def exports_owner_metrics(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when ``cluster``'s discovery script writes the GPU-owner textfile metrics."""
    return any(c is cluster for c in host_gpu_clusters(spec))


def textfile_path(spec: Spec) -> str:
    """Absolute path of the GPU-owner metrics file on hosts."""
    return f"{spec.monitoring.textfile_directory.rstrip('/')}/{TEXTFILE_NAME}"


@dataclass(frozen=True)
class QueueCapability:
    """A queue whose GPU capability the near-capability alert watches."""

    name: str
    gpus: Decimal


def cluster_queues(spec: Spec) -> list[tuple[str, str]]:
    """``(flink cluster, queue)`` for every monitored GPU cluster that names a queue, by cluster."""
    clusters = [*kubernetes_gpu_clusters(spec), *host_gpu_clusters(spec)]
    return sorted((c.name, c.queue) for c in clusters if c.queue is not None)


def queue_capabilities(spec: Spec) -> list[QueueCapability]:
    """Queues of monitored GPU clusters with a GPU capability (every GPU-counting resource summed:
    whole GPUs, shared slices and MIG devices count one each, as the exporters count devices)."""
    used = {q for _, q in cluster_queues(spec)}
    out = []
    for name in sorted(used):
        queue = spec.queue(name)
        if queue is None:
            continue
        gpus = total_gpus(queue.capability)
        if gpus > 0:
            out.append(QueueCapability(name, gpus))
    return out
