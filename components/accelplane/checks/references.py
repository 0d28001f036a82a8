"""Cross-references from Flink clusters to queues, PriorityClasses and node pools."""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.queues import ROOT_QUEUE, leaf_queue_names
from accelplane.errors import Problem
from accelplane.model import Spec


def check(spec: Spec) -> Iterator[Problem]:
    """Undefined or unusable queues, PriorityClasses and pools named by Flink clusters."""
    leaves = leaf_queue_names(spec)
    for c in spec.flink_clusters:
        if c.queue is not None:
            if c.queue == ROOT_QUEUE:
                yield Problem(
                    c.field_path("queue"), "jobs cannot be submitted to the root queue; use a leaf queue"
                )
            elif spec.queue(c.queue) is None:
                defined = ", ".join(q.name for q in spec.queues) or "none"
                yield Problem(c.field_path("queue"), f"queue {c.queue!r} is not defined (defined: {defined})")
            elif c.queue not in leaves:
                yield Problem(
                    c.field_path("queue"),
                    f"queue {c.queue!r} has child queues; jobs may only run in leaf queues",
                )
        if c.priority_class is not None and spec.priority_class(c.priority_class) is None:
            defined = ", ".join(p.name for p in spec.priority_classes) or "none"
            yield Problem(
                c.field_path("priorityClass"),
                f"PriorityClass {c.priority_class!r} is not defined (defined: {defined})",
            )
        gpu = c.task_manager.gpu
        if gpu is not None and gpu.pool is not None and spec.pool(gpu.pool) is None:
            defined = ", ".join(p.name for p in spec.node_pools) or "none"
            yield Problem(
                c.field_path("taskManager", "gpu", "pool"),
                f"node pool {gpu.pool!r} is not defined (defined: {defined})",
            )
