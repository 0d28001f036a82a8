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

With ``yarn.nodeLabels`` each GPU model's NodeManagers form a partition of their own
(`accelplane.derive.yarn_labels`). Only the queues that list the model in ``gpuModels`` (and their
ancestors) may use it (``accessible-node-labels``; every other queue gets ``" "``, Hadoop's "no
label", since an unset list inherits the parent's and root's is ``*``). In the partition:

* percentage mode: those siblings share 100 % by ``weight``;
* absolute mode: a queue's GPUs are its ``gpuModels.<model>.deserved`` or a weight share of what
  the parent has left there, at most its GPU maximum; its memory and vcores there are the same fraction of the parent's as
  its GPUs (the NodeManagers' cpu and memory serve the GPUs); ``maximum-capacity`` is
  ``gpuModels.<model>.capability`` GPUs and the queue's cpu/memory ``capability``, capped at the
  parent's maximum.

The cluster-wide ``deserved``/``capability`` apply in the default partition (CPU-only and
model-less GPU NodeManagers). `QueuePlan.shares` records every queue's figures per partition for
the report.

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
from accelplane.derive.queues import (
    ROOT_QUEUE,
    children_by_parent,
    queue_ancestors,
    queue_depths,
)
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
PARTITION_DESERVED_TOO_LARGE = declare(
    "AP5601",
    ERROR,
    "the gpuModels deserved GPUs of sibling queues exceed what their parent has of that model",
    fix="lower gpuModels.<model>.deserved so the siblings' sum fits the parent's GPUs of the model",
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
    shares: list[PartitionShare] = field(default_factory=list)
    """Every queue's capacity in every partition it may use, in the order written."""

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


@dataclass(frozen=True)
class PartitionShare:
    """A queue's figures in one node partition, as ``capacity-scheduler.xml`` states them."""

    queue: str
    path: str
    label: str | None
    model: str | None
    capacity: Vector | None
    """Absolute mode: the guaranteed vector; None in percentage mode."""
    maximum: Vector | None
    percent: int | None = None
    """Percentage mode: capacity in hundredths of a percent of the parent's share of the partition."""


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


def format_fraction(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: ``Decimal('0.10')`` → ``"0.1"``,
    ``Decimal('1.00')`` → ``"1"`` (how Hadoop's capacity keys are written)."""
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_percent(hundredths: int) -> str:
    """``3334`` → ``"33.34"``, ``7500`` → ``"75"``, ``3350`` → ``"33.5"``."""
    return format_fraction(Decimal(hundredths) / 100)


def format_vector(vector: Vector) -> str:
    """Hadoop's absolute-resource syntax, memory first, no spaces: ``[memory=1024,vcores=2,…]``."""
    return "[" + ",".join(f"{k}={v}" for k, v in vector.items()) + "]"


def _label(dim: str) -> str:
    return "memory (MiB)" if dim == MEMORY else dim


Children = dict[str | None, list[Queue]]
"""`children_by_parent`, computed once per plan (a scan per parent made the plan quadratic)."""


def _queue_path(spec: Spec, queue: Queue) -> str:
    return ".".join([ROOT_QUEUE, *reversed([q.name for q in queue_ancestors(spec, queue)])])


def _maps_to_yarn(name: str) -> bool:
    return name in YARN_MAPPED or name.startswith(f"{YARN_GPU}")


def queue_mode(spec: Spec) -> Mode:
    """``absolute`` when any queue limits a resource YARN schedules (GPUs of a model in
    ``gpuModels`` included) and the spec describes the NodeManagers (YARN node pools) to compute
    absolute amounts from, else ``percentage``."""
    if not yarn_pools(spec):
        return "percentage"
    for q in spec.queues:
        if any(_maps_to_yarn(n) for n in (*q.capability.names(), *q.deserved.names())):
            return "absolute"
        if labels_enabled(spec) and any(g.deserved is not None or g.capability is not None for g in q.gpu_models):
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
    """With node labels the cluster-wide deserved amounts apply in the default partition, up to its size."""
    model: str | None = None
    """The GPU model of a labelled partition's NodeManagers."""

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


@dataclass(frozen=True)
class Tree:
    """What every step of a plan asks of the queue tree, computed once per plan."""

    children_of: Children
    access: dict[str, frozenset[str]]
    labels: dict[str, str]
    """GPU model → its partition's node label."""

    def children(self, parent: Queue | None, part: Partition) -> list[Queue]:
        """The children of ``parent`` that may use ``part`` (all of them in the default partition)."""
        children = self.children_of.get(parent.name if parent else None, [])
        if part.label is None:
            return children
        return [q for q in children if part.model in self.access[q.name]]


def _percentage(spec: Spec, plan: QueuePlan, parent: Queue | None, path: str, part: Partition, tree: Tree) -> None:
    children = tree.children(parent, part)
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
            _accessible_labels(spec, plan, qpath, q, tree)
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "capacity"),
                format_percent(shares[q.name]),
                f"weight {q.weight} of {total_weight} among the children of {path}"
                + (f" that list {part.model} in gpuModels" if part.label else "")
                + part.where(),
            )
        )
        plan.properties.append(ConfProperty(part.key(qpath, "maximum-capacity"), "100"))
        plan.shares.append(PartitionShare(q.name, qpath, part.label, part.model, None, None, shares[q.name]))
        if part.label is None:
            _queue_extras(plan, q, qpath)
        _percentage(spec, plan, q, qpath, part, tree)


NO_LABEL = " "
"""Hadoop's value for "no node label" (``CapacitySchedulerConfiguration.getAccessibleNodeLabels``
drops blank entries; an unset list would inherit the parent's, and root's is ``*``)."""


def _accessible_labels(spec: Spec, plan: QueuePlan, qpath: str, q: Queue | None, tree: Tree | None) -> None:
    labels = cluster_labels(spec)
    if not labels:
        return
    if q is None or tree is None:  # the spec declares no queues: root.default uses every partition
        plan.properties.append(
            ConfProperty(f"{PREFIX}{qpath}.accessible-node-labels", ",".join(labels), "the only queue")
        )
        return
    mine = sorted(lb for m, lb in tree.labels.items() if m in tree.access[q.name])
    plan.properties.append(
        ConfProperty(
            f"{PREFIX}{qpath}.accessible-node-labels",
            ",".join(mine) or NO_LABEL,
            "the partitions of the GPU models this queue or a queue below it may use (gpuModels, or every "
            "partition of the vendors a queue without gpuModels gives itself GPUs of)"
            if mine
            else "no GPU partition: the queue and those below it list no gpuModels and give themselves no GPUs",
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


def _gpu_partition_split(
    spec: Spec,
    plan: QueuePlan,
    parent: Queue | None,
    path: str,
    pmin: Vector,
    children: list[Queue],
    part: Partition,
    maxes: dict[str, Vector],
) -> dict[str, Vector]:
    """Guaranteed vectors of the children that may use a GPU partition: GPUs from
    ``gpuModels.<model>.deserved`` or a weight share of the rest (at most the queue's GPU maximum),
    memory and vcores in proportion to those GPUs."""
    assert part.model is not None
    gpu_dims = [d for d in pmin if d not in (MEMORY, VCORES)]
    have = max((pmin[d] for d in gpu_dims), default=0)  # every GPU of the partition is of its model
    explicit: dict[str, int] = {}
    for q in children:
        entry = q.gpu_model(part.model)
        if entry is not None and entry.deserved is not None:
            explicit[q.name] = entry.deserved
    rest = have - sum(explicit.values())
    if rest < 0:
        where = f"queue {parent.name!r} gets" if parent else "the YARN node pools provide"
        for name in sorted(explicit):
            q = next(c for c in children if c.name == name)
            entry = q.gpu_model(part.model)
            assert entry is not None
            plan.infeasible.append(
                Problem(
                    (*entry.path, "deserved"),
                    f"the gpuModels deserved {part.model} GPUs of the queues under {path} add up to "
                    f"{sum(explicit.values())}, more than {where} ({have}){part.where()}; lower deserved to fit",
                    PARTITION_DESERVED_TOO_LARGE,
                )
            )
        rest = 0
    # a queue without gpuModels: its share of its cluster-wide deserved (`implicit_share`), within
    # what is left (a cluster-wide deserved above the GPUs is reported where it is written)
    for q in children:
        if q.name not in explicit and (share := implicit_share(spec, q, q.deserved, part.model)) is not None:
            explicit[q.name] = min(share, rest)
            rest -= explicit[q.name]
    shares = distribute(rest, [(q.name, q.weight) for q in children if q.name not in explicit])
    out: dict[str, Vector] = {}
    for q in children:
        gpus = explicit.get(q.name, shares.get(q.name, 0))
        gpus = min([gpus, *(maxes[q.name][d] for d in gpu_dims if pmin[d] > 0)])
        out[q.name] = {
            d: (min(gpus, pmin[d]) if d in gpu_dims else (pmin[d] * gpus // have if have else 0)) for d in pmin
        }
    return out


def _gpu_partition_max(spec: Spec, q: Queue, cap: Vector, pmax: Vector, part: Partition) -> Vector:
    """``maximum-capacity`` of a queue in a GPU partition: its cpu/memory/GPU capability and
    ``gpuModels.<model>.capability``, each capped at the parent's maximum."""
    assert part.model is not None
    entry = q.gpu_model(part.model)
    out = {d: min(cap.get(d, pmax[d]), pmax[d]) for d in pmax}
    limit = entry.capability if entry is not None else implicit_share(spec, q, q.capability, part.model)
    if limit is not None:
        for d in out:
            if d not in (MEMORY, VCORES):
                out[d] = min(out[d], limit)
    return out


def _absolute(
    spec: Spec,
    plan: QueuePlan,
    parent: Queue | None,
    path: str,
    pmin: Vector,
    pmax: Vector,
    part: Partition,
    tree: Tree,
) -> None:
    children = tree.children(parent, part)
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
        if part.model is not None:
            maxes[q.name] = _gpu_partition_max(spec, q, cap, pmax, part)
        else:
            maxes[q.name] = {d: min(cap.get(d, pmax[d]), pmax[d]) for d in dims}
        if part.cap_deserved:
            des = {d: min(v, pmin[d]) for d, v in des.items() if d in pmin}
        deserved[q.name] = des
    mins: dict[str, Vector] = {q.name: {} for q in children}
    if part.model is not None:
        split = _gpu_partition_split(spec, plan, parent, path, pmin, children, part, maxes)
        mins = {name: {d: min(v, maxes[name][d]) for d, v in vec.items()} for name, vec in split.items()}
    else:
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
        gpu_share = part.model is None or any(v for d, v in mins[q.name].items() if d not in (MEMORY, VCORES))
        if mins[q.name][MEMORY] < 1 and gpu_share and q.name not in plan.without_memory:
            plan.without_memory.add(q.name)
            below = _below_mib(q)
            because, fix = (
                (
                    f" (its {below[0]} memory {below[1]} is less than 1 MiB, and YARN vectors count whole MiB)",
                    "write that memory as at least 1Mi, e.g. memory: 1Gi",
                )
                if below
                else (
                    "",
                    "give it a larger weight, deserved memory or capability memory (or more memory to "
                    "the YARN node pools)",
                )
            )
            plan.infeasible.append(
                Problem(
                    (*q.path, below[0], "memory") if below else q.path,
                    f"queue {q.name!r} would get 0 MiB of memory as its YARN capacity{part.where()}{because}; "
                    f"Hadoop ignores an absolute capacity without memory — {fix}",
                    YARN_QUEUE_WITHOUT_MEMORY,
                )
            )
        if part.label is None:
            _accessible_labels(spec, plan, qpath, q, tree)
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "capacity"),
                format_vector(mins[q.name]),
                "deserved where set, else a weight share of what the parent has left"
                if part.model is None
                else f"gpuModels deserved {part.model} GPUs (else a weight share of the parent's), "
                "memory and vcores in proportion",
            )
        )
        plan.properties.append(
            ConfProperty(
                part.key(qpath, "maximum-capacity"),
                format_vector(maxes[q.name]),
                "capability where set, capped at the parent maximum",
            )
        )
        plan.shares.append(PartitionShare(q.name, qpath, part.label, part.model, mins[q.name], maxes[q.name]))
        if part.label is None:
            _queue_extras(plan, q, qpath)
        _absolute(spec, plan, q, qpath, mins[q.name], maxes[q.name], part, tree)


def _below_mib(q: Queue) -> tuple[str, str] | None:
    """The field and text of a queue's own memory amount below 1 MiB (YARN vectors count whole MiB,
    so it becomes 0 MiB), or None."""
    for field_name, amounts in (("capability", q.capability), ("deserved", q.deserved)):
        memory = amounts.get("memory")
        if memory is not None and 0 < memory.value < MIB:
            return field_name, memory.text
    return None


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
    out = []
    for label in [None, *cluster_labels(spec)]:
        pools = label_pools(spec, label)
        model = pools[0].gpu.model if label is not None and pools[0].gpu is not None else None
        out.append(Partition(label, vendor_totals(spec, pools), labelled, model))
    return out


def gpu_vendors(queue: Queue) -> frozenset[str]:
    """GPU vendors the queue's own ``deserved`` or ``capability`` gives more than 0 GPUs of."""
    return frozenset(
        v
        for v, resource in VENDOR_RESOURCE.items()
        for amounts in (queue.deserved, queue.capability)
        if (q := amounts.get(resource)) is not None and q.value > 0
    )


def _partition_vendor(spec: Spec, label: str) -> str | None:
    """The GPU vendor of a labelled partition's NodeManagers."""
    pools = label_pools(spec, label)
    return pools[0].gpu.vendor if pools and pools[0].gpu is not None else None


def implicit_gpu_access(spec: Spec) -> dict[str, frozenset[str]]:
    """Leaf queues that list no ``gpuModels`` but give themselves GPUs (``deserved`` or
    ``capability`` of a vendor's resource above 0) → every GPU model partition of those vendors:
    the natural default (a queue that asks for GPUs may use them wherever they are); its GPU
    amounts are split across those partitions in proportion to their GPUs (`implicit_share`).
    CPU-only queues (no GPU amount, or 0) get none; ``gpuModels`` restricts."""

    def make() -> dict[str, frozenset[str]]:
        if not labels_enabled(spec):
            return {}
        children_of = children_by_parent(spec)
        by_vendor: dict[str, set[str]] = {}
        for part in partitions(spec):
            if part.label is not None and part.model is not None:
                vendor = _partition_vendor(spec, part.label)
                if vendor is not None:
                    by_vendor.setdefault(vendor, set()).add(part.model)
        out: dict[str, frozenset[str]] = {}
        for q in spec.queues:
            if q.gpu_models or children_of.get(q.name):
                continue
            models = frozenset().union(*(by_vendor.get(v, set()) for v in gpu_vendors(q)))
            if models:
                out[q.name] = models
        return out

    return spec.memo.get_or_make("yarn_implicit_gpu_access", spec, make)


def implicit_share(spec: Spec, queue: Queue, amounts: ResourceList, model: str) -> int | None:
    """The part of a queue's cluster-wide GPU amount (its ``deserved`` or ``capability`` of the
    model's vendor) that falls to the model's partition, for a queue with `implicit_gpu_access`:
    split across the vendor's partitions in proportion to their GPUs (largest remainder, ties by
    label). None when the queue's access is not implicit or the list sets no such amount."""
    models = implicit_gpu_access(spec).get(queue.name)
    if models is None or model not in models:
        return None
    parts = [p for p in partitions(spec) if p.label is not None and p.model in models]
    vendor = next((_partition_vendor(spec, p.label) for p in parts if p.model == model and p.label), None)
    resource = VENDOR_RESOURCE.get(vendor) if vendor is not None else None
    amount = amounts.get(resource) if resource is not None else None
    if amount is None:
        return None
    weights = [(p.model or "", p.vendors.get(vendor or "", 0)) for p in parts if _partition_vendor(spec, p.label or "") == vendor]
    return distribute(int(amount.value), weights).get(model, 0)


def gpu_model_access(spec: Spec) -> dict[str, frozenset[str]]:
    """Queue name → the GPU models whose partitions it may use: those it lists in ``gpuModels``
    (or, listing none, every partition of the vendors it gives itself GPUs of:
    `implicit_gpu_access`) and those any queue below it may use (Hadoop requires a child's labels
    to be its parent's too)."""
    children_of = children_by_parent(spec)
    implicit = implicit_gpu_access(spec)
    out: dict[str, frozenset[str]] = {}

    def walk(q: Queue, seen: frozenset[str]) -> frozenset[str]:
        if q.name in out:
            return out[q.name]
        models = {g.model for g in q.gpu_models} | implicit.get(q.name, frozenset())
        for c in children_of.get(q.name, []):
            if c.name not in seen:
                models |= walk(c, seen | {c.name})
        out[q.name] = frozenset(models)
        return out[q.name]

    for q in spec.queues:
        walk(q, frozenset({q.name}))
    return out


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
        _accessible_labels(spec, plan, f"{ROOT_QUEUE}.{DEFAULT_QUEUE}", None, None)
        for part in partitions(spec):
            plan.properties += [
                ConfProperty(part.key(f"{ROOT_QUEUE}.{DEFAULT_QUEUE}", "capacity"), "100"),
                ConfProperty(part.key(f"{ROOT_QUEUE}.{DEFAULT_QUEUE}", "maximum-capacity"), "100"),
            ]
        return plan
    if not tree_is_sound(spec):
        return plan  # the scheduling check reports the broken tree
    parts = partitions(spec)
    tree = Tree(
        children_by_parent(spec),
        gpu_model_access(spec),
        {p.model: p.label for p in parts if p.model is not None and p.label is not None},
    )
    if mode == "percentage":
        for part in parts:
            _percentage(spec, plan, None, ROOT_QUEUE, part, tree)
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
    for part in parts:
        pools = label_pools(spec, part.label)
        part_totals = cluster_totals(spec, pools)
        root: Vector = {MEMORY: part_totals.memory_mib, VCORES: part_totals.vcores}
        for t in _dims(spec)[2:]:
            root[t] = part_totals.gpu(t)
        if part.label is None and part.cap_deserved and not pools:
            # no pool in the default partition: the YARN check reports that one cause, not "0 MiB"
            # and over-committed queues there too (the spec is invalid, so nothing is written)
            continue
        _absolute(spec, plan, None, ROOT_QUEUE, dict(root), dict(root), part, tree)
    plan.report_overcommitted()
    return plan


def queue_paths(spec: Spec) -> dict[str, str]:
    """Queue name → CapacityScheduler queue path (``root.<parent>.<name>``)."""
    if not tree_is_sound(spec):
        return {}
    return {q.name: _queue_path(spec, q) for q in spec.queues}
