"""Which device-plugin DaemonSets exist and where each runs (pools, tolerations, node selector).

The builder (`accelplane.builders.device_plugins`) and the checks (`accelplane.checks.device_plugins`)
use this one list, so what is checked is what is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accelplane.derive.node_selection import merged_tolerations
from accelplane.model import NodePool, Spec

AMD_NODE_SELECTOR = {"kubernetes.io/arch": "amd64"}
NVIDIA_BASE_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)
AMD_BASE_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)
Vendor = Literal["nvidia", "amd"]


# --- which pools, which DaemonSets -------------------------------------------------------------


def kubernetes_gpu_pools(spec: Spec, vendor: Vendor) -> list[NodePool]:
    """Kubernetes node pools whose ``vendor`` GPUs a device plugin advertises, by name.

    DRA pools (``gpu.allocation: dra``) are left out: their vendor's DRA driver publishes the GPUs,
    and a device plugin on the same nodes would advertise them a second time (over-admission).
    """
    return [
        p
        for p in spec.node_pools
        if p.platform == "kubernetes"
        and p.gpu is not None
        and p.gpu.vendor == vendor
        and p.gpu.allocation == "devicePlugin"
    ]


def plugin_enabled(spec: Spec, vendor: Vendor) -> bool:
    """Whether accelplane renders ``vendor``'s device plugin: on Kubernetes clusters, by default when
    a pool of that vendor exists; ``enabled: false`` leaves it to someone else (e.g. GPU Operator)."""
    if not spec.has_platform("kubernetes"):
        return False
    settings = spec.device_plugins.nvidia if vendor == "nvidia" else spec.device_plugins.amd
    if settings.enabled is None:
        return bool(kubernetes_gpu_pools(spec, vendor))
    return settings.enabled


@dataclass(frozen=True)
class Placement:
    """Where one DaemonSet runs: the pools it admits and its tolerations."""

    name: str
    pools: tuple[NodePool, ...]
    tolerations: tuple[dict[str, str], ...]
    node_selector: tuple[tuple[str, str], ...] = ()


def nvidia_plugin_name(pool: NodePool) -> str:
    """Name of the NVIDIA device-plugin DaemonSet of a pool."""
    return f"nvidia-device-plugin-{pool.name}"


def gfd_name(pool: NodePool) -> str:
    """Name of the GPU Feature Discovery DaemonSet of a pool."""
    return f"gpu-feature-discovery-{pool.name}"


def mps_daemon_name(pool: NodePool) -> str:
    """Name of the MPS control daemon DaemonSet of a pool."""
    return f"nvidia-mps-control-daemon-{pool.name}"


AMD_PLUGIN_NAME = "amdgpu-device-plugin"
AMD_LABELLER_NAME = "amdgpu-node-labeller"


def placements(spec: Spec) -> list[Placement]:
    """Every device-plugin-family DaemonSet with the pools it admits (the builder and the checks
    use this one list, so what is checked is what is rendered)."""
    out: list[Placement] = []
    if plugin_enabled(spec, "nvidia"):
        for pool in kubernetes_gpu_pools(spec, "nvidia"):
            tolerations = tuple(merged_tolerations(NVIDIA_BASE_TOLERATIONS, [pool]))
            out.append(Placement(nvidia_plugin_name(pool), (pool,), tolerations))
            if spec.device_plugins.nvidia.gpu_feature_discovery:
                out.append(Placement(gfd_name(pool), (pool,), tolerations))
            if pool.gpu is not None and pool.gpu.sharing.strategy == "mps":
                out.append(Placement(mps_daemon_name(pool), (pool,), tolerations))
    if plugin_enabled(spec, "amd"):
        pools = tuple(kubernetes_gpu_pools(spec, "amd"))
        if pools:
            tolerations = tuple(merged_tolerations(AMD_BASE_TOLERATIONS, pools))
            selector = tuple(sorted(AMD_NODE_SELECTOR.items()))
            out.append(Placement(AMD_PLUGIN_NAME, pools, tolerations, selector))
            if spec.device_plugins.amd.labeller:
                out.append(Placement(AMD_LABELLER_NAME, pools, tolerations, selector))
    return out
