"""Checks of ``monitoring`` (docs/monitoring.md): where the spec asks for GPU usage monitoring that
the stack cannot deliver as configured. All are warnings: the rendered objects are valid, but some
GPUs or TaskManagers would go unmonitored or alert for nothing."""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.device_plugin_placement import plugin_enabled
from accelplane.derive.discovery_paths import gpu_clusters
from accelplane.derive.monitoring import HOST_PLATFORMS, monitoring_enabled
from accelplane.errors import Problem
from accelplane.findings import WARNING, declare
from accelplane.model import Spec

EXPORTERS_OWNED_ELSEWHERE = declare(
    "AP7001",
    WARNING,
    "monitoring.exporters is accelplane, but another installation owns a vendor's device plugins",
    fix="set monitoring.exporters: external and let that installation (GPU Operator) run and scrape the exporter",
)
HOST_CLUSTER_WITHOUT_OWNERS = declare(
    "AP7002",
    WARNING,
    "a YARN/standalone GPU cluster without coordination mode exports no GPU owners",
    fix="set discovery.coordination: true on the Flink cluster",
)
DRA_POOL_WITHOUT_EXPORTER = declare(
    "AP7003",
    WARNING,
    "monitoring.exporters is accelplane, but AMD DRA pools get no GPU exporter (one finding naming them all)",
    fix="run AMD's device-metrics-exporter (v1.4.1 or later) on those pools with the AMD DRA driver's installation "
    "and set monitoring.exporters: external",
)


def check(spec: Spec) -> Iterator[Problem]:
    """Monitoring problems (nothing unless ``monitoring.enabled``)."""
    if not monitoring_enabled(spec):
        return
    kubernetes_pools = [p for p in spec.node_pools if p.platform == "kubernetes" and p.gpu is not None]
    if spec.monitoring.exporters == "accelplane" and spec.has_platform("kubernetes"):
        for vendor in sorted({p.gpu.vendor for p in kubernetes_pools if p.gpu is not None}):
            pools = [p for p in kubernetes_pools if p.gpu is not None and p.gpu.vendor == vendor]
            plugin_pools = [p for p in pools if p.gpu is not None and p.gpu.allocation == "devicePlugin"]
            if plugin_pools and not plugin_enabled(spec, vendor):
                yield Problem(
                    ("monitoring", "exporters"),
                    f"accelplane renders no {vendor} device plugin (devicePlugins.{vendor}.enabled: false), so it "
                    f"renders no {vendor} GPU exporter either and pools {', '.join(p.name for p in plugin_pools)} go "
                    "unmonitored; set monitoring.exporters: external and let the installation that runs the "
                    "device plugin (GPU Operator) run and scrape its exporter",
                    EXPORTERS_OWNED_ELSEWHERE,
                )
        # one root cause (accelplane renders AMD's exporter only next to its device plugin: v1.4.0 maps no
        # DRA claims to pods, v1.4.1 does: pkg/exporter/scheduler/k8s.go 93 at v1.4.0, 119-124 at v1.4.1 e2a70188), one finding for
        # every AMD DRA pool; NVIDIA DRA pools get dcgm-exporter with KUBERNETES_ENABLE_DRA
        dra_pools = [
            p.name
            for p in kubernetes_pools
            if p.gpu is not None and p.gpu.allocation == "dra" and p.gpu.vendor == "amd"
        ]
        if dra_pools:
            plural = len(dra_pools) > 1
            yield Problem(
                ("monitoring", "exporters"),
                f"monitoring.exporters is accelplane, but accelplane renders AMD's GPU exporter only with its device "
                f"plugin, and AMD pool{'s' if plural else ''} {', '.join(dra_pools)} hand{'' if plural else 's'} out "
                "GPUs through DRA: their TaskManagers would fire AccelplaneGpuTaskManagerWithoutMetrics; run AMD's "
                "device-metrics-exporter v1.4.1 or later (the first that maps DRA claims to pods) there with the AMD "
                "DRA driver's installation and set monitoring.exporters: external",
                DRA_POOL_WITHOUT_EXPORTER,
            )
    for cluster in gpu_clusters(spec, HOST_PLATFORMS):
        if not cluster.coordination:
            yield Problem(
                cluster.field_path("discovery", "coordination"),
                f"Flink cluster {cluster.name} runs GPU TaskManagers on hosts without coordination mode, so the "
                "discovery script records no GPU owners and its GPUs appear in no per-cluster metric; set "
                "discovery.coordination: true",
                HOST_CLUSTER_WITHOUT_OWNERS,
            )
