"""GPU resource names: what each pool's device plugin advertises and what Flink requests.

Written once and shared by the device-plugin builders (what is advertised), the Flink builders
(``external-resource.gpu.kubernetes.config-key``, PodGroup ``minResources``, pod templates) and
the YARN builders (``yarn.io/gpu``).

NVIDIA rules (k8s-device-plugin ``api/config/v1``):
* MIG ``none``: ``nvidia.com/gpu``, ``perNode`` per node.
* MIG ``single``: every slice is advertised as ``nvidia.com/gpu``: ``perNode × slices per GPU``.
* MIG ``mixed``: one resource per profile, ``nvidia.com/mig-<profile>``: ``perNode × count``; the
  plugin turns a ``+`` of the profile into ``.`` (``1g.10gb+me`` → ``nvidia.com/mig-1g.10gb.me``,
  ``internal/rm/rm.go`` ``AddDefaultResourcesToConfig``).
* Sharing (time-slicing or MPS) with ``replicas`` R multiplies each count by R; with
  ``renameByDefault`` the names get a ``.shared`` suffix.
AMD: ``amd.com/gpu``, ``perNode`` per node.

GPU Feature Discovery's ``nvidia.com/gpu.product`` label of a pool's nodes (`gfd_product_label_for_pool`)
follows the same pool settings: MIG ``single`` appends ``-MIG-<profile>``, unrenamed sharing ``-SHARED``.
"""

from __future__ import annotations

from accelplane.gpu_names import Match, lookup
from accelplane.model import VENDOR_RESOURCE, FlinkCluster, NodePool, Spec
from accelplane.names import gfd_product_label, normalize_gpu_model

YARN_GPU = "yarn.io/gpu"
SHARED_SUFFIX = ".shared"


def mig_resource_name(profile: str) -> str:
    """Resource the NVIDIA plugin advertises for a MIG profile under ``mixed``."""
    return f"nvidia.com/mig-{profile}".replace("+", ".")


def unshared_resources(pool: NodePool) -> dict[str, int]:
    """Resource name → count per node before sharing is applied (the names time-slicing and MPS
    replicate in the plugin config)."""
    gpu = pool.gpu
    if gpu is None or (pool.platform == "kubernetes" and gpu.allocation == "dra"):
        return {}  # a DRA pool's GPUs are claimed as devices, never advertised as extended resources
    if gpu.vendor == "amd":
        return {VENDOR_RESOURCE["amd"]: gpu.per_node}
    mig = gpu.mig
    if mig.strategy == "mixed":
        counts = {mig_resource_name(profile): gpu.per_node * n for profile, n in mig.devices}
    elif mig.strategy == "single":
        counts = {
            "nvidia.com/gpu": gpu.per_node * sum(n for _, n in mig.devices) if mig.devices else gpu.per_node
        }
    else:
        counts = {"nvidia.com/gpu": gpu.per_node}
    return dict(sorted(counts.items()))


def is_shared(pool: NodePool) -> bool:
    """True when the pool's NVIDIA plugin replicates its GPUs (time-slicing or MPS); never on a
    DRA pool, where each claim gets whole devices and sharing is the claim's own configuration."""
    return (
        pool.gpu is not None
        and pool.gpu.vendor == "nvidia"
        and pool.gpu.sharing.strategy != "none"
        and pool.gpu.allocation == "devicePlugin"
    )


def advertised_resources(pool: NodePool) -> dict[str, int]:
    """Resource name → allocatable count per node that the pool's device plugin advertises."""
    counts = unshared_resources(pool)
    if pool.gpu is None or not is_shared(pool):
        return counts
    sharing = pool.gpu.sharing
    suffix = SHARED_SUFFIX if sharing.rename_by_default is True else ""
    return dict(sorted((f"{name}{suffix}", n * sharing.replicas) for name, n in counts.items()))


def unrenamed_slices(pool: NodePool) -> dict[str, int]:
    """Resource name → per-node count of shared slices advertised under a dedicated GPU name
    (sharing with ``renameByDefault: false``): what queues and requests would count as whole GPUs.
    Empty for unshared pools and for pools whose slices are renamed to ``<resource>.shared``."""
    if pool.gpu is None or not is_shared(pool) or pool.gpu.sharing.rename_by_default is True:
        return {}
    return advertised_resources(pool)


def max_request_per_container(pool: NodePool, resource: str) -> int | None:
    """Largest amount of ``resource`` one container may request on this pool's nodes, where the
    plugin limits it below the node's count, else None.

    MPS always refuses a request for more than one replica; time-slicing only with
    ``failRequestsGreaterThanOne`` (k8s-device-plugin internal/rm/rm.go ``ValidateRequest``).
    """
    if pool.gpu is None or not is_shared(pool) or resource not in advertised_resources(pool):
        return None
    sharing = pool.gpu.sharing
    if sharing.strategy == "mps" or sharing.fail_requests_greater_than_one:
        return 1
    return None


def gfd_product_label_for_pool(pool: NodePool) -> str | None:
    """Value of ``nvidia.com/gpu.product`` that GPU Feature Discovery puts on the pool's nodes
    (None without an NVIDIA model).

    MIG ``single``: every slice is ``nvidia.com/gpu`` and GFD labels ``<model>-MIG-<profile>``;
    MIG ``mixed``: ``nvidia.com/gpu.product`` describes the full GPU (no sharing suffix, the slices
    get ``nvidia.com/mig-<profile>.product``); sharing without ``renameByDefault`` appends
    ``-SHARED`` (k8s-device-plugin internal/lm/mig-strategy.go and resource.go).
    """
    gpu = pool.gpu
    if gpu is None or gpu.vendor != "nvidia" or not gpu.model:
        return None
    shared = is_shared(pool) and gpu.sharing.rename_by_default is not True
    if gpu.mig.strategy == "single" and len(gpu.mig.devices) == 1:
        return gfd_product_label(gpu.model, mig_profile=gpu.mig.devices[0][0], shared=shared)
    if gpu.mig.strategy == "mixed":
        return gfd_product_label(gpu.model)
    return gfd_product_label(gpu.model, shared=shared)


def primary_resource(pool: NodePool) -> str | None:
    """The one resource a workload on this pool requests by default, or None when ambiguous
    (MIG ``mixed`` with several profiles: the Flink cluster must name ``gpu.resource``)."""
    names = list(advertised_resources(pool))
    return names[0] if len(names) == 1 else None


def _platform_gpu_pools(spec: Spec, cluster: FlinkCluster) -> list[NodePool]:
    """GPU pools of the cluster's platform with its vendor (any, when it names none)."""
    gpu = cluster.task_manager.gpu
    assert gpu is not None
    return [
        p
        for p in spec.node_pools
        if p.gpu is not None and p.platform == cluster.platform and gpu.vendor in (None, p.gpu.vendor)
    ]


def stands_for(model: str, pool: NodePool) -> bool:
    """True when ``model`` is a market name or shorthand (GPU name table) of the pool's ``gpu.model``."""
    assert pool.gpu is not None
    if not pool.gpu.model:
        return False
    found = lookup(pool.gpu.vendor, model)
    key = normalize_gpu_model(pool.gpu.model)
    return found.match is Match.SHORTHAND and any(normalize_gpu_model(r.name) == key for r in found.rows)


def candidate_pools(spec: Spec, cluster: FlinkCluster) -> list[NodePool]:
    """Pools that may host the cluster's GPU TaskManagers: the named pool, else every GPU pool of
    the target's platform matching vendor and model (case, spaces, ``-`` and ``_`` ignored).

    When no pool matches a model that is a shorthand of pools' models (``L4`` for ``NVIDIA L4``),
    those pools: the spec is in error then (`pool_models_meant`, one did-you-mean finding), and
    every other check judges the cluster as if it had written the name it meant, so the one
    mistake gives no cascade of "no pool has these GPUs" findings."""
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0:
        return []
    if gpu.pool is not None:
        pool = spec.pool(gpu.pool)
        return [pool] if pool is not None else []
    pools = _platform_gpu_pools(spec, cluster)
    if gpu.model is None:
        return pools
    key = normalize_gpu_model(gpu.model)
    matching = [p for p in pools if p.gpu is not None and normalize_gpu_model(p.gpu.model or "") == key]
    return matching or [p for p in pools if stands_for(gpu.model, p)]


def pool_models_meant(spec: Spec, cluster: FlinkCluster) -> tuple[str, ...]:
    """The ``gpu.model`` of the target platform's GPU pools that a cluster's ``taskManager.gpu.model``
    stands for as a market name or shorthand by the GPU name table (``L4`` for a pool of ``NVIDIA L4``),
    sorted; empty when the model matches a pool as written, names none, or the cluster names its
    pool. Such a cluster is in error (checks.gpu_models reports it once, with the did-you-mean)."""
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.model is None or gpu.pool is not None:
        return ()
    key = normalize_gpu_model(gpu.model)
    # the candidates are the pools matching the model as written, else those it stands for
    return tuple(
        sorted(
            {
                p.gpu.model
                for p in candidate_pools(spec, cluster)
                if p.gpu is not None and p.gpu.model and normalize_gpu_model(p.gpu.model) != key
            }
        )
    )


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
    """YARN resource type the cluster's TaskManagers request (``external-resource.gpu.yarn.config-key``):
    always ``yarn.io/gpu`` (None without GPUs).

    ``yarn.io/gpu`` is the only type YARN's GPU plugin assigns and isolates devices for; a container
    that requests another type gets no GPU on a NodeManager running the plugin. TaskManagers are
    placed by GPU model with node labels instead (`accelplane.derive.yarn_labels`).
    """
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0:
        return None
    return YARN_GPU
