"""A YARN Flink cluster's containers fit its queue; its queue's AM limit admits every JobManager.

Both are specs that validate but whose YARN application stays ACCEPTED forever (the Hadoop rules,
with file:line, are in `accelplane.derive.yarn_am_limit`):

* `YARN_CONTAINER_OVER_QUEUE_MAX` (AP5085): a JobManager or TaskManager container larger than the
  queue's ``maximum-capacity`` in its partition in some dimension (memory, vcores, GPUs) is never
  allocated (``AbstractCSQueue.accept``). Absolute mode only: in percentage mode accelplane writes
  ``maximum-capacity`` 100 for every queue, so a queue may use its whole partition, and a container
  larger than any NodeManager of the partition is `accelplane.checks.node_fit`'s finding. One
  finding per cluster (its queue is the one cause), at the cluster's ``queue``, naming every role and
  dimension; the fix is raising the queue capabilities that are too small.
* `YARN_AMS_OVER_QUEUE` (AP5086): the JobManagers of two or more clusters of one leaf queue together
  exceed the queue's guaranteed resource in their partition, so even
  ``maximum-am-resource-percent`` 1.0 activates only some of them (the rendered percent otherwise
  admits them all). One finding per queue and partition, at the queue.

Causes other checks own are not reported again: a vcores maximum of 0 from a capability below one
core (AP5080), a container above the whole partition (no capability could hold it: node fit and
the GPU checks, AP3511/AP5023), GPU TaskManagers without one partition (AP5012/AP5013), a queue
that may not use the partition (AP5605), an infeasible queue plan (AP5031, ...), and AP5086 for a
queue already too small for one of its containers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction

from accelplane.derive.node_fit import ROLES
from accelplane.derive.queues import children_by_parent, queue_ancestors, queue_parent
from accelplane.derive.yarn_am_limit import (
    QueueAMs,
    am_limits,
    cluster_queue_path,
    container_partition,
    find_share,
    parent_resource,
    yarn_container,
)
from accelplane.derive.yarn_capacity import (
    MEMORY,
    VCORES,
    QueuePlan,
    format_vector,
    partitions,
    plan_queues,
    queue_mode,
    queue_paths,
    tree_is_sound,
)
from accelplane.derive.yarn_labels import label_pools, labels_enabled, taskmanager_label
from accelplane.derive.yarn_types import cluster_totals, yarn_gpu_clusters, yarn_pools
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import VENDOR_RESOURCE, FlinkCluster, Queue, Spec
from accelplane.quantity import format_quantity

YARN_CONTAINER_OVER_QUEUE_MAX = declare(
    "AP5085", ERROR,
    "a YARN Flink cluster's JobManager or TaskManager container is larger than its queue's maximum-capacity: it is never allocated",
    fix="raise the queue capability named (cpu, memory or GPUs) to at least the container",
)  # fmt: skip
YARN_AMS_OVER_QUEUE = declare(
    "AP5086", ERROR,
    "the JobManagers (ApplicationMasters) of a queue's YARN Flink clusters together exceed its guaranteed capacity: some stay ACCEPTED",
    fix="give the queue a guaranteed capacity that holds every JobManager (deserved, or weight in percentage mode; a cluster moves where none can)",
)  # fmt: skip

ROLE_NAMES = {"jobManager": "JobManager", "taskManager": "TaskManager"}


def _dim_label(dim: str) -> str:
    return {MEMORY: "memory (MiB)", VCORES: "vcores"}.get(dim, dim)


def _limiting_field(q: Queue, dim: str, label: str | None, model: str | None, cluster: FlinkCluster) -> str | None:
    """The field of ``q`` that sets its maximum in ``dim`` (None: it inherits its parent's)."""
    if dim == MEMORY:
        return "capability.memory" if q.capability.get("memory") is not None else None
    if dim == VCORES:
        return "capability.cpu" if q.capability.get("cpu") is not None else None
    if label is not None and model is not None:
        entry = q.gpu_model(model)
        if entry is not None and entry.capability is not None:
            return f"gpuModels.{model}.capability"
    if q.capability.get(dim) is not None:
        return f"capability.{dim}"
    gpu = cluster.task_manager.gpu
    resource = VENDOR_RESOURCE.get(gpu.vendor) if gpu is not None and gpu.vendor else None
    for name in [resource] if resource else list(VENDOR_RESOURCE.values()):
        if q.capability.get(name) is not None:
            return f"capability.{name}"
    return None


def _amount(dim: str, need: int) -> str:
    """A container amount as the spec writes it: memory in binary units (``4Gi``), else a count."""
    return format_quantity(Decimal(need * 2**20), binary=True) if dim == MEMORY else str(need)


def _partition_totals(spec: Spec, label: str | None) -> dict[str, int]:
    """Memory (MiB), vcores and GPU types of all NodeManagers of a partition (once per spec)."""

    def make() -> dict[str | None, dict[str, int]]:
        out = {}
        for part in partitions(spec):
            totals = cluster_totals(spec, label_pools(spec, part.label))
            out[part.label] = {MEMORY: totals.memory_mib, VCORES: totals.vcores, **dict(totals.gpus)}
        return out

    return spec.memo.get_or_make("yarn_partition_totals", spec, make).get(label, {})


def unplaced_gpus(spec: Spec, cluster: FlinkCluster) -> bool:
    """True for GPU TaskManagers with node labels but no one partition (``yarn.taskmanager.node-label``
    unset: their candidate pools span partitions, or none has them)."""
    return labels_enabled(spec) and cluster in yarn_gpu_clusters(spec) and taskmanager_label(spec, cluster) is None


def _below_one_core(chain: list[Queue]) -> bool:
    """A queue on the chain has a capability cpu between 0 and 1 (AP5080 reports that vcores=0)."""
    return any((c := q.capability.get("cpu")) is not None and 0 < c.value < 1 for q in chain)


def _container_fit(spec: Spec, plan: QueuePlan, cluster: FlinkCluster) -> Iterator[Problem]:
    qpath = cluster_queue_path(spec, cluster)
    queue = spec.queue(cluster.queue) if cluster.queue is not None else None
    if qpath is None or queue is None:
        return
    chain = queue_ancestors(spec, queue)
    over: list[str] = []
    fixes: dict[tuple[str, str], tuple[str, int]] = {}
    paths = spec.memo.get_or_make("yarn_queue_paths", spec, lambda: queue_paths(spec))
    for role in ROLES:
        if role == "taskManager" and unplaced_gpus(spec, cluster):
            continue  # the partitions of its pools are AP5013's (or another placement check's) finding
        label = container_partition(spec, cluster, role)
        share = find_share(spec, plan, qpath, label)
        if share is None or share.maximum is None:
            continue
        container = yarn_container(spec, cluster, role)
        whole = _partition_totals(spec, label)
        misfit = {
            d: v
            for d, v in container.items()
            if d in share.maximum
            and share.maximum[d] < v <= whole.get(d, 0)  # above the whole partition: node fit/placement's
            and not (d == VCORES and _below_one_core(chain))
        }
        if not misfit:
            continue
        where = "" if label is None else f" in node partition {label}"
        dims = ", ".join(f"{_dim_label(d)} {v} > {share.maximum[d]}" for d, v in misfit.items())
        over.append(
            f"its {ROLE_NAMES[role]} container {format_vector(container)} exceeds the queue's maximum-capacity "
            f"{format_vector(share.maximum)}{where} ({dims})"
        )
        for d, need in misfit.items():
            for q in chain:
                qshare = find_share(spec, plan, paths[q.name], label)
                if qshare is None or qshare.maximum is None or qshare.maximum.get(d, 0) >= need:
                    continue
                field_name = _limiting_field(q, d, label, share.model, cluster)
                if field_name is not None:
                    key = (q.name, field_name)
                    fixes[key] = (d, max(need, fixes.get(key, (d, 0))[1]))
    if not over:
        return
    by_queue: dict[str, list[str]] = {}
    for (name, field_name), (dim, need) in sorted(fixes.items()):
        by_queue.setdefault(name, []).append(f"{field_name} to at least {_amount(dim, need)}")
    if by_queue:
        fix = "raise " + "; ".join(f"{' and '.join(items)} on queue {name!r}" for name, items in by_queue.items())
    else:
        fix = f"give queue {queue.name!r} a capability that holds the container"
    yield Problem(
        cluster.field_path("queue"),
        f"Flink cluster {cluster.name!r} runs in YARN queue {queue.name!r}, but " + "; ".join(over)
        + ": the CapacityScheduler never allocates a container larger than its queue's maximum in any dimension "
        "(AbstractCSQueue.accept), so the application stays ACCEPTED; " + fix,
        YARN_CONTAINER_OVER_QUEUE_MAX,
    )


def _weight_fix(spec: Spec, plan: QueuePlan, group: QueueAMs, queue: Queue) -> str:
    """Percentage mode, default partition: the smallest weight of the queue whose share holds every
    JobManager (its siblings unchanged), or moving a cluster when no weight does."""
    siblings = [q for q in children_by_parent(spec).get(queue_parent(queue), []) if q is not queue]
    others = sum(q.weight for q in siblings)
    parent = parent_resource(spec, plan, group.path, group.label)
    move = f"move Flink cluster {group.clusters[-1]!r} to another queue"
    used = [d for d in (MEMORY, VCORES) if group.ams[d] > 0]
    if others == 0 or parent is None or any(parent[d] <= group.ams[d] for d in used):
        return move  # even the whole of the parent's share would not hold them

    def holds(weight: int) -> bool:
        # capacities are written in hundredths of a percent by largest remainder: at least the floor
        hundredths = 10_000 * weight // (weight + others)
        return all(math.floor(parent[d] * hundredths / 10_000) >= group.ams[d] for d in used)

    need = max(Fraction(group.ams[d]) / Fraction(parent[d]) for d in used)
    weight = max(queue.weight + 1, math.ceil(need * others / (1 - need)))
    while not holds(weight):
        weight += 1
    return f"raise its weight to at least {weight} (its siblings weigh {others} in all)"


def need_text(group: QueueAMs, dims: list[str]) -> str:
    """``memory: 7Gi, cpu: 3``: the JobManagers' sum in the dimensions named, as the spec writes it."""
    return ", ".join(f"memory: {_amount(MEMORY, group.ams[d])}" if d == MEMORY else f"cpu: {group.ams[d]}" for d in dims)


def _ams_over(spec: Spec, plan: QueuePlan, group: QueueAMs) -> Problem:
    queue = spec.queue(group.queue)
    have = group.guaranteed or {}
    where = "the default partition" if group.label is None else f"node partition {group.label}"
    over = [d for d in (MEMORY, VCORES) if group.ams[d] > have.get(d, 0)]
    last = next(c for c in spec.flink_clusters if c.name == group.clusters[-1])
    if queue is None:  # root.default of a spec without queues: the whole partition is too small
        fix = f"give the YARN node pools of {where} at least {need_text(group, over)} in all"
    elif group.label is not None:
        fix = f"move Flink cluster {last.name!r} to another queue"
    elif queue_mode(spec) == "absolute":
        fix = f"give queue {queue.name!r} deserved {need_text(group, over)} at least"
    else:
        fix = _weight_fix(spec, plan, group, queue)
    return Problem(
        queue.path if queue is not None else last.path,
        f"the JobManagers (ApplicationMasters) of Flink clusters {', '.join(group.clusters)} in YARN queue "
        f"{group.queue!r} need {group.ams[MEMORY]} MiB and {group.ams[VCORES]} vcores together, more than the "
        f"queue's guaranteed {format_vector(have)} in {where}: the CapacityScheduler activates an application only "
        "while the AMs of its queue fit maximum-am-resource-percent (at most 1.0) of that "
        "(AbstractLeafQueue.activateApplications), so the later ones stay ACCEPTED; " + fix,
        YARN_AMS_OVER_QUEUE,
    )


def check(spec: Spec) -> Iterator[Problem]:
    """Every YARN Flink cluster's containers within its queue's maximum; every queue's JobManagers
    within its guaranteed capacity."""
    if not spec.has_platform("yarn") or not yarn_pools(spec) or not tree_is_sound(spec):
        return
    if not any(c.target == "yarn" for c in spec.flink_clusters):
        return
    plan = plan_queues(spec)
    if plan.infeasible:
        return  # the queue plan is itself wrong: `accelplane.checks.yarn` reports why
    misfits: set[str] = set()
    if plan.mode == "absolute":
        for c in spec.flink_clusters:
            for problem in _container_fit(spec, plan, c):
                misfits.add(c.queue or "")
                yield problem
    for group in am_limits(spec, plan):
        # a queue too small for one container is too small for their AMs too: one cause, one finding
        if group.blocked and group.queue not in misfits:
            yield _ams_over(spec, plan, group)
