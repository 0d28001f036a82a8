"""The queue tree as both checks and builders see it: parents, leaves, depth.

Volcano and YARN's CapacityScheduler both use one tree with an implicit root; these helpers are the
one reading of the spec's ``parent`` fields that every check, builder and report shares.
"""

from __future__ import annotations

from typing import Literal

from accelplane.derive.dra import uses_dra_quotas
from accelplane.model import Queue, Spec

MAX_QUEUE_DEPTH = 5
ROOT_QUEUE = "root"


def queue_parent(queue: Queue) -> str | None:
    """The effective parent: None for top-level queues (``parent: root`` is the same as none)."""
    return None if queue.parent in (None, ROOT_QUEUE) else queue.parent


def queue_ancestors(spec: Spec, queue: Queue) -> list[Queue]:
    """The queue and its declared ancestors, leaf first. The walk stops at a parent the spec does
    not declare or one already on the chain (a cycle): checks report those."""
    out = [queue]
    while (parent := queue_parent(out[-1])) is not None and (nxt := spec.queue(parent)) is not None:
        if nxt in out:
            break
        out.append(nxt)
    return out


def uses_hierarchy(spec: Spec) -> bool:
    """True when any queue has a parent other than the implicit root."""
    return any(queue_parent(q) is not None for q in spec.queues)


def leaf_queue_names(spec: Spec) -> set[str]:
    """Names of queues that no other queue names as parent (only these may hold jobs).

    Parent links inside a cycle do not count: the cycle is reported once, not again as "has child
    queues" for every member.
    """
    cyclic = {q.name for cycle in parent_cycles(spec) for q in cycle}
    parents = {queue_parent(q) for q in spec.queues if q.name not in cyclic}
    return {q.name for q in spec.queues if q.name not in parents}


def children_by_parent(spec: Spec) -> dict[str | None, list[Queue]]:
    """Queues grouped by effective parent (None: top level), in spec order; O(n)."""
    out: dict[str | None, list[Queue]] = {}
    for q in spec.queues:
        out.setdefault(queue_parent(q), []).append(q)
    return out


def queue_depths(spec: Spec) -> dict[str, int | None]:
    """`queue_depth` of every queue by name in O(n) overall (each chain is walked once and its
    depths memoised), so a long or cyclic parent chain cannot make validation quadratic."""
    depths: dict[str, int | None] = {}
    for q in spec.queues:
        if q.name in depths:
            continue
        chain: list[str] = []
        on_chain: set[str] = set()
        current: Queue | None = q
        base: int | None = 0
        while current is not None:
            if current.name in depths:
                base = depths[current.name]
                break
            if current.name in on_chain:
                base = None  # a cycle: every queue on the chain has no depth
                break
            chain.append(current.name)
            on_chain.add(current.name)
            parent = queue_parent(current)
            if parent is None:
                break
            current = spec.queue(parent)
            if current is None:
                base = None  # a gap
                break
        for name in reversed(chain):
            base = None if base is None else base + 1
            depths.setdefault(name, base)
    return depths


def queue_depth(spec: Spec, queue: Queue) -> int | None:
    """Depth below root (top-level = 1), or None when the parent chain has a cycle or a gap."""
    depth, seen, current = 1, {queue.name}, queue
    while (parent := queue_parent(current)) is not None:
        nxt = spec.queue(parent)
        if nxt is None or nxt.name in seen:
            return None
        seen.add(nxt.name)
        current, depth = nxt, depth + 1
    return depth


VolcanoQueuePlugin = Literal["capacity", "proportion"]


def volcano_queue_plugin(spec: Spec) -> VolcanoQueuePlugin:
    """The Volcano plugin that shares resources between the queues: ``capacity`` or ``proportion``.

    Volcano v1.15 ``pkg/scheduler/plugins/proportion/proportion.go`` derives each queue's deserved
    share from ``weight`` and never reads ``spec.deserved``; ``plugins/capacity/capacity.go`` reads
    ``spec.deserved`` (and ``guarantee``, ``capability``, ``priority``) and never reads ``weight``.
    Only ``capacity`` supports a hierarchy (``enableHierarchy``) and accounts DRA device quotas
    (``deviceclass/<class>``). So: ``capacity`` when the queues form a hierarchy, any queue sets
    ``deserved`` or the queues limit DRA devices, else ``proportion``.
    """
    if uses_hierarchy(spec) or any(q.deserved for q in spec.queues) or uses_dra_quotas(spec):
        return "capacity"
    return "proportion"


def parent_cycles(spec: Spec) -> list[list[Queue]]:
    """Each parent cycle once, starting at its first queue in document order."""
    by_name = {q.name: q for q in spec.queues}
    done: set[str] = set()
    cycles: list[list[Queue]] = []
    for q in spec.queues:
        path: list[str] = []
        index: dict[str, int] = {}
        name: str | None = q.name
        while name is not None and name in by_name and name not in done and name not in index:
            index[name] = len(path)
            path.append(name)
            name = queue_parent(by_name[name])
        if name is not None and name in index:
            members = path[index[name] :]
            first = min(members, key=lambda n: by_name[n].path)
            start = members.index(first)
            cycles.append([by_name[n] for n in members[start:] + members[:start]])
        done.update(path)
    return cycles
