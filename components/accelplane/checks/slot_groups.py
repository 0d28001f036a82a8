"""Checks on GPU task slots (``flink.clusters[].slotGroups``).

* a ``default`` group (the group of every operator that names none: without its own
  resources it would get TaskManager total ÷ slots, GPUs included, and make GPU jobs
  unschedulable), whole-MiB memory, GPU amounts Flink and the device helper can honour;
* every group asks only for a GPU model and resources the cluster's TaskManagers have, and fits
  one TaskManager;
* the scheduler settings that would silently ignore group resources (reactive mode) are refused;
  the generated keys set the rest (`accelplane.derive.flink_keys.slot_group_keys`);
* the TaskManager count Flink ends with when it packs the groups (every order, see
  `accelplane.derive.slot_groups.pack`) is ``taskManager.replicas``, so PodGroup ``minResources``,
  queue checks and reports built from ``replicas`` are what Flink starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from accelplane.derive.flink_keys import whole_mebibytes
from accelplane.derive.slot_groups import (
    DEFAULT_GROUP,
    fits,
    group_models_meant,
    group_vector,
    host_pools,
    pack,
    pool_models,
    resource_order,
    shape_vector,
    spans_models,
    taskmanager_shapes,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, SlotGroup, Spec
from accelplane.names import normalize_gpu_model

SLOT_GROUP_CPU = declare(
    'AP4001', ERROR, 'a slot group has no cpu',
    fix='give the group cpu above 0',
)
SLOT_GROUP_HEAP = declare(
    'AP4002', ERROR, "a slot group's task heap is not a positive whole number of MiB",
    fix='write it in whole MiB, e.g. 512Mi',
)
SLOT_GROUP_MANAGED = declare(
    'AP4003', ERROR, "a slot group's managed memory is not a whole number of MiB",
    fix='write it in whole MiB or 0',
)
SLOT_GROUP_GPU_FRACTION = declare(
    'AP4004', ERROR, 'a slot group asks for a fraction of GPUs above 1',
    fix='use a whole number or a fraction below 1',
)
SLOT_GROUP_MODEL_UNUSED = declare(
    'AP4101', WARNING, 'gpuModel on a slot group without GPUs has no effect',
    fix='remove gpuModel or set gpu',
)
SLOT_GROUP_GPU_WITHOUT_TASKMANAGER_GPU = declare(
    'AP4005', ERROR, 'a slot group asks for GPUs the TaskManagers do not have',
    fix='remove gpu or give the TaskManagers GPUs',
)
SLOT_GROUP_MODEL_NEEDED = declare(
    'AP4006', ERROR, 'hosts have several GPU models and the group names none',
    fix='set gpuModel',
)
SLOT_GROUP_MODEL_ABSENT = declare(
    'AP4007', ERROR, "no host of the cluster has the group's GPU model",
    fix='fix gpuModel',
)
SLOT_GROUP_MODEL_MISMATCH = declare(
    'AP4008', ERROR, "the group's GPU model differs from the TaskManagers'",
    fix='fix gpuModel or taskManager.gpu',
)
SLOT_GROUP_TASKMANAGER_SHAPE = declare(
    'AP4009', ERROR, 'the TaskManager memory cannot be split for slot groups',
    fix='fix taskManager.memory as the message says',
)
SLOT_GROUP_TOO_BIG = declare(
    'AP4010', ERROR, 'one slot of a group does not fit any TaskManager',
    fix='shrink the group or grow taskManager',
)
SLOT_GROUP_TOO_MANY_PACKINGS = declare(
    'AP4011', ERROR, 'too many packings to derive the TaskManager count',
    fix='use fewer distinct group shapes or fewer slots',
)
SLOT_GROUP_NO_ROOM = declare(
    'AP4012', ERROR, "the groups' slots do not always fit the TaskManagers",
    fix='add TaskManagers or shrink the groups',
)
SLOT_GROUP_COUNT_VARIES = declare(
    'AP4013', ERROR, 'Flink may start a varying number of TaskManagers for the groups',
    fix='make the groups divide a TaskManager evenly',
)
SLOT_GROUP_REPLICAS = declare(
    'AP4014', ERROR, 'taskManager.replicas differs from what Flink packs the groups into',
    fix='set replicas to the count the message names',
)
SLOT_GROUP_REACTIVE = declare(
    'AP4015', ERROR, 'reactive mode ignores slot group resources',
    fix='remove scheduler-mode or slotGroups',
)
SLOT_GROUP_FLINK_VERSION = declare(
    'AP4016', ERROR, 'GPU slot groups on a Flink version they are not verified with',
    fix='use Flink 1.20',
)
SLOT_GROUP_DEFAULT_MISSING = declare(
    'AP4017', ERROR, "GPU slot groups without a group named 'default'",
    fix='declare a group named default',
)

SUPPORTED_VERSIONS = ((1, 20),)
_FIELDS = ("cpu", "taskHeap", "managedMemory")


def _check_group(spec: Spec, c: FlinkCluster, g: SlotGroup) -> Iterator[Problem]:
    if g.cpu.value <= 0:
        yield Problem((*g.path, "cpu"), "must be more than 0 (Flink requires cpu cores for a group with resources)", SLOT_GROUP_CPU)
    if not whole_mebibytes(g.task_heap):
        yield Problem((*g.path, "taskHeap"), "must be a positive whole number of MiB (e.g. 512Mi)", SLOT_GROUP_HEAP)
    if g.managed_memory.value and not whole_mebibytes(g.managed_memory):
        yield Problem((*g.path, "managedMemory"), "must be a whole number of MiB (e.g. 256Mi) or 0", SLOT_GROUP_MANAGED)
    if g.gpu > 1 and g.gpu != g.gpu.to_integral_value():
        yield Problem(
            (*g.path, "gpu"),
            f"{g.gpu} GPUs: use a whole number of GPUs or a fraction below 1 (slots sharing one device); "
            "a slot cannot own part of a second device", SLOT_GROUP_GPU_FRACTION,
        )
    if g.gpu == 0:
        if g.gpu_model is not None:
            yield Problem((*g.path, "gpuModel"), "the group asks for no GPU (gpu is 0), so a model means nothing; remove gpuModel or set gpu", SLOT_GROUP_MODEL_UNUSED)
        return
    amount = c.gpus_per_task_manager
    if amount == 0:
        yield Problem((*g.path, "gpu"), "the cluster's TaskManagers have no GPUs (taskManager.gpu); remove gpu or give the TaskManagers GPUs", SLOT_GROUP_GPU_WITHOUT_TASKMANAGER_GPU)
        return
    models = pool_models(spec, c)
    known = ", ".join(repr(m) for m in models.values()) or "none named"
    if spans_models(spec, c):
        if g.gpu_model is None:
            yield Problem(
                (*g.path, "gpuModel"),
                f"the cluster's hosts have several GPU models ({known}); name the model this group needs", SLOT_GROUP_MODEL_NEEDED,
            )
        elif normalize_gpu_model(g.gpu_model) not in models:
            yield Problem(
                (*g.path, "gpuModel"),
                f"no host of this cluster has {g.gpu_model!r} GPUs (models: {known}){_meant(spec, c, g.gpu_model)}",
                SLOT_GROUP_MODEL_ABSENT,
            )
    elif g.gpu_model is not None:
        have = [m for m in models if m == normalize_gpu_model(g.gpu_model)]
        if have and len(models) > 1:
            return  # the TaskManagers may land on another model: one finding per cluster (`_check_models_pinned`)
        if not have:
            yield Problem(
                (*g.path, "gpuModel"),
                f"the cluster's TaskManagers run on {known} GPUs, not {g.gpu_model!r}; every TaskManager "
                f"of this cluster is alike, so fix gpuModel or taskManager.gpu{_meant(spec, c, g.gpu_model)}",
                SLOT_GROUP_MODEL_MISMATCH,
            )


def _check_models_pinned(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    """One finding for a cluster whose TaskManagers may land on pools of several GPU models (no
    pool or model pinned, every such pool advertising the resource they request) while a slot
    group names a model: every TaskManager is alike, so the group's model is not guaranteed."""
    if spans_models(spec, c) or c.task_manager.gpu is None:
        return
    models = pool_models(spec, c)
    named = sorted({g.gpu_model for g in c.slot_groups if g.gpu_model is not None and g.gpu > 0})
    if len(models) < 2 or not [m for m in named if normalize_gpu_model(m) in models]:
        return
    pools = ", ".join(p.name for p in host_pools(spec, c))
    yield Problem(
        c.field_path("taskManager", "gpu"),
        f"slot groups name GPU model(s) {', '.join(repr(m) for m in named)}, but the TaskManagers may run on "
        f"pools {pools} ({', '.join(repr(m) for m in models.values())}): every TaskManager of this cluster "
        "is alike and requests the same resource, so no group gets a model it names for sure; pin "
        "taskManager.gpu.model (or pool) to one model, or split the groups into one cluster per model",
        SLOT_GROUP_MODEL_MISMATCH,
    )


def _meant(spec: Spec, c: FlinkCluster, model: str) -> str:
    """``; did you mean 'Tesla T4'?`` when ``model`` is a shorthand of a host pool's model, else ''."""
    meant = group_models_meant(spec, c, model)
    return f"; did you mean {' or '.join(repr(m) for m in meant)}?" if meant else ""


def _check_fit(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    shapes = taskmanager_shapes(spec, c)
    if isinstance(shapes, str):
        yield Problem(c.field_path("taskManager", "memory"), shapes, SLOT_GROUP_TASKMANAGER_SHAPE)
        return
    order = resource_order(spec, c)
    offers = [shape_vector(s, order) for s in shapes]
    for g in c.slot_groups:
        need = group_vector(spec, c, g, order)
        if any(fits(need, o) for o in offers):
            continue
        best = offers[0]
        short = [
            f"{field} {need[i]} > {best[i]}" if i == 0 else f"{field} {int(need[i]) // 2**20}Mi > {int(best[i]) // 2**20}Mi"
            for i, field in enumerate(_FIELDS)
            if need[i] > max(o[i] for o in offers)
        ]
        short += [
            f"{name} {need[3 + k]} > {max(o[3 + k] for o in offers)}"
            for k, name in enumerate(order)
            if need[3 + k] > max(o[3 + k] for o in offers)
        ]
        yield Problem(
            g.path,
            f"one slot of group {g.name!r} does not fit any TaskManager ({'; '.join(short) or 'no TaskManager offers all of it at once'}); "
            "a slot lives in one TaskManager: shrink the group or grow taskManager (task heap and managed memory "
            "are Flink's split of taskManager.memory)", SLOT_GROUP_TOO_BIG,
        )


def _check_packing(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    result = pack(spec, c)
    if isinstance(result, str):
        return  # reported by _check_fit
    path = c.field_path("taskManager", "replicas")
    replicas = c.task_manager.replicas
    if result.too_complex:
        yield Problem(
            (*c.path, "slotGroups"),
            "too many ways to pack these groups to derive the TaskManager count Flink ends with; use fewer "
            "distinct group shapes or fewer slots", SLOT_GROUP_TOO_MANY_PACKINGS,
        )
        return
    if c.target == "standalone":
        if result.failing:
            yield Problem(
                path,
                f"the slot groups' slots do not always fit the {replicas} TaskManagers: in some order Flink "
                "places them, a slot finds no TaskManager with room and the job fails with "
                "NoResourceAvailableException; add TaskManagers or shrink the groups", SLOT_GROUP_NO_ROOM,
            )
        return
    counts = sorted(result.taskmanagers)
    if len(counts) > 1:
        yield Problem(
            path,
            f"Flink may start anywhere from {counts[0]} to {counts[-1]} TaskManagers for these slot groups, "
            "depending on the order it serves them; the PodGroup and queue checks need one count: make the "
            "groups divide a TaskManager evenly", SLOT_GROUP_COUNT_VARIES,
        )
    elif counts and counts[0] != replicas:
        yield Problem(
            path,
            f"Flink packs the slot groups into {counts[0]} TaskManager(s), not {replicas}; set replicas to "
            f"{counts[0]} (the PodGroup's minResources and the queue checks are derived from it)", SLOT_GROUP_REPLICAS,
        )


def _check_config(c: FlinkCluster) -> Iterator[Problem]:
    config = dict(c.config)
    mode = str(config.get("scheduler-mode", "")).lower()
    if mode == "reactive":
        yield Problem(
            c.field_path("config", "scheduler-mode"),
            "reactive mode runs the adaptive scheduler, which ignores slot group resources; remove "
            "scheduler-mode or slotGroups", SLOT_GROUP_REACTIVE,
        )


def _check_cluster(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    groups = c.slot_groups
    if c.version_tuple not in SUPPORTED_VERSIONS:
        yield Problem(
            (*c.path, "slotGroups"),
            f"GPU slot groups are verified with Flink 1.20 (fine-grained slot manager, scheduler keys); "
            f"this cluster runs {c.version}", SLOT_GROUP_FLINK_VERSION,
        )
        return
    # Duplicate names are reported by the generic named-list check (references).
    if DEFAULT_GROUP not in {g.name for g in groups}:
        yield Problem(
            (*c.path, "slotGroups"),
            "declare a group named 'default' (e.g. cpu 0.5, taskHeap 256Mi): operators that name no group "
            "land in it, and without resources of its own Flink gives each of its slots TaskManager total ÷ "
            "taskManager.slots, GPUs included, which leaves the GPU groups no room", SLOT_GROUP_DEFAULT_MISSING,
        )
    bad = False
    for g in groups:
        problems = list(_check_group(spec, c, g))
        bad = bad or bool(problems)
        yield from problems
    pinned = list(_check_models_pinned(spec, c))
    yield from pinned
    yield from _check_config(c)
    if bad or pinned:
        return
    fit = list(_check_fit(spec, c))
    yield from fit
    if not fit:
        yield from _check_packing(spec, c)


def check(spec: Spec) -> Iterator[Problem]:
    """Every slot group problem of every Flink cluster."""
    for c in spec.flink_clusters:
        if c.slot_groups:
            yield from _check_cluster(spec, c)


def total_gpu_slots(c: FlinkCluster) -> Decimal:
    """GPUs the groups' slots hold at once (report)."""
    return sum((g.gpu * g.slots for g in c.slot_groups), Decimal(0))
