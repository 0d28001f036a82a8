"""Whether one Flink process fits on one node: what it requests there and which pools may run it.

A TaskManager or JobManager is one pod (Kubernetes), one container (YARN) or one process on a host
(standalone) and cannot span nodes, so its CPU and memory must fit a single node's allocatable
(``nodePools[].cpu`` / ``memory``; on YARN what the NodeManager offers containers, which is what
accelplane renders as ``yarn.nodemanager.resource.memory-mb`` / ``cpu-vcores``, or Hadoop's
default where the pool does not say: `yarn_nodemanager_offer`). What it requests on a node:

* Kubernetes: the pod's effective request as the scheduler counts it (``resourcehelper.PodRequests``):
  per resource the larger of the largest init container and the sum of the app containers. The app
  container is Flink's main container (``cpu``, ``memory`` in whole MiB); GPU TaskManagers also run
  accelplane's init containers (`INIT_CONTAINER_REQUESTS`), which are small but count where the main
  container asks for less;
* YARN: the container Flink requests (``memory`` in whole MiB, ``cpu`` vcores);
* standalone: the TaskManager process's memory (``taskmanager.memory.process.size``) times the
  TaskManagers the ``workers`` file puts on the host; CPU is not reserved there (Flink's standalone
  cluster does not enforce ``taskmanager.cpu.cores``), so too many cores is a warning.

Which nodes: GPU TaskManagers run on their candidate pools (`accelplane.derive.gpu_resources`);
other processes on Kubernetes on pools whose nodes they tolerate (untainted pools), on YARN on the
partition they request (the ApplicationMaster's ``yarn.application.node-label``, else the default
partition), on standalone hosts nowhere accelplane knows (the JobManager host is not a pool).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from accelplane.derive.cluster_facts import standalone_workers
from accelplane.derive.flink_keys import mebibytes
from accelplane.derive.gpu_resources import candidate_pools
from accelplane.derive.yarn_labels import application_label, labels_enabled, pool_label
from accelplane.model import FlinkCluster, NodePool, ProcessResources, Spec
from accelplane.quantity import Quantity, parse_quantity

Role = Literal["jobManager", "taskManager"]
Resource = Literal["cpu", "memory"]
ROLES: tuple[Role, ...] = ("jobManager", "taskManager")
RESOURCES: tuple[Resource, ...] = ("cpu", "memory")

COORDINATION_INIT_REQUESTS = {"cpu": "10m", "memory": "16Mi"}
"""Requests of the init container that hands the coordination directory to the Flink uid."""
PREFLIGHT_INIT_REQUESTS = {"cpu": "100m", "memory": "64Mi"}
"""Requests of the GPU preflight init container."""


def _process(cluster: FlinkCluster, role: Role) -> ProcessResources:
    tm = cluster.task_manager
    return cluster.job_manager if role == "jobManager" else ProcessResources(tm.cpu, tm.memory)


def init_container_requests(cluster: FlinkCluster, role: Role) -> list[dict[str, Decimal]]:
    """CPU (cores) and memory (bytes) of each init container accelplane puts in the role's pod."""
    if role != "taskManager" or not cluster.uses_gpus:
        return []
    init = [COORDINATION_INIT_REQUESTS] if cluster.coordination else []
    init.append(PREFLIGHT_INIT_REQUESTS)
    return [{k: parse_quantity(v) for k, v in c.items()} for c in init]


def app_request(cluster: FlinkCluster, role: Role) -> dict[Resource, Decimal]:
    """CPU cores and memory bytes of the role's Flink process as Flink requests them (memory in
    whole MiB); on Kubernetes the pod's only app container (accelplane renders no sidecars)."""
    p = _process(cluster, role)
    return {"cpu": p.cpu.value, "memory": Decimal(mebibytes(p.memory) * 2**20)}


def node_request(cluster: FlinkCluster, role: Role) -> dict[Resource, Decimal]:
    """What one process of the role needs on its node: cpu cores and memory bytes (Kubernetes: the
    pod's effective request, max(largest init container, sum of app containers))."""
    app = app_request(cluster, role)
    if not cluster.on_kubernetes:
        return app
    out = dict(app)
    for init in init_container_requests(cluster, role):
        for res in RESOURCES:
            out[res] = max(out[res], init.get(res, Decimal(0)))
    return out


def _pool_groups(spec: Spec) -> dict[tuple[str, str | None], list[NodePool]]:
    """Pools by where a process without GPUs may run, computed once per spec (a scan per cluster
    would make the checks quadratic): ``("kubernetes", None)`` the untainted Kubernetes pools (all
    of them when every pool is tainted), ``("yarn", label)`` the YARN pools of a partition (every
    YARN pool under ``None`` without node labels)."""

    def make() -> dict[tuple[str, str | None], list[NodePool]]:
        groups: dict[tuple[str, str | None], list[NodePool]] = {}
        kubernetes = [p for p in spec.node_pools if p.platform == "kubernetes"]
        untainted = [p for p in kubernetes if not [t for t in p.taints if t.effect in _REPELLING]]
        groups[("kubernetes", None)] = untainted or kubernetes
        labelled = labels_enabled(spec)
        for p in spec.node_pools:
            if p.platform == "yarn":
                groups.setdefault(("yarn", pool_label(spec, p) if labelled else None), []).append(p)
        return groups

    return spec.memo.get_or_make("node_fit_pool_groups", spec, make)


_REPELLING = frozenset({"NoSchedule", "NoExecute"})


def host_pools(spec: Spec, cluster: FlinkCluster, role: Role) -> list[NodePool]:
    """Pools whose nodes may run one process of the role (empty where accelplane cannot tell)."""
    platform = cluster.platform
    if role == "taskManager" and cluster.uses_gpus:
        return [p for p in candidate_pools(spec, cluster) if p.platform == platform]
    if cluster.target == "standalone":
        return []  # the JobManager host is not a pool; TaskManagers without GPUs: no pool either
    label = application_label(cluster) if cluster.target == "yarn" and labels_enabled(spec) else None
    return _pool_groups(spec).get((platform, label), [])


@dataclass(frozen=True)
class Misfit:
    """One resource of one role that no node of its pools can hold."""

    role: Role
    resource: Resource
    need: Decimal
    """Per node: the process's request (times the TaskManagers a standalone host runs)."""
    per_process: Decimal
    largest: Decimal
    """The largest declared allocatable among the pools."""
    pools: tuple[tuple[str, Decimal], ...]
    """(pool, allocatable per node) of every pool that declares the resource."""
    host: str | None = None
    """The standalone host that gets too many TaskManagers (None elsewhere)."""
    count: int = 1
    host_allocatable: Decimal | None = None
    """That host's allocatable (the smallest of its pools')."""


HADOOP_NODEMANAGER_OFFER: dict[Resource, int] = {"memory": 8192, "cpu": 8}
"""What a NodeManager offers containers when its yarn-site.xml does not say (Hadoop 3.5's
yarn-default.xml: ``yarn.nodemanager.resource.memory-mb`` and ``cpu-vcores`` are -1, which with
``yarn.nodemanager.resource.detect-hardware-capabilities`` false, its default, means 8192 MiB and
8 vcores)."""


def yarn_nodemanager_offer(pool: NodePool) -> dict[Resource, tuple[int, bool]]:
    """Per resource, what the NodeManagers of a YARN pool offer containers (MiB, vcores) and whether
    the pool sets it: ``nodePools[].memory`` / ``cpu`` (its allocatable) rounded down to whole MiB
    and vcores, rendered into the pool's NodeManager yarn-site.xml, else Hadoop's default."""
    out: dict[Resource, tuple[int, bool]] = {}
    for res in RESOURCES:
        q = _pool_amount(pool, res)
        if q is None:
            out[res] = (HADOOP_NODEMANAGER_OFFER[res], False)
        else:
            out[res] = (int(q.value // 2**20) if res == "memory" else int(q.value), True)
    return out


def _pool_amount(pool: NodePool, res: Resource) -> Quantity | None:
    """``nodePools[].cpu`` or ``memory``: a node's allocatable as the spec states it."""
    return pool.cpu if res == "cpu" else pool.memory


def _allocatable(pool: NodePool, res: Resource) -> Decimal | None:
    """A node's allocatable of the resource as the scheduler counts it (None: the spec does not say
    and no default applies). YARN: what the NodeManager offers (`yarn_nodemanager_offer`)."""
    if pool.platform == "yarn":
        amount, _ = yarn_nodemanager_offer(pool)[res]
        return Decimal(amount * 2**20) if res == "memory" else Decimal(amount)
    q = _pool_amount(pool, res)
    return None if q is None else q.value


def _declared(
    spec: Spec, pools: list[NodePool], res: Resource
) -> tuple[tuple[tuple[str, Decimal], ...], Decimal | None]:
    """(pool, allocatable) of the pools that declare the resource (every YARN pool: its NodeManager's
    offer) and the largest (None: none do); remembered per pool list, so the shared groups of
    `_pool_groups` are scanned once per spec."""

    def make() -> tuple[tuple[tuple[str, Decimal], ...], Decimal | None]:
        declared = tuple((p.name, v) for p in pools if (v := _allocatable(p, res)) is not None)
        return declared, max((v for _, v in declared), default=None)

    return spec.memo.get_or_make(("node_fit_declared", res), pools, make)


def misfits(spec: Spec, cluster: FlinkCluster) -> list[Misfit]:
    """Every (role, resource) whose request exceeds the allocatable of every node that may run it.

    Pools that do not declare the resource are left out; a role with no such pool is not checked.
    On standalone hosts the TaskManagers the ``workers`` file puts on one host add up.
    """
    out: list[Misfit] = []
    for r in ROLES:
        pools = host_pools(spec, cluster, r)
        need = node_request(cluster, r)
        for res in RESOURCES:
            declared, largest = _declared(spec, pools, res)
            if largest is None:
                continue
            if cluster.target == "standalone" and standalone_workers(spec, cluster):
                found = _standalone_misfit(spec, cluster, r, res, need[res], declared)
                if found is not None:
                    out.append(found)
            elif need[res] > largest:
                out.append(Misfit(r, res, need[res], need[res], largest, declared))
    return out


def _standalone_misfit(
    spec: Spec,
    cluster: FlinkCluster,
    role: Role,
    res: Resource,
    per_process: Decimal,
    declared: tuple[tuple[str, Decimal], ...],
) -> Misfit | None:
    """The first standalone host whose TaskManagers together exceed its allocatable."""
    pools = host_pools(spec, cluster, role)
    allocatable: dict[str, Decimal] = {}
    for p in pools:
        v = _allocatable(p, res)
        if v is None:
            continue
        for h in p.hosts:
            allocatable[h] = min(allocatable.get(h, v), v)
    largest = max(v for _, v in declared)
    for host, count, _gpus in standalone_workers(spec, cluster):
        have = allocatable.get(host)
        if have is not None and count * per_process > have:
            return Misfit(role, res, count * per_process, per_process, largest, declared, host, count, have)
    return None


# --- YARN: the scheduler's maximum allocation ------------------------------------------------------

HADOOP_MAXIMUM_ALLOCATION = {"memory": 8192, "cpu": 4}
"""``yarn.scheduler.maximum-allocation-mb`` (MiB) and ``-vcores`` in Hadoop's yarn-default.xml: the
largest container the scheduler grants when the ResourceManager's yarn-site.xml sets neither."""
HADOOP_MINIMUM_ALLOCATION = {"memory": 1024, "cpu": 1}
"""``yarn.scheduler.minimum-allocation-mb`` / ``-vcores`` defaults: the ResourceManager refuses to
start with a maximum below them (``ResourceUtils``: "Invalid resource scheduler ... configuration")."""


def yarn_container_request(cluster: FlinkCluster, role: Role) -> dict[Resource, int]:
    """The container Flink asks YARN for a process of the role: memory in whole MiB (its process
    size, ``TaskExecutorProcessSpec.getTotalProcessMemorySize().getMebiBytes()``; the JobManager's
    ``jobmanager.memory.process.size`` likewise) and vcores (``yarn.containers.vcores`` /
    ``yarn.appmaster.vcores``, which accelplane sets to the whole cores of ``cpu``)."""
    p = _process(cluster, role)
    return {"memory": mebibytes(p.memory), "cpu": int(p.cpu.value)}


MaximumSource = Literal["spec", "nodes", "default"]


def yarn_maximum_allocation_sources(spec: Spec) -> dict[Resource, tuple[int, MaximumSource]]:
    """Per resource: the scheduler's largest container (memory in MiB, cpu in vcores) and where it
    comes from: ``spec`` (``yarn.maximumAllocation``), ``nodes`` (unset there, so accelplane renders
    the largest NodeManager offer of the YARN pools, what an administrator sets so that a container
    may use a whole NodeManager; at least Hadoop's minimum allocation, below which the
    ResourceManager does not start) or ``default`` (no YARN pool states the resource: Hadoop's
    yarn-default.xml applies). Computed once per spec."""

    def make() -> dict[Resource, tuple[int, MaximumSource]]:
        y = spec.yarn
        memory = y.maximum_allocation_memory if y is not None else None
        vcores = y.maximum_allocation_vcores if y is not None else None
        given: dict[Resource, int | None] = {
            "memory": mebibytes(memory) if memory is not None else None,
            "cpu": vcores,
        }
        offers = [yarn_nodemanager_offer(p) for p in spec.node_pools if p.platform == "yarn"]
        out: dict[Resource, tuple[int, MaximumSource]] = {}
        for res in RESOURCES:
            value = given[res]
            if value is not None:
                out[res] = (value, "spec")
            elif any(o[res][1] for o in offers):
                largest = max(o[res][0] for o in offers)
                out[res] = (max(largest, HADOOP_MINIMUM_ALLOCATION[res]), "nodes")
            else:
                out[res] = (HADOOP_MAXIMUM_ALLOCATION[res], "default")
        return out

    return spec.memo.get_or_make("yarn_maximum_allocation", spec, make)


def yarn_maximum_allocation(spec: Spec) -> dict[Resource, tuple[int, bool]]:
    """Per resource: (the scheduler's largest container, True when accelplane renders it into the
    ResourceManager's yarn-site.xml: set by the spec or derived from the NodeManagers), see
    `yarn_maximum_allocation_sources` (memory in MiB, cpu in vcores)."""
    return {res: (v, source != "default") for res, (v, source) in yarn_maximum_allocation_sources(spec).items()}


@dataclass(frozen=True)
class OverAllocation:
    """One resource of one role of a YARN cluster whose container exceeds the scheduler's maximum."""

    role: Role
    resource: Resource
    need: int
    """The container's request (MiB or vcores)."""
    maximum: int
    source: MaximumSource
    """Where the maximum comes from (`yarn_maximum_allocation_sources`)."""


def over_allocations(spec: Spec, cluster: FlinkCluster) -> list[OverAllocation]:
    """Every (role, resource) of a YARN Flink cluster whose container is larger than the scheduler's
    maximum allocation: Flink's YARN client refuses to deploy a JobManager or TaskManager whose
    memory exceeds it (``YarnClusterDescriptor``: "The cluster does not have the requested resources
    ..."), its ResourceManager driver never requests a TaskManager above it in memory or vcores, and
    the ResourceManager rejects an ApplicationMaster above it (``InvalidResourceRequestException``)."""
    if cluster.target != "yarn":
        return []
    maximum = yarn_maximum_allocation_sources(spec)
    out = []
    for role in ROLES:
        need = yarn_container_request(cluster, role)
        for res in RESOURCES:
            limit, source = maximum[res]
            if need[res] > limit:
                out.append(OverAllocation(role, res, need[res], limit, source))
    return out
