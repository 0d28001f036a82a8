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
from accelplane.derive.dra import dra_pools
from accelplane.derive.gpu_resources import advertised_resources, is_shared
from accelplane.derive.node_selection import merged_tolerations
from accelplane.model import FlinkCluster, NodePool, Spec, is_gpu_resource

DCGM_EXPORTER_NAME = "dcgm-exporter"
DCGM_SHARED_EXPORTER_NAME = "dcgm-exporter-shared"
DCGM_DRA_EXPORTER_NAME = "dcgm-exporter-dra"
DCGM_EXPORTER_NAMES = (DCGM_EXPORTER_NAME, DCGM_SHARED_EXPORTER_NAME, DCGM_DRA_EXPORTER_NAME)
AMD_EXPORTER_NAME = "amd-device-metrics-exporter"
DCGM_BUILTIN_RESOURCES = ("nvidia.com/gpu",)
"""Resource names dcgm-exporter maps to pods without being told (with every ``nvidia.com/mig-*``):
``internal/pkg/transformation/kubernetes.go`` ``iterateGPUDevices``/``toDeviceToPod`` at
4.3.1-4.4.0 (694914191e72d0c8587ba27a41248049d7fe9494) lines 68-79 and 575-588; any other name only
when listed in ``NVIDIA_RESOURCE_NAMES`` (``pkg/cmd/app.go`` 275-280)."""
DCGM_MIG_PREFIX = "nvidia.com/mig-"
TEXTFILE_NAME = "accelplane-gpu-owners.prom"
"""File the discovery script writes into node-exporter's textfile-collector directory."""
HOST_PLATFORMS = ("yarn", "standalone")
POD_LABEL_KEYS = ("accelplane.io/cluster", "accelplane.io/component", "accelplane.io/flink-cluster")
"""The TaskManager pod labels the rules join on (``kube_pod_labels{label_accelplane_io_*}``)."""


def monitoring_enabled(spec: Spec) -> bool:
    """True when the spec asks for GPU usage monitoring."""
    return spec.monitoring.enabled


def _dcgm_groups(spec: Spec) -> list[tuple[str, tuple[NodePool, ...]]]:
    """NVIDIA pools by the dcgm-exporter configuration their GPUs need (non-empty groups only):
    whole GPUs and MIG devices of the device plugin (``dcgm-exporter``), replicated GPUs
    (time-slicing or MPS, ``dcgm-exporter-shared``), DRA claims (``dcgm-exporter-dra``). Each group
    gets its own DaemonSet: the settings a group needs change what the exporter emits for every GPU
    of its nodes (`dcgm_environment`)."""
    plugin = list(kubernetes_gpu_pools(spec, "nvidia")) if plugin_enabled(spec, "nvidia") else []
    dra = [p for p in dra_pools(spec) if p.gpu is not None and p.gpu.vendor == "nvidia"]
    groups = [
        (DCGM_EXPORTER_NAME, tuple(p for p in plugin if not is_shared(p))),
        (DCGM_SHARED_EXPORTER_NAME, tuple(p for p in plugin if is_shared(p))),
        (DCGM_DRA_EXPORTER_NAME, tuple(dra)),
    ]
    return [(name, pools) for name, pools in groups if pools]


def exporter_placements(spec: Spec) -> list[Placement]:
    """The GPU metrics exporter DaemonSets accelplane renders: only with ``exporters: accelplane``.
    dcgm-exporter for the NVIDIA pools whose device plugins accelplane renders (where the GPU
    Operator owns the plugins it also owns dcgm-exporter), split by what the pools' GPUs need
    (`_dcgm_groups`), and for the NVIDIA DRA pools (no device plugin there; the DRA driver's chart
    runs no exporter); AMD's exporter for the AMD device-plugin pools. The exporters have no
    per-node configuration beyond that, they only need to run on every GPU node of their pools."""
    if not monitoring_enabled(spec) or spec.monitoring.exporters != "accelplane":
        return []
    out: list[Placement] = []
    for name, pools in _dcgm_groups(spec):
        out.append(Placement(name, pools, tuple(merged_tolerations(NVIDIA_BASE_TOLERATIONS, pools))))
    if plugin_enabled(spec, "amd"):
        pools = tuple(kubernetes_gpu_pools(spec, "amd"))
        if pools:
            tolerations = tuple(merged_tolerations(AMD_BASE_TOLERATIONS, pools))
            selector = tuple(sorted(AMD_NODE_SELECTOR.items()))
            out.append(Placement(AMD_EXPORTER_NAME, pools, tolerations, selector))
    return out


def dcgm_resource_names(pools: tuple[NodePool, ...]) -> list[str]:
    """Resource names the pools' device plugins advertise that dcgm-exporter only maps to pods
    when named in ``NVIDIA_RESOURCE_NAMES`` (the ``.shared`` names of renamed replicas, incl.
    ``nvidia.com/gpu.shared``; ``nvidia.com/mig-*`` names, renamed or not, match its MIG prefix)."""
    names = {n for p in pools for n in advertised_resources(p)}
    return sorted(n for n in names if n not in DCGM_BUILTIN_RESOURCES and not n.startswith(DCGM_MIG_PREFIX))


def dcgm_environment(pools: tuple[NodePool, ...]) -> list[tuple[str, str]]:
    """The dcgm-exporter settings (environment variables, in this order) that make it label each
    device of these pools' GPUs with the pod holding it (the series shapes are in
    docs/monitoring.md; lines of dcgm-exporter 4.3.1-4.4.0, 694914191e72d0c8587ba27a41248049d7fe9494):

    * ``DCGM_EXPORTER_KUBERNETES=true``: the kubelet pod-resources mapping at all;
    * replicated GPUs (time-slicing or MPS: device IDs ``<uuid>::<replica>``):
      ``KUBERNETES_VIRTUAL_GPUS=true`` (``pkg/cmd/app.go`` 281-286), else every replica of a GPU
      maps to the same UUID and the last container listed wins (``kubernetes.go`` 689-711); with it
      one series per (GPU, container, replica), labelled ``vgpu``, and none for a GPU nobody holds
      (``kubernetes.go`` 195-239, 465-513);
    * renamed replicas (``nvidia.com/gpu.shared``): ``NVIDIA_RESOURCE_NAMES`` (`dcgm_resource_names`),
      else their devices are skipped as "non-NVIDIA" (``kubernetes.go`` 68-79, 575-588);
    * DRA claims: ``KUBERNETES_ENABLE_DRA=true`` (``pkg/cmd/app.go`` 311-316; from 4.3.1-4.4.0 on,
      absent in 4.2.3-4.1.3), which attributes devices of ``gpu.nvidia.com`` claims and drops the
      series of every other device (``kubernetes.go`` 274-325, 375-456); it reads ResourceSlices from
      the API server (``dra.go`` 36-43, ``kubernetes.go`` 88-118), so it needs a service account.
    """
    env = [("DCGM_EXPORTER_KUBERNETES", "true")]
    if any(is_shared(p) for p in pools):
        names = dcgm_resource_names(pools)
        if names:
            env.append(("NVIDIA_RESOURCE_NAMES", ",".join(names)))
        env.append(("KUBERNETES_VIRTUAL_GPUS", "true"))
    if any(p.gpu is not None and p.gpu.allocation == "dra" for p in pools):
        env.append(("KUBERNETES_ENABLE_DRA", "true"))
    return env


def kube_state_metrics_allowlist() -> str:
    """kube-state-metrics' ``--metric-labels-allowlist`` entry that exports accelplane's pod labels
    (without it ``kube_pod_labels`` carries no ``label_*``: kube-state-metrics
    ``internal/store/pod.go`` ``createPodLabelsGenerator``)."""
    return f"pods=[{','.join(POD_LABEL_KEYS)}]"


@dataclass(frozen=True)
class DcgmSetting:
    """What dcgm-exporter must be told on some pools' nodes (docs/monitoring.md, values snippet)."""

    pools: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


def dcgm_settings(spec: Spec) -> list[DcgmSetting]:
    """Per group of NVIDIA Kubernetes pools (`_dcgm_groups`, whoever runs the exporter) the
    settings dcgm-exporter needs there; what the monitoring values snippet and docs print."""
    if not monitoring_enabled(spec) or not spec.has_platform("kubernetes"):
        return []
    nvidia = tuple(
        p for p in spec.node_pools if p.platform == "kubernetes" and p.gpu is not None and p.gpu.vendor == "nvidia"
    )
    groups = [
        tuple(p for p in nvidia if p.gpu is not None and p.gpu.allocation == "devicePlugin" and not is_shared(p)),
        tuple(p for p in nvidia if is_shared(p)),
        tuple(p for p in nvidia if p.gpu is not None and p.gpu.allocation == "dra"),
    ]
    return [DcgmSetting(tuple(p.name for p in g), tuple(dcgm_environment(g))) for g in groups if g]


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


def host_textfile_directory(spec: Spec) -> str:
    """node-exporter's textfile-collector directory on the GPU hosts, which ``node/provision.sh``
    prepares for the discovery script's owner metrics (root-owned, the Flink group writes), or
    ``""`` when no host cluster writes them."""
    if not host_gpu_clusters(spec):
        return ""
    return spec.monitoring.textfile_directory.rstrip("/") or "/"


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


def _physical_divisor(spec: Spec, resource: str) -> int:
    """How many units of ``resource`` make one device as the exporters count it: the replicas of
    the shared pools advertising it (time-slicing/MPS slices of one GPU), 1 for whole GPUs, MIG
    devices and DRA devices. Where pools advertise the name with different replica counts (an
    unshared pool and an unrenamed shared one both advertise ``nvidia.com/gpu``) the name says
    nothing about the device and counts one each."""
    replicas = {
        (p.gpu.sharing.replicas if is_shared(p) else 1)
        for p in spec.node_pools
        if p.platform == "kubernetes" and p.gpu is not None and resource in advertised_resources(p)
    }
    return replicas.pop() if len(replicas) == 1 else 1


def queue_capabilities(spec: Spec) -> list[QueueCapability]:
    """Queues of monitored GPU clusters with a GPU capability, in the exporters' unit: physical
    devices (a whole GPU, a MIG device, a DRA device), so a shared resource's slices count
    ``1 / replicas`` each (`_physical_divisor`): the exporters report a GPU's metrics per GPU, never
    per slice, and the rules count the distinct devices a queue's TaskManagers hold."""
    used = {q for _, q in cluster_queues(spec)}
    out = []
    for name in sorted(used):
        queue = spec.queue(name)
        if queue is None:
            continue
        gpus = sum(
            (q.value / _physical_divisor(spec, n) for n, q in queue.capability.items if is_gpu_resource(n)),
            Decimal(0),
        )
        if gpus > 0:
            out.append(QueueCapability(name, gpus))
    return out
