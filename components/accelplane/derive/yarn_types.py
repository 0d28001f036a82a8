"""YARN resource types and NodeManager amounts, derived once from the spec.

Used by the YARN builder (``resource-types.xml``, ``node-resources/<pool>.xml``, queue vectors)
and by `accelplane.checks.yarn`, so what is checked is exactly what is rendered.

Rules:

* Only node pools with ``platform: yarn`` are NodeManagers.
* ``yarn.io/gpu`` is declared when a YARN pool has GPUs or a YARN Flink cluster asks for them. It is
  the only type the NodeManager GPU plugin discovers and isolates (NVIDIA pools), and the only GPU
  type accelplane declares: per-model types (``yarn.io/gpu-<model>``) would take the GPU away from
  the plugin, so GPU models are told apart by node labels (`accelplane.derive.yarn_labels`).
* `accelplane.derive.gpu_resources.yarn_gpu_type` (``yarn.io/gpu``) is declared for every YARN Flink
  cluster with GPUs, so ``external-resource.gpu.yarn.config-key`` always names a known type.
* Every NodeManager file lists every declared GPU type (0 where the pool has none of it).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelplane.derive.gpu_resources import YARN_GPU, yarn_gpu_type
from accelplane.model import FlinkCluster, NodePool, Spec, YarnResourceType

YARN_FPGA = "yarn.io/fpga"
# Hadoop 3.5 ResourceInformation.SPECIAL_RESOURCES: countable, no unit; other units throw.
BUILTIN_TYPES = (YARN_GPU, YARN_FPGA)
# ResourceUtils.checkSpecialResources: "Attempt to re-define mandatory resource".
RESERVED_NAMES = ("memory", "memory-mb", "vcores")
NM_RESOURCE_PREFIX = "yarn.nodemanager.resource-type."
RESOURCE_TYPES_KEY = "yarn.resource-types"


@dataclass(frozen=True)
class ConfProperty:
    """One ``<property>`` of a Hadoop Configuration file (``description`` is informational)."""

    name: str
    value: str
    description: str = ""


def yarn_pools(spec: Spec) -> list[NodePool]:
    """Node pools whose nodes are YARN NodeManagers (spec order = name order)."""
    return [p for p in spec.node_pools if p.platform == "yarn"]


def yarn_gpu_clusters(spec: Spec) -> list[FlinkCluster]:
    """Flink clusters on YARN whose TaskManagers request GPUs."""
    return [
        c
        for c in spec.flink_clusters
        if c.target == "yarn" and c.uses_gpus
    ]


def gpus_per_node(pool: NodePool) -> int:
    """GPUs a NodeManager of ``pool`` offers: the explicit allowed-device list, else ``perNode``."""
    if pool.gpu is None:
        return 0
    if pool.gpu.allowed_devices:
        return len(pool.gpu.allowed_devices)
    return pool.gpu.per_node


def uses_gpu_plugin(pool: NodePool) -> bool:
    """True when the pool's NodeManagers run YARN's GPU plugin (NVIDIA only, nvidia-smi discovery)."""
    return pool.platform == "yarn" and pool.gpu is not None and pool.gpu.vendor == "nvidia"


def pool_types(spec: Spec, pool: NodePool) -> dict[str, int]:
    """GPU types a YARN pool provides with their per-node amounts (only types it has)."""
    count = gpus_per_node(pool)
    if pool.platform != "yarn" or count == 0:
        return {}
    return {YARN_GPU: count}


def flink_types(spec: Spec) -> dict[str, list[FlinkCluster]]:
    """YARN type → Flink clusters on YARN requesting it (``yarn_gpu_type``)."""
    out: dict[str, list[FlinkCluster]] = {}
    for c in yarn_gpu_clusters(spec):
        t = yarn_gpu_type(spec, c)
        if t is not None:
            out.setdefault(t, []).append(c)
    return dict(sorted(out.items()))


def needed_types(spec: Spec) -> list[str]:
    """Every GPU type the spec needs, sorted (the value of ``yarn.resource-types``); computed once
    per spec (the queue plan asks for every queue), so callers must not modify it."""

    def make() -> list[str]:
        names: set[str] = set(flink_types(spec))
        for pool in yarn_pools(spec):
            names.update(pool_types(spec, pool))
        return sorted(names)

    return spec.memo.get_or_make("yarn_needed_types", spec, make)


def container_gpu_request(spec: Spec, cluster: FlinkCluster) -> dict[str, int]:
    """YARN GPU resources one TaskManager container of a YARN Flink cluster requests:
    ``{yarn.io/gpu: amount}`` (empty without GPUs)."""
    gpu = cluster.task_manager.gpu
    t = yarn_gpu_type(spec, cluster)
    if gpu is None or t is None:
        return {}
    return {t: gpu.amount}


def type_bounds(spec: Spec) -> dict[str, YarnResourceType]:
    """``yarn.resourceTypes`` entries by name."""
    if spec.yarn is None:
        return {}
    return {r.name: r for r in spec.yarn.resource_types}


def node_amounts(spec: Spec, pool: NodePool) -> dict[str, int]:
    """``yarn.nodemanager.resource-type.<type>`` values of a pool: every needed type, 0 if absent."""
    own = pool_types(spec, pool)
    return {t: own.get(t, 0) for t in needed_types(spec)}


def providing_pools(spec: Spec, type_name: str) -> list[tuple[NodePool, int]]:
    """YARN pools whose NodeManagers offer ``type_name``, with the per-node amount."""
    out = []
    for pool in yarn_pools(spec):
        amount = pool_types(spec, pool).get(type_name, 0)
        if amount > 0:
            out.append((pool, amount))
    return out


@dataclass(frozen=True)
class TypeTotals:
    """Cluster-wide NodeManager resources computed from the YARN pools."""

    memory_mib: int
    vcores: int
    gpus: tuple[tuple[str, int], ...]
    complete: bool  # False when a YARN pool lacks cpu or memory

    def gpu(self, type_name: str) -> int:
        """Total of one GPU type."""
        return dict(self.gpus).get(type_name, 0)


MIB = 2**20


def cluster_totals(spec: Spec, pools: list[NodePool] | None = None) -> TypeTotals:
    """Sum of memory (MiB), vcores and every needed GPU type over ``pools`` (default: all YARN
    NodeManagers)."""
    memory = vcores = 0
    complete = True
    gpus = dict.fromkeys(needed_types(spec), 0)
    for pool in yarn_pools(spec) if pools is None else pools:
        if pool.cpu is None or pool.memory is None:
            complete = False
        else:
            memory += pool.nodes * int(pool.memory.value // MIB)
            vcores += pool.nodes * int(pool.cpu.value)
        for t, n in node_amounts(spec, pool).items():
            gpus[t] += pool.nodes * n
    return TypeTotals(memory, vcores, tuple(sorted(gpus.items())), complete)


def vendor_totals(spec: Spec, pools: list[NodePool] | None = None) -> dict[str, int]:
    """Total GPUs per vendor over ``pools`` (default: all YARN NodeManagers)."""
    out: dict[str, int] = {}
    for pool in yarn_pools(spec) if pools is None else pools:
        if pool.gpu is not None:
            out[pool.gpu.vendor] = out.get(pool.gpu.vendor, 0) + pool.nodes * gpus_per_node(pool)
    return out
