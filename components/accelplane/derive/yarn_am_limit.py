"""The YARN containers of a Flink cluster in its CapacityScheduler queue, and the queue's AM limit.

A Flink cluster with ``target: yarn`` is one YARN application in its leaf queue
(``yarn.application.queue``): the JobManager is the ApplicationMaster (AM) container, the
TaskManagers are further containers. Two rules of Hadoop's CapacityScheduler decide whether such an
application ever leaves ACCEPTED (apache/hadoop 3.4.1, source tree ``rel/release-3.4.1`` as mirrored
in 1131103319/hadoop-3.4.1-src@113adbef259bacaf14e14198d7e59903e180c153, paths below
``hadoop-yarn-server-resourcemanager/.../scheduler/``):

* **Container fit.** ``AbstractCSQueue.accept`` (capacity/AbstractCSQueue.java:1066-1117, the fit
  test :1093-1101) refuses every allocation for which ``used + container`` does not fit the queue's maximum resource in the
  container's partition with ``Resources.fitsIn`` — every dimension (DominantResourceCalculator
  ``fitsIn``, DominantResourceCalculator.java:597-609). A container larger than the maximum in any
  dimension is never allocated. Requests are normalized first (``SchedulerUtils.normalizeRequest``,
  SchedulerUtils.java:210-218, step = ``yarn.scheduler.minimum-allocation-*``: 1024 MiB and 1 vcore
  by default; ``DominantResourceCalculator.normalize``, :481-504), so a 1600 MiB JobManager counts
  as 2048 MiB. `yarn_container` is that normalized request.
* **AM limit.** ``AbstractLeafQueue.activateApplications`` (capacity/AbstractLeafQueue.java:833-946)
  activates a pending application only while the AMs of the queue's active applications plus its
  own AM fit the queue's AM limit of the AM's partition (:863-893, "AM resource limit exceeded";
  the user AM limit, :895-922, is the same figure with Hadoop's default user-limit 100 % and
  user-limit-factor 1); the first application is activated regardless (``getNumActiveApplications()
  < 1``, :877-883). The limit (``calculateAndGetAMResourceLimitPerPartition``, :780-831) is the
  queue's guaranteed resource of the partition (``getEffectiveCapacity``; in the default partition
  the queue's current limit when that is larger) times ``maximum-am-resource-percent``, rounded up
  per dimension to the minimum allocation (``multiplyAndNormalizeUp``, DominantResourceCalculator
  .java:540-555). The percent is ``yarn.scheduler.capacity.<queue-path>.maximum-am-resource-percent``,
  else the global ``yarn.scheduler.capacity.maximum-am-resource-percent``, else 0.1
  (``CapacitySchedulerConfiguration.getMaximumApplicationMasterResourcePerQueuePercent``,
  CapacitySchedulerConfiguration.java:545-548, default :198, global :514-517); a node partition has
  its own ``<queue-path>.accessible-node-labels.<label>.maximum-am-resource-percent`` defaulting to
  the queue's (``getMaximumAMResourcePercentPerPartition``, :921-928; the key forms are
  ``getQueuePrefix``, :479-482, and ``getNodeLabelPrefix``, :493-498). The figures do not depend on
  the queue mode: in percentage mode the guaranteed resource is the partition's resources times the
  queue's absolute capacity.

So accelplane, which knows every Flink cluster of every leaf queue, writes per leaf queue (and AM
partition) the percent that admits all their JobManagers at once: the largest of memory and vcores
of (sum of their normalized AM containers / the queue's guaranteed), rounded up to whole percent,
never below Hadoop's 0.1 (`am_limits`). When even 1.0 cannot admit them all (two or more clusters
whose JobManagers together exceed the queue's guaranteed resource) the later ones would wait forever:
`accelplane.checks.yarn_queue_fit` reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from accelplane.derive.node_fit import (
    HADOOP_MINIMUM_ALLOCATION,
    Role,
    yarn_container_request,
    yarn_nodemanager_offer,
)
from accelplane.derive.queues import ROOT_QUEUE, leaf_queue_names
from accelplane.derive.yarn_capacity import (
    DEFAULT_QUEUE,
    MEMORY,
    VCORES,
    PartitionShare,
    QueuePlan,
    Vector,
    format_fraction,
    format_vector,
    partitions,
    plan_queues,
    queue_paths,
)
from accelplane.derive.yarn_labels import application_label, label_pools, taskmanager_label
from accelplane.derive.yarn_types import ConfProperty, container_gpu_request, yarn_pools
from accelplane.model import FlinkCluster, Spec

DEFAULT_AM_PERCENT = Decimal("0.1")
"""``CapacitySchedulerConfiguration.DEFAULT_MAXIMUM_APPLICATIONMASTERS_RESOURCE_PERCENT``."""
AM_PERCENT_STEP = Decimal("0.01")
"""The precision of the written percent (whole percent, rounded up)."""
AM_SUFFIX = "maximum-am-resource-percent"


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def yarn_container(spec: Spec, cluster: FlinkCluster, role: Role) -> Vector:
    """The container of a role as the CapacityScheduler counts it: memory (MiB) and vcores raised
    to the minimum allocation and rounded up to its step (1024 MiB, 1 vcore: accelplane sets no
    other), a TaskManager's GPU types as requested (their minimum allocation is 0)."""
    raw = yarn_container_request(cluster, role)
    out: Vector = {
        MEMORY: _round_up(max(raw["memory"], HADOOP_MINIMUM_ALLOCATION["memory"]), HADOOP_MINIMUM_ALLOCATION["memory"]),
        VCORES: _round_up(max(raw["cpu"], HADOOP_MINIMUM_ALLOCATION["cpu"]), HADOOP_MINIMUM_ALLOCATION["cpu"]),
    }
    if role == "taskManager":
        out.update(container_gpu_request(spec, cluster))
    return out


def container_partition(spec: Spec, cluster: FlinkCluster, role: Role) -> str | None:
    """The node partition a role's containers run in: the JobManager in the application's
    (``yarn.application.node-label``, else the default partition), GPU TaskManagers in their
    model's (``yarn.taskmanager.node-label``), other TaskManagers in the application's."""
    if role == "taskManager" and (label := taskmanager_label(spec, cluster)) is not None:
        return label
    return application_label(cluster)


def cluster_queue_path(spec: Spec, cluster: FlinkCluster) -> str | None:
    """The CapacityScheduler path of the leaf queue a YARN Flink cluster runs in: its ``queue``
    (a leaf; other values are reported elsewhere), ``root.default`` when the spec declares no
    queues and the cluster names none; None otherwise."""
    if cluster.target != "yarn":
        return None
    if cluster.queue is None:
        return f"{ROOT_QUEUE}.{DEFAULT_QUEUE}" if not spec.queues else None
    leaves = spec.memo.get_or_make("yarn_leaf_queues", spec, lambda: frozenset(leaf_queue_names(spec)))
    if cluster.queue not in leaves:
        return None
    return spec.memo.get_or_make("yarn_queue_paths", spec, lambda: queue_paths(spec)).get(cluster.queue)


def find_share(spec: Spec, plan: QueuePlan, qpath: str, label: str | None) -> PartitionShare | None:
    """A queue's figures in one partition (None: the queue may not use it); an index built once
    per plan."""

    def make() -> dict[tuple[str, str | None], PartitionShare]:
        return {(s.path, s.label): s for s in plan.shares}

    return spec.memo.get_or_make("yarn_share_index", plan, make).get((qpath, label))


def _partition_offer(spec: Spec, label: str | None) -> Vector:
    """Memory (MiB) and vcores the NodeManagers of a partition offer in all."""
    pools = label_pools(spec, label) if any(p.label == label for p in partitions(spec)) else []
    offers = [(p.nodes, yarn_nodemanager_offer(p)) for p in pools]
    return {
        MEMORY: sum(nodes * offer["memory"][0] for nodes, offer in offers),
        VCORES: sum(nodes * offer["cpu"][0] for nodes, offer in offers),
    }


def guaranteed(spec: Spec, plan: QueuePlan, qpath: str, label: str | None) -> Vector | None:
    """A leaf queue's guaranteed memory (MiB) and vcores in a partition (``getEffectiveCapacity``):
    absolute mode: its ``capacity`` vector; percentage mode: the partition's NodeManager offers
    times the product of the capacities down the path, rounded down. None when the queue may not
    use the partition."""
    if not spec.queues:
        return _partition_offer(spec, label) if qpath == f"{ROOT_QUEUE}.{DEFAULT_QUEUE}" else None
    share = find_share(spec, plan, qpath, label)
    if share is None:
        return None
    if share.capacity is not None:
        return {MEMORY: share.capacity.get(MEMORY, 0), VCORES: share.capacity.get(VCORES, 0)}
    parent = parent_resource(spec, plan, qpath, label)
    if parent is None or share.percent is None:
        return None
    return {d: int((v * share.percent / 10_000).to_integral_value(ROUND_FLOOR)) for d, v in parent.items()}


def parent_resource(spec: Spec, plan: QueuePlan, qpath: str, label: str | None) -> dict[str, Decimal] | None:
    """Percentage mode: the guaranteed memory (MiB) and vcores of a queue's parent in a partition,
    exactly (the partition's NodeManager offers times the capacities down to the parent); None when
    an ancestor may not use the partition."""
    fraction = Decimal(1)
    names = qpath.split(".")
    for i in range(2, len(names)):
        step = find_share(spec, plan, ".".join(names[:i]), label)
        if step is None or step.percent is None:
            return None
        fraction *= Decimal(step.percent) / 10_000
    return {d: v * fraction for d, v in _partition_offer(spec, label).items()}


@dataclass(frozen=True)
class QueueAMs:
    """The JobManagers (AMs) of the YARN Flink clusters of one leaf queue in one partition."""

    queue: str
    """The spec's queue name (``default`` for ``root.default``)."""
    path: str
    label: str | None
    clusters: tuple[str, ...]
    ams: Vector
    """Their normalized AM containers added up (memory MiB, vcores)."""
    guaranteed: Vector | None
    """The queue's guaranteed memory and vcores there (None: unknown, nothing is written)."""

    @property
    def needed(self) -> Decimal | None:
        """The smallest percent (as a fraction, whole percent rounded up) at which the AM limit
        holds every AM, None when the guaranteed resource is unknown or 0 in a dimension the AMs
        use."""
        if self.guaranteed is None:
            return None
        ratio = Decimal(0)
        for d, used in self.ams.items():
            have = self.guaranteed.get(d, 0)
            if used > 0 and have <= 0:
                return None
            if used > 0:
                ratio = max(ratio, Decimal(used) / have)
        return (ratio / AM_PERCENT_STEP).to_integral_value(ROUND_CEILING) * AM_PERCENT_STEP

    @property
    def blocked(self) -> bool:
        """True when not every AM can be active at once even at 1.0 (the first application always
        starts, so one cluster alone is never blocked)."""
        needed = self.needed
        return len(self.clusters) > 1 and self.guaranteed is not None and (needed is None or needed > 1)

    @property
    def percent(self) -> Decimal | None:
        """The value written: `needed`, at least Hadoop's 0.1, at most 1; None when unknown."""
        needed = self.needed
        if self.guaranteed is None:
            return None
        if needed is None:
            return Decimal(1)
        return min(Decimal(1), max(DEFAULT_AM_PERCENT, needed))

    def key(self) -> str:
        """The property: ``<path>.maximum-am-resource-percent`` or its per-partition form."""
        middle = "" if self.label is None else f"accessible-node-labels.{self.label}."
        return f"yarn.scheduler.capacity.{self.path}.{middle}{AM_SUFFIX}"


def am_limits(spec: Spec, plan: QueuePlan) -> list[QueueAMs]:
    """Per leaf queue and AM partition with YARN Flink clusters, their JobManagers, in queue-path
    order (deterministic)."""
    if not yarn_pools(spec):
        return []
    groups: dict[tuple[str, str | None], list[FlinkCluster]] = {}
    for c in spec.flink_clusters:
        qpath = cluster_queue_path(spec, c)
        if qpath is not None:
            groups.setdefault((qpath, application_label(c)), []).append(c)
    out = []
    for (qpath, label), clusters in sorted(groups.items(), key=lambda e: (e[0][0], e[0][1] or "")):
        ams: Vector = {MEMORY: 0, VCORES: 0}
        for c in clusters:
            am = yarn_container(spec, c, "jobManager")
            ams = {d: ams[d] + am[d] for d in ams}
        out.append(
            QueueAMs(
                clusters[0].queue or DEFAULT_QUEUE,
                qpath,
                label,
                tuple(c.name for c in clusters),
                ams,
                guaranteed(spec, plan, qpath, label),
            )
        )
    return out


def am_limit_properties(spec: Spec, plan: QueuePlan) -> list[ConfProperty]:
    """``maximum-am-resource-percent`` of every leaf queue with YARN Flink clusters, sized for
    their JobManagers (see the module docstring)."""
    out = []
    for q in am_limits(spec, plan):
        percent = q.percent
        if percent is None or q.guaranteed is None:
            continue
        where = "" if q.label is None else f" in node partition {q.label}"
        names = ", ".join(q.clusters)
        sized = (
            f"admits the JobManagers (ApplicationMasters) of Flink cluster{'s' if len(q.clusters) > 1 else ''} "
            f"{names} at once: {q.ams[MEMORY]} MiB and {q.ams[VCORES]} vcore{'' if q.ams[VCORES] == 1 else 's'} "
            "of the queue's guaranteed "
            f"{format_vector(q.guaranteed)}{where}"
        )
        needed = q.needed
        if needed is not None and needed <= DEFAULT_AM_PERCENT:
            sized += " (Hadoop's default 0.1 is enough)"
        elif needed is None or needed > 1:
            sized = (
                f"at most 1 (the JobManager of Flink cluster {names} needs {q.ams[MEMORY]} MiB and "
                f"{q.ams[VCORES]} vcores of the queue's guaranteed {format_vector(q.guaranteed)}{where}; the "
                "first application of a queue starts whatever the limit)"
            )
        out.append(ConfProperty(q.key(), format_fraction(percent), sized))
    return out


def capacity_scheduler_properties(spec: Spec, plan: QueuePlan | None = None) -> list[ConfProperty]:
    """Everything ``capacity-scheduler.xml`` says: the queue tree (`plan_queues`), then the AM
    percents (`am_limit_properties`)."""
    plan = plan_queues(spec) if plan is None else plan
    return [*plan.properties, *am_limit_properties(spec, plan)]
