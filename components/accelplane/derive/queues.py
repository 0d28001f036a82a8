"""The queue tree as both checks and builders see it: parents, leaves, depth.

Volcano and YARN's CapacityScheduler both use one tree with an implicit root; these helpers are the
one reading of the spec's ``parent`` fields that every check, builder and report shares.
"""

from __future__ import annotations

from accelplane.model import Queue, Spec

MAX_QUEUE_DEPTH = 5
ROOT_QUEUE = "root"


def queue_parent(queue: Queue) -> str | None:
    """The effective parent: None for top-level queues (``parent: root`` is the same as none)."""
    return None if queue.parent in (None, ROOT_QUEUE) else queue.parent


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


def queue_depths(spec: Spec) -> dict[str, int | None]:
    """Every queue's depth below root (top-level = 1); None where the chain has a cycle or a gap.

    Linear in the number of queues: each chain is walked once and its depths are memoised.
    """
    by_name = {q.name: q for q in spec.queues}
    depths: dict[str, int | None] = {}
    for q in spec.queues:
        chain: list[str] = []
        on_chain: set[str] = set()
        name: str | None = q.name
        base: int | None = 0
        while name is not None and name not in depths:
            if name in on_chain or name not in by_name:
                base = None
                break
            chain.append(name)
            on_chain.add(name)
            name = queue_parent(by_name[name])
        else:
            base = 0 if name is None else depths[name]
        for offset, member in enumerate(reversed(chain), start=1):
            depths[member] = None if base is None else base + offset
    return depths


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
