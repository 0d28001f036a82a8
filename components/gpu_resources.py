"""GPU resource names: what each pool's device plugin advertises and what Flink requests.

Written once and shared by the device-plugin builders (what is advertised), the Flink builders
(``external-resource.gpu.kubernetes.config-key``, PodGroup ``minResources``, pod templates) and
the YARN builders (``yarn.io/gpu`` or per-model types).

NVIDIA rules (k8s-device-plugin ``api/config/v1``):
* MIG ``none``: ``nvidia.com/gpu``, ``perNode`` per node.
* MIG ``single``: every slice is advertised as ``nvidia.com/gpu``: ``perNode × slices per GPU``.
* MIG ``mixed``: one resource per profile, ``nvidia.com/mig-<profile>``: ``perNode × count``.
* Sharing (time-slicing or MPS) with ``replicas`` R multiplies each count by R; with
  ``renameByDefault`` the names get a ``.shared`` suffix.
AMD: ``amd.com/gpu``, ``perNode`` per node.
"""

from __future__ import annotations

from components.model import VENDOR_RESOURCE, FlinkCluster, NodePool, Spec
from components.names import yarn_gpu_type_for_model

YARN_GPU = "yarn.io/gpu"
TARGET_PLATFORM = {
    "kubernetes": "kubernetes",
    "kubernetes-operator": "kubernetes",
    "yarn": "yarn",
    "standalone": "standalone",
}


def advertised_resources(pool: NodePool) -> dict[str, int]:
    """Resource name → allocatable count per node that the pool's device plugin advertises."""
    gpu = pool.gpu
    if gpu is None:
        return {}
    if gpu.vendor == "amd":
        return {VENDOR_RESOURCE["amd"]: gpu.per_node}
    mig = gpu.mig
    if mig.strategy == "mixed":
        counts = {f"nvidia.com/mig-{profile}": gpu.per_node * n for profile, n in mig.devices}
    elif mig.strategy == "single":
        counts = {
            "nvidia.com/gpu": gpu.per_node * sum(n for _, n in mig.devices) if mig.devices else gpu.per_node
        }
    else:
        counts = {"nvidia.com/gpu": gpu.per_node}
    sharing = gpu.sharing
    if sharing.strategy != "none":
        suffix = ".shared" if sharing.rename_by_default else ""
        counts = {f"{name}{suffix}": n * sharing.replicas for name, n in counts.items()}
    return dict(sorted(counts.items()))


def primary_resource(pool: NodePool) -> str | None:
    """The one resource a workload on this pool requests by default, or None when ambiguous
    (MIG ``mixed`` with several profiles: the Flink cluster must name ``gpu.resource``)."""
    names = list(advertised_resources(pool))
    return names[0] if len(names) == 1 else None


def target_platform(cluster: FlinkCluster) -> str:
    """Platform whose nodes run the cluster's TaskManagers."""
    return TARGET_PLATFORM[cluster.target]


def candidate_pools(spec: Spec, cluster: FlinkCluster) -> list[NodePool]:
    """Pools that may host the cluster's GPU TaskManagers: the named pool, else every GPU pool of
    the target's platform matching vendor and model."""
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0:
        return []
    if gpu.pool is not None:
        pool = spec.pool(gpu.pool)
        return [pool] if pool is not None else []
    platform = target_platform(cluster)
    pools = []
    for pool in spec.node_pools:
        if pool.gpu is None or pool.platform != platform:
            continue
        if gpu.vendor is not None and pool.gpu.vendor != gpu.vendor:
            continue
        if gpu.model is not None and (pool.gpu.model or "").lower() != gpu.model.lower():
            continue
        pools.append(pool)
    return pools


def cluster_vendor(spec: Spec, cluster: FlinkCluster) -> str:
    """GPU vendor of the cluster: explicit, else its pools' vendor, else nvidia."""
    gpu = cluster.task_manager.gpu
    if gpu is not None and gpu.vendor is not None:
        return gpu.vendor
    vendors = {p.gpu.vendor for p in candidate_pools(spec, cluster) if p.gpu is not None}
    return vendors.pop() if len(vendors) == 1 else "nvidia"


def kubernetes_gpu_resource(spec: Spec, cluster: FlinkCluster) -> str | None:
    """Resource name the cluster's TaskManagers request on Kubernetes (None without GPUs).

    Explicit ``gpu.resource`` wins; otherwise the primary resource of the candidate pools when
    they agree, else the vendor's plain resource (``nvidia.com/gpu`` / ``amd.com/gpu``).
    """
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0:
        return None
    if gpu.resource is not None:
        return gpu.resource
    names = {primary_resource(p) for p in candidate_pools(spec, cluster)}
    names.discard(None)
    if len(names) == 1:
        return names.pop()
    return VENDOR_RESOURCE[cluster_vendor(spec, cluster)]


def yarn_gpu_type(spec: Spec, cluster: FlinkCluster) -> str | None:
    """YARN resource type the cluster's TaskManagers request (``external-resource.gpu.yarn.config-key``).

    With ``yarn.perModelTypes`` and a GPU model (from the request or the single candidate pool's
    model) this is ``yarn.io/gpu-<normalised model>``; otherwise ``yarn.io/gpu``.
    """
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0:
        return None
    if spec.yarn is not None and spec.yarn.per_model_types:
        model = gpu.model
        if model is None:
            models = {
                p.gpu.model for p in candidate_pools(spec, cluster) if p.gpu is not None and p.gpu.model
            }
            model = models.pop() if len(models) == 1 else None
        if model is not None:
            return yarn_gpu_type_for_model(model)
    return YARN_GPU
