"""The capacity report as data: cluster GPUs per resource (what the device plugins or DRA pools
advertise × nodes, over the pools the queue tree schedules onto: Kubernetes pools when the cluster
runs Kubernetes, else YARN pools), each queue's own ``capability``/``deserved``/``guarantee`` and
its share of the cluster total, the GPUs each Flink cluster requests, and for clusters with GPU
slot groups what each group's slots take of its TaskManagers' GPUs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from accelplane.derive.dra import kubernetes_gpu_key, pool_gpu_resources
from accelplane.derive.gpu_resources import (
    candidate_pools,
    unrenamed_slices,
    yarn_gpu_type,
)
from accelplane.derive.kueue import cluster_queues, flavor_name, flavor_quotas, gpu_pools, pool_resources
from accelplane.derive.queues import queue_parent
from accelplane.derive.slot_groups import gpu_resources, group_resource, spans_models, standalone_hosts
from accelplane.derive.yarn_capacity import MEMORY, VCORES, plan_queues
from accelplane.derive.yarn_labels import label_pools, labels_enabled
from accelplane.derive.yarn_types import vendor_totals
from accelplane.errors import SpecError
from accelplane.model import NodePool, Queue, Spec, is_gpu_resource

REPORT_FORMATS = ("text", "markdown", "json")
FIELDS = ("capability", "deserved", "guarantee")


@dataclass(frozen=True)
class PoolGpus:
    """What one pool contributes to the cluster's GPUs."""

    pool: str
    platform: str
    nodes: int
    per_node: tuple[tuple[str, int], ...]
    slices_per_node: tuple[tuple[str, int], ...] = ()
    """Of ``per_node``: shared slices advertised under a dedicated name (``renameByDefault: false``)."""

    def total(self, resource: str) -> int:
        """GPUs of ``resource`` in the whole pool."""
        return dict(self.per_node).get(resource, 0) * self.nodes

    def slices(self, resource: str) -> int:
        """Of `total`: shared slices (not whole GPUs) in the whole pool."""
        return dict(self.slices_per_node).get(resource, 0) * self.nodes


@dataclass(frozen=True)
class QueueRow:
    """One queue × one GPU resource."""

    queue: str
    depth: int
    resource: str
    capability: Decimal | None
    deserved: Decimal | None
    guarantee: Decimal | None
    cluster: int
    parent: str | None = None
    flink: int = 0  # GPUs of this resource the Flink clusters in this queue's subtree request
    flink_clusters: tuple[str, ...] = ()

    def share(self, field: str) -> Decimal | None:
        """``field`` as a percentage of the cluster's GPUs of this resource."""
        value = getattr(self, field)
        if value is None or self.cluster == 0:
            return None
        return Decimal(value) * 100 / self.cluster


@dataclass(frozen=True)
class FlinkRow:
    """One Flink cluster's GPU footprint."""

    cluster: str
    target: str
    queue: str | None
    pools: tuple[str, ...]
    replicas: int
    gpus_per_tm: int
    resource: str | None
    queue_resource: str | None
    queue_capability: Decimal | None
    queue_deserved: Decimal | None

    @property
    def total(self) -> int:
        """GPUs of all TaskManagers together."""
        return self.replicas * self.gpus_per_tm


@dataclass(frozen=True)
class GroupRow:
    """One slot sharing group of a Flink cluster: its slots, what each slot asks for, and the GPUs
    all its slots take of the cluster's TaskManagers' GPUs of that resource."""

    cluster: str
    group: str
    slots: int
    cpu: Decimal
    task_heap: Decimal
    managed_memory: Decimal
    gpu_per_slot: Decimal
    resource: str | None
    model: str | None
    taskmanager_gpus: int
    """GPUs of ``resource`` all the cluster's TaskManagers offer (0 without a GPU resource)."""

    @property
    def gpu_total(self) -> Decimal:
        """GPUs all the group's slots take together."""
        return self.slots * self.gpu_per_slot


@dataclass(frozen=True)
class PartitionRow:
    """One queue in one YARN GPU-model partition (node label), as ``capacity-scheduler.xml`` sets it."""

    label: str
    model: str
    queue: str
    depth: int
    parent: str | None
    gpus: int
    """GPUs of the partition (all NodeManagers with the label)."""
    capacity_gpus: int | None
    maximum_gpus: int | None
    capacity_memory_mib: int | None
    capacity_vcores: int | None
    percent: Decimal | None = None
    """Percentage mode: capacity as a percentage of the parent's share of the partition."""

    def share(self) -> Decimal | None:
        """Guaranteed GPUs as a percentage of the partition's GPUs."""
        if self.capacity_gpus is None or self.gpus == 0:
            return None
        return Decimal(self.capacity_gpus) * 100 / self.gpus


@dataclass(frozen=True)
class FlavorRow:
    """One Kueue ClusterQueue's GPU quota in one ResourceFlavor (`accelplane.derive.kueue`)."""

    queue: str
    flavor: str
    resource: str
    nominal: Decimal
    borrowing_limit: Decimal | None
    """None: no limit (borrow whatever the cohort lends); off a cohort the queue cannot borrow."""
    lending_limit: Decimal | None
    pool_gpus: int
    """What the flavor's node pool advertises of ``resource`` (GPUs, MIG slices or shared replicas)."""


def flavor_rows(spec: Spec) -> tuple[FlavorRow, ...]:
    """GPU quota per ClusterQueue and GPU flavor on a Kueue cluster (empty elsewhere)."""
    if not spec.uses_kueue:
        return ()
    pools = {flavor_name(p): p for p in gpu_pools(spec)}
    rows = []
    for q in cluster_queues(spec):
        for fq in flavor_quotas(spec, q):
            pool = pools.get(fq.flavor)
            if pool is None or pool.gpu is None:
                continue
            units = pool_resources(pool)
            for name, nominal, borrowing, lending in fq.resources:
                if is_gpu_resource(name) and name in units:
                    rows.append(FlavorRow(q.name, fq.flavor, name, nominal, borrowing, lending, units[name]))
    return tuple(rows)


@dataclass(frozen=True)
class Report:
    """The capacity report of one spec."""

    cluster: str
    basis: str
    pools: tuple[PoolGpus, ...]
    resources: tuple[str, ...]
    queues: tuple[QueueRow, ...]
    flink: tuple[FlinkRow, ...]
    without_gpu_limits: tuple[str, ...] = ()
    groups: tuple[GroupRow, ...] = ()
    scheduler: str = ""
    """The Kubernetes scheduler enforcing the queues (``volcano``/``yunikorn``/``kueue``; empty off
    Kubernetes)."""
    warnings: tuple[SpecError, ...] = ()  # the spec's warnings, listed under the tables
    partitions: tuple[PartitionRow, ...] = ()
    """YARN with node labels: every queue's figures in every GPU-model partition it may use."""
    without_partition: tuple[str, ...] = ()
    """YARN with node labels: the queues that may use no GPU partition."""
    flavors: tuple[FlavorRow, ...] = ()
    """Kueue: every ClusterQueue's GPU quota per ResourceFlavor."""

    def cluster_total(self, resource: str) -> int:
        """Cluster GPUs of ``resource`` over the basis pools (as the scheduler counts them)."""
        return sum(p.total(resource) for p in self.pools)

    def slice_total(self, resource: str) -> int:
        """Of `cluster_total`: time-sliced/MPS slices advertised under the dedicated name."""
        return sum(p.slices(resource) for p in self.pools)


def _basis(spec: Spec) -> str:
    if spec.has_platform("kubernetes"):
        return "kubernetes"
    if spec.has_platform("yarn"):
        return "yarn"
    return ""


def _queue_order(spec: Spec) -> list[tuple[Queue, int]]:
    """Queues depth-first (parents before children, siblings by name) with their depth."""
    children: dict[str | None, list[Queue]] = {}
    for q in spec.queues:
        children.setdefault(queue_parent(q), []).append(q)
    out: list[tuple[Queue, int]] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for q in sorted(children.get(parent, []), key=lambda q: q.name):
            if q.name in seen:
                continue
            seen.add(q.name)
            out.append((q, depth))
            walk(q.name, depth + 1)

    walk(None, 0)
    out += [(q, 0) for q in spec.queues if q.name not in seen]  # unreachable only in invalid specs
    return out


def _flink_use(spec: Spec, flink: list[FlinkRow]) -> dict[tuple[str, str], tuple[int, tuple[str, ...]]]:
    """(queue, resource) → GPUs its subtree's Flink clusters request, and which clusters."""
    parents = {q.name: queue_parent(q) for q in spec.queues}
    use: dict[tuple[str, str], tuple[int, tuple[str, ...]]] = {}
    for row in flink:
        if row.queue is None or row.queue_resource is None or row.total == 0:
            continue
        name: str | None = row.queue
        seen: set[str] = set()
        while name is not None and name not in seen:  # up to the top (a cycle only in invalid specs)
            seen.add(name)
            total, names = use.get((name, row.queue_resource), (0, ()))
            use[(name, row.queue_resource)] = (total + row.total, (*names, row.cluster))
            name = parents.get(name)
    return use


def _value(queue: Queue, field: str, resource: str) -> Decimal | None:
    q = getattr(queue, field).get(resource)
    return q.value if q is not None else None


def build_report(spec: Spec, warnings: Sequence[SpecError] = ()) -> Report:
    """Compute the capacity report of a validated spec; ``warnings`` (`ValidatedSpec.warnings`)
    are listed with it."""
    basis = _basis(spec)
    pools = [
        PoolGpus(
            pool.name,
            pool.platform,
            pool.nodes,
            tuple(pool_gpu_resources(pool).items()),
            tuple(unrenamed_slices(pool).items()),
        )
        for pool in pools_of(spec)
    ]
    resources = {name for p in pools for name, _ in p.per_node}
    for q in spec.queues:
        for field in FIELDS:
            resources |= {n for n in getattr(q, field).names() if is_gpu_resource(n)}
    ordered_resources = tuple(sorted(resources))
    report_pools = tuple(pools)
    totals = {r: sum(p.total(r) for p in report_pools) for r in ordered_resources}
    flink = []
    for c in spec.flink_clusters:
        amount = c.gpus_per_task_manager
        platform = c.platform
        resource = yarn_gpu_type(spec, c) if platform == "yarn" else kubernetes_gpu_key(spec, c)
        queue_resource = kubernetes_gpu_key(spec, c)
        queue = spec.queue(c.queue) if c.queue else None
        flink.append(
            FlinkRow(
                cluster=c.name,
                target=c.target,
                queue=c.queue,
                pools=tuple(p.name for p in candidate_pools(spec, c)),
                replicas=c.task_manager.replicas,
                gpus_per_tm=amount,
                resource=resource,
                queue_resource=queue_resource,
                queue_capability=_value(queue, "capability", queue_resource)
                if queue and queue_resource
                else None,
                queue_deserved=_value(queue, "deserved", queue_resource)
                if queue and queue_resource
                else None,
            )
        )
    use = _flink_use(spec, flink)
    rows = [
        QueueRow(
            queue=q.name,
            depth=depth,
            resource=r,
            capability=_value(q, "capability", r),
            deserved=_value(q, "deserved", r),
            guarantee=_value(q, "guarantee", r),
            cluster=totals[r],
            parent=queue_parent(q),
            flink=use.get((q.name, r), (0, ()))[0],
            flink_clusters=use.get((q.name, r), (0, ()))[1],
        )
        for r in ordered_resources
        for q, depth in _queue_order(spec)
        if any(_value(q, field, r) is not None for field in FIELDS) or (q.name, r) in use
    ]
    limited = {row.queue for row in rows}
    without = tuple(q.name for q, _ in _queue_order(spec) if q.name not in limited)
    parts = partition_rows(spec)
    with_partition = {r.queue for r in parts}
    return Report(
        spec.name,
        basis,
        report_pools,
        ordered_resources,
        tuple(rows),
        tuple(flink),
        without,
        group_rows(spec),
        spec.scheduler if spec.has_platform("kubernetes") else "",
        tuple(warnings),
        parts,
        tuple(q.name for q, _ in _queue_order(spec) if parts and q.name not in with_partition),
        flavor_rows(spec),
    )


def partition_rows(spec: Spec) -> tuple[PartitionRow, ...]:
    """Per GPU-model partition (by label) and queue (tree order): the capacities that
    `accelplane.derive.yarn_capacity.plan_queues` writes; empty without YARN node labels."""
    if not labels_enabled(spec):
        return ()
    plan = plan_queues(spec)
    if plan.infeasible:
        return ()
    order = {q.name: (i, depth, queue_parent(q)) for i, (q, depth) in enumerate(_queue_order(spec))}
    rows = []
    for share in plan.shares:
        if share.label is None or share.model is None:
            continue
        gpus = sum(vendor_totals(spec, label_pools(spec, share.label)).values())
        cap, mx = share.capacity, share.maximum
        _, depth, parent = order[share.queue]
        rows.append(
            PartitionRow(
                label=share.label,
                model=share.model,
                queue=share.queue,
                depth=depth,
                parent=parent,
                gpus=gpus,
                capacity_gpus=_gpu_dim(cap),
                maximum_gpus=_gpu_dim(mx),
                capacity_memory_mib=cap[MEMORY] if cap else None,
                capacity_vcores=cap[VCORES] if cap else None,
                percent=Decimal(share.percent) / 100 if share.percent is not None else None,
            )
        )
    rows.sort(key=lambda r: (r.label, order[r.queue][0]))
    return tuple(rows)


def _gpu_dim(vector: dict[str, int] | None) -> int | None:
    """The GPUs of a capacity vector (every GPU type of a partition counts the same GPUs)."""
    if vector is None:
        return None
    return max((v for d, v in vector.items() if d not in (MEMORY, VCORES)), default=0)


def group_rows(spec: Spec) -> tuple[GroupRow, ...]:
    """Every slot group of every Flink cluster, in spec order. A group's GPUs are counted against
    the TaskManagers' GPUs of its resource: TaskManagers × the TaskManager's amount, where a
    standalone cluster spans models only the TaskManagers on hosts with that model."""
    rows = []
    for c in spec.flink_clusters:
        offered = {r.name: r for r in gpu_resources(spec, c)}
        taskmanagers = dict.fromkeys(offered, c.task_manager.replicas)
        if spans_models(spec, c):  # only the TaskManagers on hosts with the model offer it
            hosts = standalone_hosts(spec, c)
            taskmanagers = {
                name: sum(h.taskmanagers for h in hosts if name in dict(h.resources)) for name in offered
            }
        for g in c.slot_groups:
            resource = group_resource(spec, c, g)
            r = offered.get(resource) if resource else None
            rows.append(
                GroupRow(
                    cluster=c.name,
                    group=g.name,
                    slots=g.slots,
                    cpu=g.cpu.value,
                    task_heap=g.task_heap.value,
                    managed_memory=g.managed_memory.value,
                    gpu_per_slot=g.gpu,
                    resource=resource,
                    model=g.gpu_model or (r.model if r else None),
                    taskmanager_gpus=taskmanagers[r.name] * r.amount if r else 0,
                )
            )
    return tuple(rows)


def pools_of(spec: Spec) -> list[NodePool]:
    """The pools the report counts (the basis platform's GPU pools)."""
    basis = _basis(spec)
    return [p for p in spec.node_pools if p.platform == basis and p.gpu is not None]
