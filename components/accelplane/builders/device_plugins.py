"""GPU device-plugin DaemonSets derived from the Kubernetes node pools: composes the NVIDIA part
(`accelplane.builders.nvidia_device_plugin`) and the AMD part (`accelplane.builders.amd_device_plugin`),
which share `accelplane.builders.device_plugin_daemonset`.

NVIDIA (upstream ``deployments/static/nvidia-device-plugin.yml``, k8s-device-plugin v0.20.0):
* one device-plugin DaemonSet **per NVIDIA pool**, ``nvidia-device-plugin-<pool>``, because the
  plugin config (MIG strategy, time-slicing/MPS, replicas) is per node and pools differ. A pool's
  DaemonSet admits exactly the nodes carrying ALL of the pool's labels (node affinity, never NFD
  labels) and tolerates the pool's taints on top of upstream's ``nvidia.com/gpu`` toleration.
  Per-pool DaemonSets replace upstream's map of named configs selected by the node label
  ``nvidia.com/device-plugin.config`` (and its config-manager sidecar): nothing has to label nodes
  and a pool's config can never be applied to another pool's nodes.
* when the pool needs a config (MIG strategy other than ``none``, sharing, or a non-default
  ``deviceListStrategy``) an immutable ConfigMap ``nvidia-device-plugin-<pool>-<hash>`` holding the
  ``api/config/v1`` file, mounted read-only and named by ``CONFIG_FILE``. The content hash in the
  name rolls the DaemonSet when the config changes (the static plugin reads it only at start).
* ``gpu-feature-discovery-<pool>`` (upstream ``gpu-feature-discovery-daemonset*.yaml``) with the
  pool's ``MIG_STRATEGY`` and config, so ``nvidia.com/gpu.product`` exists for model affinity.
* for MPS pools, the MPS control daemon ``nvidia-mps-control-daemon-<pool>`` (upstream Helm chart
  ``daemonset-mps-control-daemon.yml``), without which an MPS plugin never serves a GPU.

AMD (upstream ``k8s-ds-amdgpu-dp.yaml``, ROCm k8s-device-plugin v1.31.0.10): one DaemonSet for all
AMD pools (the plugin has no per-node config), with a pinned tag, the ``amd.com/gpu`` and pool
tolerations, and the optional node labeller with upstream's least-privilege RBAC.
"""

from __future__ import annotations

from accelplane.artifacts import Bundle
from accelplane.builders.amd_device_plugin import amd_objects
from accelplane.builders.device_plugin_daemonset import FAMILY
from accelplane.builders.nvidia_device_plugin import nvidia_objects
from accelplane.derive.device_plugin_placement import (
    AMD_PLUGIN_NAME,
    kubernetes_gpu_pools,
    placements,
    plugin_enabled,
)
from accelplane.model import Spec

__all__ = ["FAMILY", "build"]


def build(spec: Spec) -> Bundle:
    """Device-plugin objects for every Kubernetes GPU pool (nothing on clusters without Kubernetes)."""
    bundle = Bundle()
    by_name = {p.name: p for p in placements(spec)}
    if plugin_enabled(spec, "nvidia"):
        for pool in kubernetes_gpu_pools(spec, "nvidia"):
            bundle.objects.extend(nvidia_objects(spec, pool, by_name))
    if AMD_PLUGIN_NAME in by_name:
        bundle.objects.extend(amd_objects(spec, by_name))
    return bundle
