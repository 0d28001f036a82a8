"""The NVIDIA MIG manager's configuration, derived from each pool's ``gpu.mig`` setting.

The MIG manager (``k8s-mig-manager`` of NVIDIA/mig-parted, deployed by the GPU Operator) reads a
``config.yaml`` in nvidia-mig-parted's ``v1`` format — ``version: v1`` and a map ``mig-configs`` of
named layouts, each a list of ``{devices, mig-enabled, mig-devices}`` entries (mig-parted
``api/spec/v1/spec.go``) — and applies to each node the layout its ``nvidia.com/mig.config`` label
names. One layout per MIG pool, named after the pool, partitions every GPU of the pool's nodes
(``devices: all``) into exactly the profiles of ``gpu.mig.devices``; ``all-disabled`` (the GPU
Operator's default label value, ``migManager.config.default``) is always present.

So the one ``gpu.mig`` setting drives the device plugin's ``migStrategy``, GPU Feature Discovery,
the advertised resource names and the partitioning itself.
"""

from __future__ import annotations

from typing import Any

from accelplane.model import NodePool, Spec

MIG_CONFIG_LABEL = "nvidia.com/mig.config"
"""Node label the MIG manager acts on: the name of the layout (an entry of ``mig-configs``)."""
ALL_DISABLED = "all-disabled"
"""Layout that turns MIG off on every GPU; the GPU Operator's default ``nvidia.com/mig.config``."""
CONFIG_VERSION = "v1"
CONFIG_KEY = "config.yaml"
CONFIGMAP_NAME = "accelplane-mig-parted-config"
"""Fixed name (the GPU Operator's ClusterPolicy ``migManager.config.name`` must name it)."""


def mig_pools(spec: Spec) -> list[NodePool]:
    """Kubernetes NVIDIA pools whose GPUs are partitioned (``gpu.mig.strategy`` single or mixed)."""
    return [
        p
        for p in spec.node_pools
        if p.platform == "kubernetes"
        and p.gpu is not None
        and p.gpu.vendor == "nvidia"
        and p.gpu.mig.strategy != "none"
    ]


def mig_config_name(pool: NodePool) -> str | None:
    """The ``nvidia.com/mig.config`` value of a pool's nodes: the pool's name for a MIG pool, else
    None (pool names are DNS-1123 labels, so always valid label values)."""
    gpu = pool.gpu
    if pool.platform != "kubernetes" or gpu is None or gpu.vendor != "nvidia" or gpu.mig.strategy == "none":
        return None
    return pool.name


def mig_node_labels(pool: NodePool) -> dict[str, str]:
    """Labels the MIG manager needs on the pool's nodes (empty for pools without MIG)."""
    name = mig_config_name(pool)
    return {MIG_CONFIG_LABEL: name} if name is not None else {}


def mig_parted_config(spec: Spec) -> dict[str, Any] | None:
    """The mig-parted ``v1`` document for the spec's MIG pools, or None when no pool uses MIG.

    ``mig-devices`` maps each profile of ``gpu.mig.devices`` to its instances per GPU, as written
    (``1g.10gb``, ``1g.10gb+me``); layouts are sorted by name.
    """
    pools = mig_pools(spec)
    if not pools:
        return None
    configs: dict[str, Any] = {ALL_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for pool in sorted(pools, key=lambda p: p.name):
        assert pool.gpu is not None
        configs[pool.name] = [
            {"devices": "all", "mig-enabled": True, "mig-devices": dict(pool.gpu.mig.devices)}
        ]
    return {"version": CONFIG_VERSION, "mig-configs": dict(sorted(configs.items()))}
