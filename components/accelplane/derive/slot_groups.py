"""GPU task slots: what a Flink cluster's TaskManagers offer and how Flink packs slot groups into them.

Shared by `accelplane.checks.slot_groups` (fits, models, packing), the Flink builders (external
resource keys per GPU model, ``slot-groups.json``, standalone start scripts) and reports.

Flink 1.20 always runs the ``FineGrainedSlotManager``. A slot sharing group with its own resources
asks for a slot of exactly that ``ResourceProfile`` (cpu, task heap, managed memory, external
resources); the ``DefaultResourceAllocationStrategy`` serves the job's requirements one after
another, every slot of one requirement before the next, each slot from the first TaskManager
(registered or pending) whose free resources cover it in its own iteration order, and asks for a
new TaskManager of the default shape only when none does (Kubernetes, YARN). The order of the
requirements and of the TaskManagers is a hash-map order, so `pack` explores every order and
reports every TaskManager count Flink may end up with; a count that depends on the order cannot be
written into a PodGroup, and the checks reject such a combination.

Per-model names: where a standalone cluster's hosts have several GPU models each model is its own
Flink external resource, ``gpu-<normalised model>`` (the token of the YARN per-model type
``yarn.io/gpu-<normalised model>``, `accelplane.names.normalize_gpu_model`); otherwise the single
resource is ``gpu`` as everywhere else in accelplane.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal

from accelplane.derive.cluster_facts import GPU_RESOURCE, standalone_workers
from accelplane.derive.gpu_resources import (
    advertised_resources,
    candidate_pools,
    kubernetes_gpu_resource,
    stands_for,
)
from accelplane.digests import short_sha256
from accelplane.model import FlinkCluster, NodePool, SlotGroup, Spec
from accelplane.names import normalize_gpu_model

DEFAULT_GROUP = "default"
GROUP_FILE = "slot-groups.json"
GROUP_FILE_FORMAT = "accelplane.io/slot-groups/v1"
GROUP_FILE_DIR = "/opt/flink/accelplane"
"""Where the JobManager of an operator cluster finds ``slot-groups.json`` (the job helpers' default
path, ``accelplane.job_helpers``: ``/opt/flink/accelplane/slot-groups.json``)."""
GROUP_FILE_VOLUME = "accelplane-slot-groups"


def group_file_text(spec: Spec, cluster: FlinkCluster) -> str:
    """Text of ``slot-groups.json`` (sorted keys, two-space indent, final newline)."""
    return json.dumps(slot_groups_document(spec, cluster), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def group_configmap_name(spec: Spec, cluster: FlinkCluster) -> str:
    """Immutable, content-named ConfigMap that carries an operator cluster's ``slot-groups.json``
    into its JobManager pods: new groups are a new name, so the pod template changes and the pods
    roll (docs/pulumi.md, "ConfigMap update strategy")."""
    return f"accelplane-slot-groups-{cluster.name}-{short_sha256(group_file_text(spec, cluster))}"


def ships_group_file(cluster: FlinkCluster) -> bool:
    """True for an operator cluster with slot groups: the FlinkDeployment's JobManager, where the
    job's main method builds its slot sharing groups, mounts ``slot-groups.json`` from
    `group_configmap_name` (a native cluster's submitter mounts the submit ConfigMap instead)."""
    return cluster.target == "kubernetes-operator" and bool(cluster.slot_groups)
MIB = 2**20
# State budget of the packing search; beyond it the combination is rejected as underivable.
PACK_STATE_LIMIT = 20_000

# TaskExecutorProcessUtils defaults of Flink 1.20 (TaskManagerOptions).
_MEMORY_DEFAULTS: Mapping[str, str] = {
    "taskmanager.memory.managed.fraction": "0.4",
    "taskmanager.memory.network.fraction": "0.1",
    "taskmanager.memory.network.min": "64m",
    "taskmanager.memory.network.max": "1g",
    "taskmanager.memory.jvm-overhead.fraction": "0.1",
    "taskmanager.memory.jvm-overhead.min": "192m",
    "taskmanager.memory.jvm-overhead.max": "1g",
    "taskmanager.memory.jvm-metaspace.size": "256m",
    "taskmanager.memory.framework.heap.size": "128m",
    "taskmanager.memory.framework.off-heap.size": "128m",
    "taskmanager.memory.task.off-heap.size": "0",
}
# Keys that make Flink derive the TaskManager memory another way than from process.size; with slot
# groups accelplane must know the task heap and managed memory, so these are refused.
UNMODELLED_MEMORY_KEYS = (
    "taskmanager.memory.flink.size",
    "taskmanager.memory.task.heap.size",
    "taskmanager.memory.managed.size",
    "taskmanager.memory.network.fraction.legacy",
    "taskmanager.network.memory.fraction",
    "taskmanager.network.memory.min",
    "taskmanager.network.memory.max",
)
_UNITS = {
    "": 1, "b": 1, "bytes": 1, "k": 2**10, "kb": 2**10, "kibibytes": 2**10, "m": MIB, "mb": MIB,
    "mebibytes": MIB, "g": 2**30, "gb": 2**30, "gibibytes": 2**30, "t": 2**40, "tb": 2**40,
    "tebibytes": 2**40,
}  # fmt: skip
_MEMORY_RE = re.compile(r"\s*([0-9]+)\s*([a-zA-Z]*)\s*")


def model_resource_name(model: str) -> str:
    """Flink external resource name of a GPU model: ``gpu-<normalised model>``."""
    return f"{GPU_RESOURCE}-{normalize_gpu_model(model)}"


def host_pools(spec: Spec, cluster: FlinkCluster) -> list[NodePool]:
    """The pools that may host the TaskManagers: `candidate_pools`, on Kubernetes narrowed to the
    pools whose device plugin advertises the one resource the TaskManagers request
    (`kubernetes_gpu_resource`; a time-sliced pool renamed to ``nvidia.com/gpu.shared`` cannot
    run a TaskManager asking for ``nvidia.com/gpu``). DRA pools and other platforms: unchanged."""
    pools = candidate_pools(spec, cluster)
    if cluster.platform != "kubernetes" or any(p.gpu is not None and p.gpu.allocation != "devicePlugin" for p in pools):
        return pools
    resource = kubernetes_gpu_resource(spec, cluster)
    advertising = [p for p in pools if resource in advertised_resources(p)]
    return advertising or pools


def pool_models(spec: Spec, cluster: FlinkCluster) -> dict[str, str]:
    """Normalised model → model as first written, over the pools that may host the TaskManagers
    (`host_pools`)."""
    models: dict[str, str] = {}
    for pool in host_pools(spec, cluster):
        if pool.gpu is not None and pool.gpu.model:
            models.setdefault(normalize_gpu_model(pool.gpu.model), pool.gpu.model)
    return dict(sorted(models.items()))


def group_models_meant(spec: Spec, cluster: FlinkCluster, model: str) -> tuple[str, ...]:
    """The models of the cluster's host pools that a slot group's ``gpuModel`` stands for as a market
    name or shorthand by the GPU name table (``T4`` for ``Tesla T4``), sorted: the did-you-mean of
    a ``gpuModel`` no host has."""
    return tuple(
        sorted({p.gpu.model for p in candidate_pools(spec, cluster) if p.gpu is not None and p.gpu.model and stands_for(model, p)})
    )


def spans_models(spec: Spec, cluster: FlinkCluster) -> bool:
    """True for a standalone GPU cluster whose hosts have more than one GPU model."""
    return cluster.target == "standalone" and cluster.uses_gpus and len(pool_models(spec, cluster)) > 1


@dataclass(frozen=True)
class ModelResource:
    """One GPU external resource of a cluster's TaskManagers."""

    name: str
    model: str | None
    amount: int


def gpu_resources(spec: Spec, cluster: FlinkCluster) -> list[ModelResource]:
    """The cluster's GPU external resources: one per model where it spans models, else ``gpu``."""
    amount = cluster.gpus_per_task_manager
    if amount == 0:
        return []
    models = pool_models(spec, cluster)
    if spans_models(spec, cluster):
        return [ModelResource(model_resource_name(m), m, amount) for m in models.values()]
    gpu = cluster.task_manager.gpu
    model = gpu.model if gpu is not None and gpu.model else next(iter(models.values()), None)
    return [ModelResource(GPU_RESOURCE, model if len(models) <= 1 else None, amount)]


@dataclass(frozen=True)
class StandaloneHost:
    """A host of a standalone cluster: its TaskManagers and the GPU resources it serves."""

    host: str
    taskmanagers: int
    resources: tuple[tuple[str, int], ...]
    """(resource name, GPUs per node) for every model the host's pools give it."""


def host_script_name(host: str) -> str:
    """The start script of a standalone host's TaskManagers, ``<host>.sh`` (under
    ``flink/<cluster>/taskmanagers/``); checks keep it within the file-name limit."""
    return f"{host}.sh"


def standalone_hosts(spec: Spec, cluster: FlinkCluster) -> list[StandaloneHost]:
    """Hosts of a standalone GPU cluster whose pools list them, TaskManagers spread round-robin over
    them (pool, then host order, each host once); empty otherwise. Where the hosts have one GPU
    model, each serves the resource ``gpu`` with its GPUs per node (`standalone_workers`); where
    they span models, each model the host's pools give it."""
    if not spans_models(spec, cluster):
        return [
            StandaloneHost(host, count, ((GPU_RESOURCE, per_node),))
            for host, count, per_node in standalone_workers(spec, cluster)
        ]
    per_host: dict[str, dict[str, int]] = {}
    for pool in candidate_pools(spec, cluster):
        if pool.gpu is None or not pool.gpu.model:
            continue
        name = model_resource_name(pool.gpu.model)
        for host in pool.hosts:
            res = per_host.setdefault(host, {})
            res[name] = res.get(name, 0) + pool.gpu.per_node
    if not per_host:
        return []
    hosts = list(per_host)
    base, extra = divmod(cluster.task_manager.replicas, len(hosts))
    return [
        StandaloneHost(h, base + (1 if i < extra else 0), tuple(sorted(per_host[h].items())))
        for i, h in enumerate(hosts)
    ]


def group_resource(spec: Spec, cluster: FlinkCluster, group: SlotGroup) -> str | None:
    """External resource a group's slots ask for (None without GPUs or for an unknown model)."""
    if group.gpu == 0:
        return None
    if spans_models(spec, cluster):
        return model_resource_name(group.gpu_model) if group.gpu_model else None
    return GPU_RESOURCE


def parse_memory_size(value: object) -> int | None:
    """Bytes of a Flink ``MemorySize`` value (``64m``, ``1 gb``, ``1024``), None when unreadable."""
    match = _MEMORY_RE.fullmatch(str(value))
    if match is None or match.group(2).lower() not in _UNITS:
        return None
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


@dataclass(frozen=True)
class TaskManagerMemory:
    """Flink's split of a TaskManager's process memory (TaskExecutorProcessUtils), in bytes."""

    task_heap: int
    managed: int
    network: int


def taskmanager_memory(cluster: FlinkCluster) -> TaskManagerMemory | str:
    """Task heap and managed memory Flink derives from ``taskmanager.memory.process.size``, or why it
    cannot be derived here (a key that changes the derivation, an unreadable value)."""
    config = dict(cluster.config)
    for key in UNMODELLED_MEMORY_KEYS:
        if key in config:
            return f"config.{key} makes Flink size TaskManager memory another way; remove it (slot groups need the task heap derived from taskManager.memory)"
    values: dict[str, object] = {**_MEMORY_DEFAULTS, **{k: v for k, v in config.items() if k in _MEMORY_DEFAULTS}}

    def size(key: str) -> int:
        parsed = parse_memory_size(values[key])
        if parsed is None:
            raise ValueError(f"config.{key}: {values[key]!r} is not a Flink memory size")
        return parsed

    def fraction(key: str) -> Decimal:
        try:
            return Decimal(str(values[key]))
        except ArithmeticError as exc:
            raise ValueError(f"config.{key}: {values[key]!r} is not a fraction") from exc

    try:
        process = int(cluster.task_manager.memory.value)
        overhead = _clamp(_times(process, fraction("taskmanager.memory.jvm-overhead.fraction")),
                          size("taskmanager.memory.jvm-overhead.min"), size("taskmanager.memory.jvm-overhead.max"))
        flink = process - size("taskmanager.memory.jvm-metaspace.size") - overhead
        managed = _times(flink, fraction("taskmanager.memory.managed.fraction"))
        network = _clamp(_times(flink, fraction("taskmanager.memory.network.fraction")),
                         size("taskmanager.memory.network.min"), size("taskmanager.memory.network.max"))
        heap = (flink - size("taskmanager.memory.framework.heap.size") - size("taskmanager.memory.framework.off-heap.size")
                - size("taskmanager.memory.task.off-heap.size") - managed - network)
    except ValueError as exc:
        return str(exc)  # fmt: skip
    if heap <= 0:
        return f"taskManager.memory {process // MIB}Mi leaves no task heap after Flink's fixed parts"
    return TaskManagerMemory(heap, managed, network)


def _times(value: int, fraction: Decimal) -> int:
    """``MemorySize.multiply``: ``(long) (bytes * fraction)`` in double arithmetic, with the fraction
    read as a Java ``float`` (the memory fraction options are ``ConfigOption<Float>``), so the
    result is Flink's to the byte (0.4 of 832 MiB is 348966098 bytes, not 348966092)."""
    as_float: float = struct.unpack("f", struct.pack("f", float(fraction)))[0]
    return int(float(value) * as_float)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


Vector = tuple[Decimal, ...]
"""(cpu, task heap bytes, managed bytes, amount of each GPU resource in `resource_order`)."""


@dataclass(frozen=True)
class TaskManagerShape:
    """TaskManagers of one shape: where (a host, or ``None`` for every TaskManager alike), how
    many, and what each offers to slots."""

    host: str | None
    count: int
    cpu: Decimal
    memory: TaskManagerMemory
    gpus: tuple[tuple[str, int], ...]


def taskmanager_shapes(spec: Spec, cluster: FlinkCluster) -> list[TaskManagerShape] | str:
    """What the cluster's TaskManagers offer to slots, or why it cannot be derived."""
    memory = taskmanager_memory(cluster)
    if isinstance(memory, str):
        return memory
    cpu = Decimal(str(cluster.task_manager.cpu.number))
    hosts = standalone_hosts(spec, cluster) if spans_models(spec, cluster) else []
    amount = cluster.gpus_per_task_manager
    if hosts:
        return [
            TaskManagerShape(h.host, h.taskmanagers, cpu, memory, tuple((name, amount) for name, _ in h.resources))
            for h in hosts
            if h.taskmanagers
        ]
    gpus = tuple((r.name, r.amount) for r in gpu_resources(spec, cluster))
    return [TaskManagerShape(None, cluster.task_manager.replicas, cpu, memory, gpus)]


def resource_order(spec: Spec, cluster: FlinkCluster) -> list[str]:
    """GPU resource names in vector order."""
    return [r.name for r in gpu_resources(spec, cluster)]


def shape_vector(shape: TaskManagerShape, order: list[str]) -> Vector:
    """What one TaskManager of ``shape`` offers, as a vector."""
    gpus = dict(shape.gpus)
    return (shape.cpu, Decimal(shape.memory.task_heap), Decimal(shape.memory.managed),
            *(Decimal(gpus.get(n, 0)) for n in order))  # fmt: skip


def group_vector(spec: Spec, cluster: FlinkCluster, group: SlotGroup, order: list[str]) -> Vector:
    """What one slot of ``group`` asks for, as a vector (exact bytes as Flink compares them)."""
    resource = group_resource(spec, cluster, group)
    return (group.cpu.value, Decimal(int(group.task_heap.value)), Decimal(int(group.managed_memory.value)),
            *(group.gpu if n == resource else Decimal(0) for n in order))  # fmt: skip


def fits(need: Vector, free: Vector) -> bool:
    """True when every field of ``free`` covers ``need`` (ResourceProfile.allFieldsNoLessThan)."""
    return all(f >= n for f, n in zip(free, need, strict=True))


def _minus(free: Vector, need: Vector) -> Vector:
    return tuple(f - n for f, n in zip(free, need, strict=True))


@dataclass(frozen=True)
class Packing:
    """Outcome of packing a cluster's slot groups the way Flink does, over every order.

    ``taskmanagers``: every TaskManager count Flink may end with (Kubernetes/YARN: it starts that
    many; standalone: the fixed count when every order succeeds). ``failing``: some order leaves a
    slot unserved (standalone: Flink reports NoResourceAvailableException). ``too_complex``: the
    search exceeded its budget.
    """

    taskmanagers: frozenset[int]
    failing: bool
    too_complex: bool = False


def pack(spec: Spec, cluster: FlinkCluster) -> Packing | str:
    """Pack the cluster's slot groups as Flink's DefaultResourceAllocationStrategy may, in every
    order of requirements and TaskManagers; or why the TaskManagers cannot be described."""
    shapes = taskmanager_shapes(spec, cluster)
    if isinstance(shapes, str):
        return shapes
    order = resource_order(spec, cluster)
    elastic = cluster.target != "standalone"
    # Groups with the same profile are one requirement in Flink (a ResourceCounter per profile).
    demands: dict[Vector, int] = {}
    for g in cluster.slot_groups:
        if g.slots:
            vec = group_vector(spec, cluster, g, order)
            demands[vec] = demands.get(vec, 0) + g.slots
    profiles = sorted(demands)
    template = shape_vector(shapes[0], order)
    start_bins: tuple[Vector, ...] = ()
    if not elastic:
        start_bins = tuple(sorted(shape_vector(s, order) for s in shapes for _ in range(s.count)))
    start = (start_bins, tuple(demands[p] for p in profiles), -1)
    outcomes: set[int] = set()
    failing = False
    seen = {start}
    stack = [start]
    while stack:
        if len(seen) > PACK_STATE_LIMIT:
            return Packing(frozenset(outcomes), failing, too_complex=True)
        bins, left, current = stack.pop()
        if current == -1 or left[current] == 0:
            nexts = [i for i, n in enumerate(left) if n]
            if not nexts:
                outcomes.add(len(bins))
                continue
            successors = [(bins, left, i) for i in nexts]
        else:
            need = profiles[current]
            rest = tuple(n - 1 if i == current else n for i, n in enumerate(left))
            options = {b for b in bins if fits(need, b)}
            successors = []
            for b in sorted(options):
                new = list(bins)
                new.remove(b)
                new.append(_minus(b, need))
                successors.append((tuple(sorted(new)), rest, current))
            if not options:
                if elastic and fits(need, template):
                    successors.append((tuple(sorted((*bins, _minus(template, need)))), rest, current))
                else:
                    failing = True
        for s in successors:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    if not elastic:
        return Packing(frozenset({len(start_bins)} if outcomes else set()), failing)
    return Packing(frozenset(outcomes), failing)


def slot_groups_document(spec: Spec, cluster: FlinkCluster) -> dict[str, object]:
    """The machine-readable group file (``flink/<cluster>/slot-groups.json``) the job helpers read.

    Memory is given in whole MiB as ``SlotSharingGroup.Builder.setTaskHeapMemoryMB`` takes it; GPU
    groups name the Flink external resource and the model (``gpuModel``) they were declared for.
    """
    groups = []
    for g in cluster.slot_groups:
        entry: dict[str, object] = {
            "name": g.name,
            "slots": g.slots,
            "cpuCores": float(g.cpu.value),
            "taskHeapMemoryMB": int(g.task_heap.value) // MIB,
            "managedMemoryMB": int(g.managed_memory.value) // MIB,
        }
        resource = group_resource(spec, cluster, g)
        if resource is not None:
            entry["externalResources"] = {resource: float(g.gpu)}
            entry["gpuResource"] = resource
            entry["gpuAmount"] = float(g.gpu)
        if g.gpu_model:
            entry["gpuModel"] = g.gpu_model
        groups.append(entry)
    return {
        "format": GROUP_FILE_FORMAT,
        "cluster": cluster.name,
        "spec": spec.name,
        "gpuResources": [
            {"name": r.name, "model": r.model, "amountPerTaskManager": r.amount} for r in gpu_resources(spec, cluster)
        ],
        "groups": groups,
    }


def iter_gpu_groups(cluster: FlinkCluster) -> Iterator[SlotGroup]:
    """Groups that ask for GPUs."""
    return (g for g in cluster.slot_groups if g.gpu > 0)
