"""The numbers a queue's YARN capacity vectors carry are the numbers the spec says.

In absolute mode (`accelplane.derive.yarn_capacity.queue_mode`) every queue's ``deserved`` and
``capability`` become ``[memory=…,vcores=…,yarn.io/gpu=…]`` vectors in ``capacity-scheduler.xml``.
Hadoop reads each entry with ``Long.valueOf`` (``CapacitySchedulerConfiguration
.updateResourceValuesFromConfig``, apache/hadoop 3.4.1 ``rel/release-3.4.1``,
CapacitySchedulerConfiguration.java:2899-2945), so the vector holds whole numbers and accelplane
writes cpu and GPUs rounded down (``int(value)``):

* a ``capability`` cpu below one core (``500m``) becomes ``vcores=0`` in ``maximum-capacity``. A
  YARN container has at least one vcore (``yarn.scheduler.minimum-allocation-vcores``, default 1)
  and ``AbstractCSQueue.accept`` refuses every allocation that does not fit the queue's maximum
  with ``Resources.fitsIn`` (every dimension, DominantResourceCalculator), so no container — not
  even the ApplicationMaster — is ever allocated in the queue or, for a parent, below it: a Flink
  session submitted there stays ACCEPTED. Error.
* any other cpu or GPU amount that is not whole (``2500m`` → 2, ``deserved: {cpu: 500m}`` → 0) is
  valid but not what the spec says. Warning, naming what accelplane writes.

Memory is written in whole MiB (``value // 2^20``): less than 1 MiB becomes ``memory=0``, a vector
Hadoop ignores as a whole ("Memory has to be configured always"), which `YARN_QUEUE_WITHOUT_MEMORY`
(AP5032) already reports, naming the value. A remainder below 1 MiB of a larger amount
(``64G`` = 61035.16 MiB) is no finding: YARN counts memory in MiB everywhere (the NodeManagers'
``memory-mb`` too). ``gpuModels.<model>.deserved``/``capability`` are integers in the schema.

Bounds: ``Long.valueOf`` throws ``NumberFormatException`` beyond 2^63-1 (the ResourceManager does
not start) and ``VCORES`` is stored with ``resourceValue.intValue()``, which wraps a value beyond
2^31-1 to a negative vcore count without a word. The written values are at most the YARN pools'
totals of a partition, so a pool that is itself over its bound (`accelplane.checks.yarn_numbers`,
AP5060) is not reported again here.

`tests/yarn/test_queue_numbers.py` drives Hadoop's own ``Resource``, ``UnitsConversionUtil`` and
``Resources.fitsIn`` (pyspark's hadoop-client-api jar) through the vector parse and the fit test.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.checks.yarn_numbers import JAVA_INT_MAX, JAVA_LONG_MAX, YARN_NUMBER_TOO_LARGE, pool_in_range
from accelplane.derive.gpu_resources import YARN_GPU
from accelplane.derive.yarn_capacity import MEMORY, VCORES, plan_queues, queue_mode
from accelplane.derive.yarn_types import cluster_totals, needed_types, yarn_pools
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import VENDOR_RESOURCE, Queue, Spec

YARN_QUEUE_CAPABILITY_NO_VCORE = declare(
    "AP5080", ERROR,
    "a queue's capability cpu is below one core: its YARN maximum-capacity gets vcores=0 and no container can run in it",
    fix="write whole cores, e.g. cpu: 1",
)  # fmt: skip
YARN_QUEUE_FRACTION_TRUNCATED = declare(
    "AP5081", WARNING,
    "a queue's cpu or GPU amount is not whole: its YARN capacity vector counts whole units, so accelplane writes it rounded down",
    fix="write whole cores or GPUs, e.g. cpu: 2",
)  # fmt: skip
YARN_QUEUE_VCORES_WRAP = declare(
    "AP5082", ERROR,
    "the YARN pools of a partition have more than 2^31-1 vcores: Hadoop wraps a queue vector's vcores to a negative number",
    fix="give the YARN pools of the partition at most 2147483647 vcores in all (fewer nodes or less cpu)",
)  # fmt: skip

_GPU_NAMES = frozenset(VENDOR_RESOURCE.values())


def _whole_units(name: str) -> str | None:
    """What a queue amount ``name`` becomes in the vector (vcores, GPUs), None for memory/others."""
    if name == "cpu":
        return "vcores"
    if name in _GPU_NAMES or name.startswith(YARN_GPU):
        return "GPUs"
    return None


def _truncated(spec: Spec, q: Queue) -> Iterator[Problem]:
    declared = set(needed_types(spec))
    for field_name, amounts in (("capability", q.capability), ("deserved", q.deserved)):
        key = "maximum-capacity" if field_name == "capability" else "capacity"
        for name, amount in amounts.items:
            units = _whole_units(name)
            value = amount.value
            if units is None or value == value.to_integral_value():
                continue
            if units == "GPUs" and (YARN_GPU if name in _GPU_NAMES else name) not in declared:
                continue  # not written: the cluster declares no such YARN resource type
            written = int(value)
            path = (*q.path, field_name, name)
            if name == "cpu" and field_name == "capability" and written == 0:
                yield Problem(
                    path,
                    f"queue {q.name!r}: capability cpu {amount.text} is less than one core; YARN counts whole "
                    f"vcores, so its {key} is written with vcores=0, and every YARN container (the "
                    "ApplicationMaster too) needs at least one vcore: the CapacityScheduler never allocates "
                    "one in this queue or below it, and an application stays ACCEPTED; write whole cores, "
                    "e.g. cpu: 1",
                    YARN_QUEUE_CAPABILITY_NO_VCORE,
                )
                continue
            verb = "writes" if units == "vcores" else "counts it as"
            example = f"{name}: {max(written, 1) if field_name == 'capability' else written or 1}"
            yield Problem(
                path,
                f"queue {q.name!r}: {field_name} {name} {amount.text} is {value.normalize()} {units}, but "
                f"YARN capacity vectors count whole {units}; accelplane {verb} {written} in its {key}; "
                f"write whole {'cores' if name == 'cpu' else 'GPUs'}, e.g. {example}",
                YARN_QUEUE_FRACTION_TRUNCATED,
            )


def _bounds(spec: Spec) -> Iterator[Problem]:
    """One finding per kind of overflow, however many vectors carry it."""
    if not all(pool_in_range(pool) for pool in yarn_pools(spec)):
        return  # AP5060 reports the pool over its own bound at the pool
    totals = cluster_totals(spec)
    if totals.vcores <= JAVA_INT_MAX and max([totals.memory_mib, *(n for _, n in totals.gpus)]) <= JAVA_LONG_MAX:
        return  # every vector is at most its partition's totals: skip planning the queues again
    wrap: dict[str, int] = {}
    over: dict[str, tuple[str, int]] = {}
    for share in plan_queues(spec).shares:
        where = share.label or "the default partition"
        for vector in (share.capacity, share.maximum):
            for dim, value in (vector or {}).items():
                if dim == VCORES and value > JAVA_INT_MAX:
                    wrap[where] = max(wrap.get(where, 0), value)
                if value > JAVA_LONG_MAX and (dim not in over or value > over[dim][1]):
                    over[dim] = (where, value)
    if wrap:
        parts = "; ".join(f"{v} in {w}" for w, v in sorted(wrap.items()))
        yield Problem(
            ("nodePools",),
            f"the YARN pools add up to more vcores than a Java int holds ({parts}); capacity-scheduler.xml "
            "writes queue vectors with that many vcores and Hadoop stores them with Long.intValue() "
            "(CapacitySchedulerConfiguration.updateResourceValuesFromConfig), which wraps them to a "
            "negative number; give the YARN pools of the partition at most 2147483647 vcores in all",
            YARN_QUEUE_VCORES_WRAP,
        )
    for dim, (where, value) in sorted(over.items()):
        label = "memory (MiB)" if dim == MEMORY else dim
        yield Problem(
            ("nodePools",),
            f"the YARN pools' {label} in {where} add up to {value}, which capacity-scheduler.xml writes in "
            "queue vectors; Hadoop reads them with Long.valueOf "
            f"(CapacitySchedulerConfiguration.updateResourceValuesFromConfig): at most {JAVA_LONG_MAX}; the "
            "ResourceManager would fail to start with a NumberFormatException; use a realistic value",
            YARN_NUMBER_TOO_LARGE,
        )


def check(spec: Spec) -> Iterator[Problem]:
    """Whole vcores/GPUs in every queue amount written into a YARN vector; vectors in Java range."""
    if spec.yarn is None and not yarn_pools(spec):
        return
    if queue_mode(spec) != "absolute":
        return
    for q in spec.queues:
        yield from _truncated(spec, q)
    yield from _bounds(spec)
