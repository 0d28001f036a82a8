"""The CapacityScheduler queue tree from the same queue model the Volcano queues use.

Hadoop's CapacityScheduler (legacy queue mode, the default) lets a queue's ``capacity`` be a
percentage of its parent or an absolute resource vector ``[memory=…,vcores=…,yarn.io/gpu=…]``, but
never both in one tree: siblings must share a mode, and a non-root parent and its children must
both be absolute or both not (``AbstractParentQueue.setChildQueues``). So the whole tree uses one
mode, chosen from the spec:

* **percentage** — no queue limits a resource YARN schedules (cpu, memory or GPUs in ``deserved``
  or ``capability``), or the spec has no YARN node pools to size the cluster from. ``capacity`` = the queue's ``weight`` share among its siblings, in hundredths
  of a percent, summing to exactly 100 per parent (largest remainder, ties by queue name);
  ``maximum-capacity`` = 100.
* **absolute** — some queue sets such a limit. Starting from the cluster totals of the YARN node
  pools (memory MiB, vcores, every GPU type), each queue gets
  ``maximum-capacity`` = its ``capability`` (cpu → vcores, memory → MiB, GPUs → ``yarn.io/gpu`` and
  the per-model types of that vendor), capped at the parent's maximum, and
  ``capacity`` = its ``deserved`` where set; what the parent has left in a dimension is shared by
  ``weight`` among the siblings that did not set it; each value is capped at the queue's maximum.

Both modes: ``reclaimable: false`` → ``disable_preemption=true``; ``priority`` → ``priority`` (with
``ordering-policy=priority-utilization`` on the parent, without which Hadoop ignores it).
The plan records why it cannot be written (`QueuePlan.infeasible`); `accelplane.checks.yarn` reports
those, so the check reports exactly what would stop the builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from accelplane.derive.gpu_resources import YARN_GPU
from accelplane.derive.queues import ROOT_QUEUE, children_by_parent, queue_depths, queue_parent
from accelplane.derive.yarn_labels import cluster_labels, label_pools, labels_enabled
from accelplane.derive.yarn_types import (
    MIB,
    ConfProperty,
    TypeTotals,
    cluster_totals,
    needed_types,
    vendor_totals,
    yarn_pools,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import VENDOR_RESOURCE, Queue, ResourceList, Spec

YARN_QUEUE_TYPE_UNKNOWN = declare(
    'AP5030', ERROR, 'a queue limits a yarn.io/gpu* type the cluster does not declare',
    fix='use nvidia.com/gpu with yarn.nodeLabels',
)
YARN_DESERVED_OVER_PARTITION = declare(
    'AP5031', ERROR, "queues' deserved amounts exceed what the YARN pools provide",
    fix='lower deserved to fit',
)
YARN_QUEUE_WITHOUT_MEMORY = declare(
    'AP5032', ERROR, 'a queue would get 0 MiB of memory as its YARN capacity',
    fix='give it a larger weight, deserved or capability memory',
)
YARN_POOL_NEEDS_CPU_MEMORY = declare(
    'AP5033', ERROR, 'a YARN pool lacks cpu or memory for absolute capacities',
    fix='set cpu and memory on the pool',
)

PREFIX = "yarn.scheduler.capacity."
RESOURCE_CALCULATOR = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
DEFAULT_QUEUE = "default"
HUNDREDTHS = 10_000  # 100.00 %
MEMORY, VCORES = "memory", "vcores"
YARN_MAPPED = frozenset({"cpu", "memory", *VENDOR_RESOURCE.values()})
Mode = Literal["percentage", "absolute"]
Vector = dict[str, int]


@dataclass
class QueuePlan:
    """Everything ``capacity-scheduler.xml`` says, or the problems that prevent writing it."""

    mode: Mode
    properties: list[ConfProperty] = field(default_factory=list)
    infeasible: list[Problem] = field(default_factory=list)
    """Why the plan cannot be written (`accelplane.checks.yarn` reports these; builders never see a
    spec that has any, because the pipeline runs the checks first)."""
    without_memory: set[str] = field(default_factory=set)
    """Queues already reported for a capacity without memory (reported once, not per partition)."""
    overcommitted: dict[str, tuple[list[Queue], list[str]]] = field(default_factory=dict)
    """Per parent queue path: its children whose deserved amounts do not fit, and each dimension ×
    partition that does not (one finding names them all: one cause, one finding)."""

    def overcommit(self, path: str, queues: list[Queue], what: str) -> None:
        """Record that the deserved amounts of ``queues`` under ``path`` exceed ``what``."""
        known, whats = self.overcommitted.setdefault(path, ([], []))
        known.extend(q for q in queues if q not in known)
        whats.append(what)

    def report_overcommitted(self) -> None:
        """One `YARN_DESERVED_OVER_PARTITION` per parent, at the first of its children named."""
        for path, (queues, whats) in sorted(self.overcommitted.items()):
            first = min(queues, key=lambda q: q.name)
            names = ", ".join(repr(q.name) for q in sorted(queues, key=lambda q: q.name))
            self.infeasible.append(
                Problem(
                    (*first.path, "deserved"),
                    f"the deserved amounts of the queues under {path} ({names}) add up to more than "
                    f"there is: {'; '.join(whats)}; lower deserved to fit",
                    YARN_DESERVED_OVER_PARTITION,
                )
            )


def distribute(total: int, weights: Sequence[tuple[str, int]]) -> dict[str, int]:
    """Split ``total`` units by integer weights so the parts add up to exactly ``total``.

    Largest-remainder method: each part is ``floor(total × w / W)``; the units left over go to the
    largest remainders, ties broken by name — deterministic, independent of input order.
    """
    weight_sum = sum(w for _, w in weights)
    if not weights or weight_sum == 0:
        return {name: 0 for name, _ in weights}
    base = {name: total * w // weight_sum for name, w in weights}
    left = total - sum(base.values())
    order = sorted(weights, key=lambda e: (-(total * e[1] % weight_sum), e[0]))
    for name, _ in order[:left]:
        base[name] += 1
    return base


def format_percent(hundredths: int) -> str:
    """``3334`` → ``"33.34"``, ``7500`` → ``"75"``, ``3350`` → ``"33.5"``."""
    text = str(Decimal(hundredths) / 100)
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_vector(vector: Vector) -> str:
    """Hadoop's absolute-resource syntax, memory first, no spaces: ``[memory=1024,vcores=2,…]``."""
    return "[" + ",".join(f"{k}={v}" for k, v in vector.items()) + "]"


def _label(dim: str) -> str:
    return "memory (MiB)" if dim == MEMORY else dim


Children = dict[str | None, list[Queue]]
"""`children_by_parent`, computed once per plan (a scan per parent made the plan quadratic)."""


def _queue_path(spec: Spec, queue: Queue) -> str:
    names = [queue.name]
    current = queue
    while (parent := queue_parent(current)) is not None:
        nxt = spec.queue(parent)
        assert nxt is not None
        names.append(nxt.name)
        current = nxt
    return ".".join([ROOT_QUEUE, *reversed(names)])


def _maps_to_yarn(name: str) -> bool:
    return name in YARN_MAPPED or name.startswith(f"{YARN_GPU}")


def queue_mode(spec: Spec) -> Mode:
    """``absolute`` when any queue limits a resource YARN schedules and the spec describes the
    NodeManagers (YARN node pools) to compute absolute amounts from, else ``percentage``."""
    if not yarn_pools(spec):
        return "percentage"
    for q in spec.queues:
        if any(_maps_to_yarn(n) for n in (*q.capability.names(), *q.deserved.names())):
            return "absolute"
    return "percentage"


def tree_is_sound(spec: Spec) -> bool:
    """True when every queue's parent chain reaches root (no gaps, no cycles, no 'root' entry)."""
    depths = queue_depths(spec)
    return all(q.name != ROOT_QUEUE and depths[q.name] is not None for q in spec.queues)


def _dims(spec: Spec) -> list[str]:
    return [MEMORY, VCORES, *needed_types(spec)]


@dataclass(frozen=True)
class Partition:
    """One node partition the CapacityScheduler accounts separately: the default partition
    (``label`` None) or a node label (`accelplane.derive.yarn_labels`)."""

    label: str | None
    vendors: dict[str, int]
    """GPUs per vendor in the partition (a capability that leaves a vendor out counts its total)."""
    cap_deserved: bool
    """With node labels a queue's deserved amounts apply in every partition, up to its size."""

    def key(self, qpath: str, name: str) -> str:
        """Property of a queue in this partition: ``<qpath>.<name>`` or
        ``<qpath>.accessible-node-labels.<label>.<name>``."""
        if self.label is None:
            return f"{PREFIX}{qpath}.{name}"
        return f"{PREFIX}{qpath}.accessible-node-labels.{self.label}.{name}"

    def where(self) -> str:
        """How messages name the partition."""
        return "" if self.label is None else f" in node partition {self.label}"


def _explicit(
    spec: Spec,
    queue: Queue,
    resources: ResourceList,
    field_name: str,
    fill_vendors: bool,
    part: Partition,
) -> tuple[Vector, list[Problem]]:
    """The YARN dimensions a Volcano resource list sets explicitly.

    ``fill_vendors`` (capability): a vendor the list does not mention counts as its total in the
    partition, so a cap on ``nvidia.com/gpu`` does not starve AMD GPUs on ``yarn.io/gpu``.
    """
    out: Vector = {}
    problems: list[Problem] = []
    declared = set(needed_types(spec))
    vendor_amounts: dict[str, int] = {}
    for name, q in resources.items:
        value = q.value
        if name == "cpu":
            out[VCORES] = int(value)
        elif name == "memory":
            out[MEMORY] = int(value // MIB)
        elif name in VENDOR_RESOURCE.values():
            vendor = next(v for v, r in VENDOR_RESOURCE.items() if r == name)
            vendor_amounts[vendor] = int(value)
        elif name.startswith(YARN_GPU):
            if name in declared:
                out[name] = int(value)
            elif part.label is None:
                problems.append(
                    Problem(
                        (*queue.path, field_name, name),
                        f"{name} is not a YARN resource type of this cluster "
                        f"(declared: {', '.join(sorted(declared)) or 'none'}); to reserve GPUs of one "
                        "model use yarn.nodeLabels (a partition per model) and nvidia.com/gpu", YARN_QUEUE_TYPE_UNKNOWN,
                    )
                )
    if vendor_amounts and YARN_GPU not in out and YARN_GPU in declared:
        if fill_vendors:
            out[YARN_GPU] = sum(vendor_amounts.get(v, n) for v, n in part.vendors.items())
        else:
            out[YARN_GPU] = sum(vendor_amounts.values())
    return out, problems


def _percentage(
    spec: Spec, plan: QueuePlan, parent: Queue | None, path: str, part: Partition, children_of: Children
) -> None:
    children = children_of.get(parent.name if parent else None, [])
    if not children:
        return
    if part.label is None:
        plan.properties.append(ConfProperty(f"{PREFIX}{path}.queues", ",".join(q.name for q in children)))
        _ordering(spec, plan, children, path)
    shares = distribute(HUNDREDTHS, [(q.name, q.weight) for q in children])
    total_weight = sum(q.weight for q in children)
    for q in children:
        qpath = f"{path}.{q.name}"
        if part.label is None:
            _accessible_labels(spec, plan, qpath)
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "capacity"),
                format_percent(shares[q.name]),
                f"weight {q.weight} of {total_weight} among the children of {path}{part.where()}",
            )
        )
        plan.properties.append(ConfProperty(part.key(qpath, "maximum-capacity"), "100"))
        if part.label is None:
            _queue_extras(plan, q, qpath)
        _percentage(spec, plan, q, qpath, part, children_of)


def _accessible_labels(spec: Spec, plan: QueuePlan, qpath: str) -> None:
    labels = cluster_labels(spec)
    if labels:
        plan.properties.append(
            ConfProperty(
                f"{PREFIX}{qpath}.accessible-node-labels",
                ",".join(labels),
                "every queue may use every GPU-model partition, with the capacities below",
            )
        )


def _ordering(spec: Spec, plan: QueuePlan, children: list[Queue], path: str) -> None:
    if any(q.priority is not None for q in children):
        plan.properties.append(
            ConfProperty(
                f"{PREFIX}{path}.ordering-policy",
                "priority-utilization",
                "children have queue priorities; only this policy honours them",
            )
        )


def _queue_extras(plan: QueuePlan, q: Queue, qpath: str) -> None:
    if q.priority is not None:
        plan.properties.append(ConfProperty(f"{PREFIX}{qpath}.priority", str(q.priority)))
    if q.reclaimable is False:
        plan.properties.append(
            ConfProperty(
                f"{PREFIX}{qpath}.disable_preemption",
                "true",
                "reclaimable: false — containers of this queue are never preempted",
            )
        )


def _absolute(
    spec: Spec,
    plan: QueuePlan,
    parent: Queue | None,
    path: str,
    pmin: Vector,
    pmax: Vector,
    part: Partition,
    children_of: Children,
) -> None:
    children = children_of.get(parent.name if parent else None, [])
    if not children:
        return
    if part.label is None:
        plan.properties.append(ConfProperty(f"{PREFIX}{path}.queues", ",".join(q.name for q in children)))
        _ordering(spec, plan, children, path)
    dims = list(pmin)
    maxes: dict[str, Vector] = {}
    deserved: dict[str, Vector] = {}
    for q in children:
        cap, problems = _explicit(spec, q, q.capability, "capability", True, part)
        des, more = _explicit(spec, q, q.deserved, "deserved", False, part)
        plan.infeasible.extend(problems + more)
        maxes[q.name] = {d: min(cap.get(d, pmax[d]), pmax[d]) for d in dims}
        if part.cap_deserved:
            des = {d: min(v, pmin[d]) for d, v in des.items() if d in pmin}
        deserved[q.name] = des
    mins: dict[str, Vector] = {q.name: {} for q in children}
    for d in dims:
        explicit = {q.name: deserved[q.name][d] for q in children if d in deserved[q.name]}
        rest = pmin[d] - sum(explicit.values())
        if rest < 0:
            where = f" of queue {parent.name!r}" if parent else ""
            plan.overcommit(
                path,
                [c for c in children if c.name in explicit],
                f"{_label(d)} {sum(explicit.values())} > {pmin[d]}{where}"
                f"{part.where() or ' in the default partition'}",
            )
            rest = 0
        shares = distribute(rest, [(q.name, q.weight) for q in children if q.name not in explicit])
        for q in children:
            value = explicit.get(q.name, shares.get(q.name, 0))
            mins[q.name][d] = min(value, maxes[q.name][d])
    for q in children:
        qpath = f"{path}.{q.name}"
        if mins[q.name][MEMORY] < 1 and q.name not in plan.without_memory:
            plan.without_memory.add(q.name)
            plan.infeasible.append(
                Problem(
                    q.path,
                    f"queue {q.name!r} would get 0 MiB of memory as its YARN capacity{part.where()}; Hadoop "
                    "ignores an absolute capacity without memory — give it a larger weight, deserved "
                    "memory or capability memory (or more memory to the YARN node pools)", YARN_QUEUE_WITHOUT_MEMORY,
                )
            )
        if part.label is None:
            _accessible_labels(spec, plan, qpath)
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "capacity"),
                format_vector(mins[q.name]),
                "deserved where set, else a weight share of what the parent has left",
            )
        )
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "maximum-capacity"),
                format_vector(maxes[q.name]),
                "capability where set, capped at the parent maximum",
            )
        )
        if part.label is None:
            _queue_extras(plan, q, qpath)
        _absolute(spec, plan, q, qpath, mins[q.name], maxes[q.name], part, children_of)


def _check_cluster_deserved(spec: Spec, plan: QueuePlan, totals: TypeTotals) -> None:
    """With node labels deserved amounts are capped per partition, so a top-level deserved the whole
    cluster cannot give is reported here rather than silently cut."""
    whole = Partition(None, vendor_totals(spec), False)
    cluster: Vector = {MEMORY: totals.memory_mib, VCORES: totals.vcores}
    for t in _dims(spec)[2:]:
        cluster[t] = totals.gpu(t)
    top = children_by_parent(spec).get(None, [])
    asked: dict[str, dict[str, int]] = {}
    for q in top:
        des, _ = _explicit(spec, q, q.deserved, "deserved", False, whole)
        asked[q.name] = des
    for d, have in cluster.items():
        explicit = {name: v[d] for name, v in asked.items() if d in v}
        if sum(explicit.values()) > have:
            plan.overcommit(
                ROOT_QUEUE,
                [c for c in top if c.name in explicit],
                f"{_label(d)} {sum(explicit.values())} > {have} in the whole cluster",
            )


def partitions(spec: Spec) -> list[Partition]:
    """The default partition, then one per node label (sorted)."""
    labelled = labels_enabled(spec)
    return [
        Partition(label, vendor_totals(spec, label_pools(spec, label)), labelled)
        for label in [None, *cluster_labels(spec)]
    ]


def plan_queues(spec: Spec) -> QueuePlan:
    """Compute the capacity-scheduler properties (or the problems) for a YARN cluster."""
    mode = queue_mode(spec)
    plan = QueuePlan(mode)
    plan.properties.append(
        ConfProperty(
            f"{PREFIX}resource-calculator",
            RESOURCE_CALCULATOR,
            "required for GPU scheduling: schedules memory, vcores and every resource type",
        )
    )
    if not spec.queues:
        plan.properties += [
            ConfProperty(f"{PREFIX}{ROOT_QUEUE}.queues", DEFAULT_QUEUE, "the spec declares no queues"),
        ]
        _accessible_labels(spec, plan, f"{ROOT_QUEUE}.{DEFAULT_QUEUE}")
        for part in partitions(spec):
            plan.properties += [
                ConfProperty(part.key(f"{ROOT_QUEUE}.{DEFAULT_QUEUE}", "capacity"), "100"),
                ConfProperty(part.key(f"{ROOT_QUEUE}.{DEFAULT_QUEUE}", "maximum-capacity"), "100"),
            ]
        return plan
    if not tree_is_sound(spec):
        return plan  # the scheduling check reports the broken tree
    children_of = children_by_parent(spec)
    if mode == "percentage":
        for part in partitions(spec):
            _percentage(spec, plan, None, ROOT_QUEUE, part, children_of)
        return plan
    totals = cluster_totals(spec)
    if not totals.complete:
        for pool in yarn_pools(spec):
            if pool.cpu is None or pool.memory is None:
                missing = " and ".join(
                    k for k, v in (("cpu", pool.cpu), ("memory", pool.memory)) if v is None
                )
                plan.infeasible.append(
                    Problem(
                        pool.path,
                        f"YARN node pool {pool.name!r} must set {missing}: queues limit cpu/memory/GPUs, so "
                        "capacity-scheduler.xml uses absolute resources computed from the pools' totals", YARN_POOL_NEEDS_CPU_MEMORY,
                    )
                )
        return plan
    if labels_enabled(spec):
        _check_cluster_deserved(spec, plan, totals)
    for part in partitions(spec):
        pools = label_pools(spec, part.label)
        part_totals = cluster_totals(spec, pools)
        root: Vector = {MEMORY: part_totals.memory_mib, VCORES: part_totals.vcores}
        for t in _dims(spec)[2:]:
            root[t] = part_totals.gpu(t)
        if part.label is None and part.cap_deserved and not pools:
            # no pool in the default partition: the YARN check reports that one cause, not "0 MiB"
            # and over-committed queues there too (the spec is invalid, so nothing is written)
            continue
        _absolute(spec, plan, None, ROOT_QUEUE, dict(root), dict(root), part, children_of)
    plan.report_overcommitted()
    return plan


def queue_paths(spec: Spec) -> dict[str, str]:
    """Queue name → CapacityScheduler queue path (``root.<parent>.<name>``)."""
    if not tree_is_sound(spec):
        return {}
    return {q.name: _queue_path(spec, q) for q in spec.queues}
