"""Cross-references from Flink clusters to queues, PriorityClasses and node pools."""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.queues import ROOT_QUEUE, leaf_queue_names
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

FLINK_QUEUE_ROOT = declare(
    'AP2030', ERROR, 'a Flink cluster submits to the root queue',
    fix='name a leaf queue',
)
FLINK_QUEUE_UNDEFINED = declare(
    'AP2031', ERROR, 'a Flink cluster names a queue that is not defined',
    fix='define the queue or fix the name',
)
FLINK_QUEUE_NOT_LEAF = declare(
    'AP2032', ERROR, 'a Flink cluster names a queue that has child queues',
    fix='name a leaf queue',
)
FLINK_PRIORITY_CLASS_UNDEFINED = declare(
    'AP2033', ERROR, 'a Flink cluster names a PriorityClass that is not defined',
    fix='define the PriorityClass or fix the name',
)
FLINK_POOL_UNDEFINED = declare(
    'AP3001', ERROR, 'taskManager.gpu.pool names a node pool that is not defined',
    fix='define the pool or fix the name',
)


def check(spec: Spec) -> Iterator[Problem]:
    """Undefined or unusable queues, PriorityClasses and pools named by Flink clusters."""
    leaves = leaf_queue_names(spec)
    for c in spec.flink_clusters:
        if c.queue is not None:
            if c.queue == ROOT_QUEUE:
                yield Problem(
                    c.field_path("queue"), "jobs cannot be submitted to the root queue; use a leaf queue", FLINK_QUEUE_ROOT
                )
            elif spec.queue(c.queue) is None:
                defined = ", ".join(q.name for q in spec.queues) or "none"
                yield Problem(c.field_path("queue"), f"queue {c.queue!r} is not defined (defined: {defined})", FLINK_QUEUE_UNDEFINED)
            elif c.queue not in leaves:
                yield Problem(
                    c.field_path("queue"),
                    f"queue {c.queue!r} has child queues; jobs may only run in leaf queues", FLINK_QUEUE_NOT_LEAF,
                )
        if c.priority_class is not None and spec.priority_class(c.priority_class) is None:
            defined = ", ".join(p.name for p in spec.priority_classes) or "none"
            yield Problem(
                c.field_path("priorityClass"),
                f"PriorityClass {c.priority_class!r} is not defined (defined: {defined})", FLINK_PRIORITY_CLASS_UNDEFINED,
            )
        gpu = c.task_manager.gpu
        if gpu is not None and gpu.pool is not None and spec.pool(gpu.pool) is None:
            defined = ", ".join(p.name for p in spec.node_pools) or "none"
            yield Problem(
                c.field_path("taskManager", "gpu", "pool"),
                f"node pool {gpu.pool!r} is not defined (defined: {defined})", FLINK_POOL_UNDEFINED,
            )
