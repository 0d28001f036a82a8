"""Checks on Volcano queues and PriorityClasses: a tree Volcano accepts, limits that can be met."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from accelplane.derive.queues import (
    MAX_QUEUE_DEPTH,
    ROOT_QUEUE,
    parent_cycles,
    queue_depths,
    queue_parent,
    uses_hierarchy,
    volcano_queue_plugin,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import Queue, ResourceList, Spec, is_gpu_resource
from accelplane.quantity import Quantity, format_resource

QUEUE_NAMED_ROOT = declare(
    'AP2001', ERROR, "a queue is named 'root', Volcano's implicit root queue",
    fix='rename the queue; top-level queues need no parent',
)
QUEUE_OWN_PARENT = declare(
    'AP2002', ERROR, 'a queue names itself as parent',
    fix='remove parent or name another queue',
)
QUEUE_PARENT_UNDEFINED = declare(
    'AP2003', ERROR, "a queue's parent is not defined in queues",
    fix='add the parent queue or fix the name',
)
QUEUE_TOO_DEEP = declare(
    'AP2004', ERROR, 'the queue tree is deeper than Volcano allows',
    fix='flatten the hierarchy',
)
QUEUE_PARENT_CYCLE = declare(
    'AP2005', ERROR, 'queues name each other as parents in a cycle',
    fix='break the cycle: let one queue of it have no parent (or a queue outside it)',
)
QUEUE_GUARANTEE_OVER_DESERVED = declare(
    'AP2010', ERROR, "a queue's guarantee exceeds its deserved amount",
    fix='lower guarantee or raise deserved',
)
QUEUE_DESERVED_OVER_CAPABILITY = declare(
    'AP2011', ERROR, "a queue's deserved amount exceeds its capability",
    fix='lower deserved or raise capability',
)
QUEUE_GUARANTEE_OVER_CAPABILITY = declare(
    'AP2012', ERROR, "a queue's guarantee exceeds its capability",
    fix='lower guarantee or raise capability',
)
QUEUE_PARTIAL_GPU_CAPABILITY = declare(
    'AP2013', ERROR, 'a capability that limits GPUs lacks cpu, memory or pods (volcano#3426; Volcano before 1.9)',
    fix='add cpu, memory and pods to the capability',
)

VOLCANO_UNSET_CAPABILITY_UNLIMITED = (1, 9)
"""First Volcano minor release whose ``proportion`` plugin takes a queue's real capability as the
cluster's total capped per dimension by the capability (``MinDimensionResource(capability,
Infinity)``: a dimension the capability does not set is unlimited; cpu and memory unset are
``MaxFloat64``): volcano-sh/volcano ``pkg/scheduler/plugins/proportion/proportion.go`` at v1.9.0
(commit a6421813b, the same change as #3219 in v1.8.2 and PR #3448, merge bb611bf75, first
released on the main line in v1.10.0). The ``capacity`` plugin computes it the same way at v1.12.0
(``capacity.go`` L304-321, hierarchical L665-692; tag d24c04ca1a28). Before, ``helpers.Min`` made
every dimension the capability leaves out 0, so a GPU-only capability blocked every job
(volcano#3426). Releases are modelled by minor version, so 1.8 (whose 1.8.2 has the fix) keeps the
rule."""


def volcano_unset_capability_blocks(spec: Spec) -> bool:
    """True when the installed Volcano treats a dimension a queue's capability leaves out as 0
    (before `VOLCANO_UNSET_CAPABILITY_UNLIMITED`), so a partial capability blocks jobs."""
    return spec.volcano.version_tuple < VOLCANO_UNSET_CAPABILITY_UNLIMITED
QUEUE_OVER_PARENT_CAPABILITY = declare(
    'AP2014', ERROR, "a queue's capability exceeds its parent's",
    fix="lower the capability or raise the parent's",
)
QUEUE_CHILDREN_OVER_DESERVED = declare(
    'AP2015', ERROR, "children's deserved amounts add up to more than the parent's",
    fix="lower the children's deserved or raise the parent's",
)
QUEUE_WEIGHT_IGNORED = declare(
    'AP2101', WARNING, "queue weight has no effect under Volcano's capacity plugin",
    fix="set the queue's share as deserved and remove weight",
)
PRIORITY_CLASS_RESERVED = declare(
    'AP2020', ERROR, "a PriorityClass name starts with the reserved prefix 'system-'",
    fix='rename the PriorityClass',
)
PRIORITY_CLASS_DEFAULTS = declare(
    'AP2021', ERROR, 'more than one PriorityClass is globalDefault',
    fix='keep globalDefault on one PriorityClass',
)

REQUIRED_WITH_GPU = ("cpu", "memory", "pods")


def _ordered(a: ResourceList, b: ResourceList) -> Iterator[tuple[str, Quantity, Quantity]]:
    b_values = dict(b.items)
    for name, qa in a.items:
        qb = b_values.get(name)
        if qb is not None and qa.value > qb.value:
            yield name, qa, qb


def _check_queue_tree(spec: Spec) -> Iterator[Problem]:
    depths = queue_depths(spec)
    for q in spec.queues:
        if q.name == ROOT_QUEUE:
            yield Problem((*q.path, "name"), "'root' is Volcano's implicit root queue; do not declare it", QUEUE_NAMED_ROOT)
            continue
        parent = queue_parent(q)
        if parent is not None:
            if parent == q.name:
                yield Problem((*q.path, "parent"), "a queue cannot be its own parent", QUEUE_OWN_PARENT)
                continue
            if spec.queue(parent) is None:
                yield Problem((*q.path, "parent"), f"parent queue {parent!r} is not defined in queues", QUEUE_PARENT_UNDEFINED)
                continue
        depth = depths.get(q.name)
        # Volcano's limit only: YuniKorn's validator, YARN's CapacityScheduler and Kueue's cohort
        # trees take any depth (docs/yunikorn.md, docs/kueue.md)
        if depth is not None and depth > MAX_QUEUE_DEPTH and spec.uses_volcano:
            yield Problem(
                (*q.path, "parent"), f"queue depth {depth} exceeds Volcano's limit of {MAX_QUEUE_DEPTH}", QUEUE_TOO_DEEP
            )
    # one error per cycle (queues below a cycle or a missing parent are consequences: not reported)
    for cycle in parent_cycles(spec):
        if len(cycle) > 1:
            chain = " → ".join(repr(q.name) for q in [*cycle, cycle[0]])
            yield Problem(
                (*cycle[0].path, "parent"), f"parent cycle: {chain}; {_where_to_break(spec, cycle)}",
                QUEUE_PARENT_CYCLE,
            )


def _where_to_break(spec: Spec, cycle: list[Queue]) -> str:
    """The fix for a parent cycle: which queue's parent to remove so that no queue of the cycle
    then exceeds its parent's capability (a capability always exceeds somewhere along a cycle
    unless all are equal; detaching there leaves a valid tree)."""
    over = [
        q
        for q in cycle
        if (p := spec.queue(queue_parent(q) or "")) is not None and any(_ordered(q.capability, p.capability))
    ]
    if len(over) == 1:
        return (
            f"remove the parent of {over[0].name!r} (its capability exceeds its parent's, so the cycle "
            "can only be broken there)"
        )
    if over:
        names = ", ".join(repr(q.name) for q in over)
        return (
            f"remove one queue's parent; queues {names} have a larger capability than their parent, so "
            "all but one of them need a lower capability or another parent too"
        )
    return "remove the parent of one of these queues (or point it outside the cycle)"


def _check_queue_resources(spec: Spec) -> Iterator[Problem]:
    # a cycle is reported once (`QUEUE_PARENT_CYCLE`), not as over-committed or exceeded parents too
    cyclic = {q.name for cycle in parent_cycles(spec) for q in cycle}
    for q in spec.queues:
        for name, g, d in _ordered(q.guarantee, q.deserved):
            yield Problem((*q.path, "guarantee", name), f"guarantee {g} exceeds deserved {d}", QUEUE_GUARANTEE_OVER_DESERVED)
        for name, d, c in _ordered(q.deserved, q.capability):
            yield Problem((*q.path, "deserved", name), f"deserved {d} exceeds capability {c}", QUEUE_DESERVED_OVER_CAPABILITY)
        for name, g, c in _ordered(q.guarantee, q.capability):
            yield Problem((*q.path, "guarantee", name), f"guarantee {g} exceeds capability {c}", QUEUE_GUARANTEE_OVER_CAPABILITY)
        # YuniKorn leaves an unset max unlimited (FitInMaxUndef): a partial capability is fine there
        if spec.uses_volcano and volcano_unset_capability_blocks(spec) and any(is_gpu_resource(n) for n in q.capability.names()):
            missing = [r for r in REQUIRED_WITH_GPU if q.capability.get(r) is None]
            if missing:
                yield Problem(
                    (*q.path, "capability"),
                    f"a capability that limits GPUs must also set {', '.join(missing)} "
                    f"(on Volcano {spec.volcano.version} a partial capability blocks jobs, volcano#3426; "
                    "from 1.9 unset dimensions are unlimited)", QUEUE_PARTIAL_GPU_CAPABILITY,
                )
        parent = spec.queue(queue_parent(q) or "")
        if parent is not None and q.name not in cyclic:
            for name, c, pc in _ordered(q.capability, parent.capability):
                yield Problem(
                    (*q.path, "capability", name),
                    f"capability {c} exceeds the capability of parent {parent.name!r} ({pc})", QUEUE_OVER_PARENT_CAPABILITY,
                )
    # children's deserved must fit in the parent's deserved (capacity plugin webhook); YuniKorn's
    # own rule (children's guaranteed) is `accelplane.checks.yunikorn`'s; Kueue's parents are Cohorts
    # without quota of their own
    if spec.uses_yunikorn or spec.uses_kueue:
        return
    children: dict[str, list[Queue]] = {}
    for q in spec.queues:
        if q.name not in cyclic:  # a cycle is reported once, not as over-committed parents too
            children.setdefault(queue_parent(q) or "", []).append(q)
    for parent in spec.queues:
        for name, pd in parent.deserved.items:
            total = sum(
                (cd.value for c in children.get(parent.name, []) if (cd := c.deserved.get(name)) is not None),
                Decimal(0),
            )
            if total > pd.value:
                yield Problem(
                    (*parent.path, "deserved", name),
                    f"children's deserved {name} add up to {format_resource(name, total)}, "
                    f"more than this queue's {pd}", QUEUE_CHILDREN_OVER_DESERVED,
                )


def _check_plugin_fields(spec: Spec) -> Iterator[Problem]:
    """Queue fields the chosen Volcano plugin would ignore (`volcano_queue_plugin`).

    ``capacity`` never reads ``weight`` (Volcano v1.15 plugins/capacity/capacity.go): a weight
    other than the default 1 on a Kubernetes-only cluster would be accepted and ignored. On a
    cluster that also runs YARN the weight still sizes the CapacityScheduler queues.
    ``proportion`` never reads ``deserved``, so it is only chosen when no queue sets deserved.
    """
    if not spec.has_platform("kubernetes") or spec.has_platform("yarn") or not spec.queues or not spec.uses_volcano:
        return
    if volcano_queue_plugin(spec) != "capacity":
        return
    why = "the queues form a hierarchy" if uses_hierarchy(spec) else "a queue sets deserved"
    for q in spec.queues:
        if q.weight != 1:
            yield Problem(
                (*q.path, "weight"),
                f"Volcano's capacity plugin (used because {why}) never reads weight, so weight "
                f"{q.weight} would have no effect; set this queue's share as deserved instead and "
                "remove weight", QUEUE_WEIGHT_IGNORED,
            )


def _check_priority_classes(spec: Spec) -> Iterator[Problem]:
    defaults = [p for p in spec.priority_classes if p.global_default]
    for p in spec.priority_classes:
        if p.name.startswith("system-"):
            yield Problem(
                (*p.path, "name"), "PriorityClass names starting with 'system-' are reserved by Kubernetes", PRIORITY_CLASS_RESERVED
            )
    if len(defaults) > 1:
        names = ", ".join(p.name for p in defaults)
        for p in defaults:
            yield Problem(
                (*p.path, "globalDefault"), f"at most one PriorityClass may be globalDefault (found: {names})", PRIORITY_CLASS_DEFAULTS
            )


def check(spec: Spec) -> Iterator[Problem]:
    """All queue-tree, queue-resource and PriorityClass problems."""
    yield from _check_queue_tree(spec)
    yield from _check_queue_resources(spec)
    yield from _check_plugin_fields(spec)
    yield from _check_priority_classes(spec)
