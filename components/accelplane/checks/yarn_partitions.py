"""Checks of the queues' shares of YARN's GPU-model partitions (``queues[].gpuModels``).

With ``yarn.nodeLabels`` every GPU model's NodeManagers are a partition of their own, and only the
queues that list the model in ``gpuModels`` may use it (`accelplane.derive.yarn_capacity`). These
checks find the specs whose GPU shares would silently come to nothing: a model no partition has, a
GPU amount on a queue that reaches no partition, a Flink cluster whose queue may not use its
TaskManagers' partition, a partition no queue may use.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.queues import children_by_parent
from accelplane.derive.yarn_capacity import gpu_model_access, partitions
from accelplane.derive.yarn_labels import label_pools, labels_enabled, taskmanager_label
from accelplane.derive.yarn_types import vendor_totals, yarn_gpu_clusters
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import VENDOR_RESOURCE, FlinkCluster, Queue, Spec

GPU_MODEL_NOT_A_PARTITION = declare(
    "AP5602",
    ERROR,
    "a queue's gpuModels names a GPU model that no YARN node partition has",
    fix="use the gpu.model of a YARN node pool (each model is a partition with yarn.nodeLabels)",
)
GPU_MODELS_WITHOUT_LABELS = declare(
    "AP5603",
    WARNING,
    "queues list gpuModels, which have no effect without YARN node labels (one finding for all of them)",
    fix="set yarn.nodeLabels: true (one partition per GPU model) or remove gpuModels from the queues named",
)
GPUS_REACH_NO_PARTITION = declare(
    "AP5604",
    ERROR,
    "a queue's GPU capability/deserved reaches no YARN partition (a parent queue whose queues list no gpuModels)",
    fix="list the GPU models it may use: gpuModels: {<gpu.model>: {deserved: N}}",
)
FLINK_QUEUE_WITHOUT_PARTITION = declare(
    "AP5605",
    ERROR,
    "a Flink cluster's queue may not use the GPU partition of its TaskManagers",
    fix="add the TaskManagers' GPU model to the queue's gpuModels",
)
PARTITION_WITHOUT_QUEUE = declare(
    "AP5606",
    WARNING,
    "no queue may use a GPU-model partition: its NodeManagers stay idle",
    fix="list the model in the gpuModels of the queues that should use it",
    whole_spec=True,
)
DESERVED_OVER_CAPABILITY = declare(
    "AP5607",
    WARNING,
    "gpuModels deserved exceeds capability; the capacity written is the capability",
    fix="lower deserved to at most capability",
)


def _vendor_of(resource: str) -> str | None:
    return next((v for v, r in VENDOR_RESOURCE.items() if r == resource), None)


def _models_without_labels(spec: Spec, queues: list[Queue]) -> Problem:
    """The one finding for every queue's ``gpuModels`` when node labels are off: one root cause (no
    partitions), so one finding, at the setting that would turn partitions on (``yarn.nodeLabels``;
    without a YARN platform, at the first queue's ``gpuModels``, since there is nothing to turn on)."""
    names = ", ".join(repr(q.name) for q in queues)
    listed = f"queue{'s' if len(queues) > 1 else ''} {names} list{'' if len(queues) > 1 else 's'} gpuModels"
    if spec.has_platform("yarn"):
        return Problem(
            ("yarn", "nodeLabels"),
            f"{listed}, which only YARN node partitions use, but yarn.nodeLabels is off, so they "
            "have no effect; set yarn.nodeLabels: true (one partition per GPU model) or remove gpuModels "
            f"from {names}",
            GPU_MODELS_WITHOUT_LABELS,
        )
    return Problem(
        (*queues[0].path, "gpuModels"),
        f"{listed}, which only YARN node partitions use, but the cluster has no YARN platform, so they "
        f"have no effect; remove gpuModels from {names}",
        GPU_MODELS_WITHOUT_LABELS,
    )


def check(spec: Spec) -> Iterator[Problem]:
    """Problems of the queues' GPU-model partition shares."""
    with_models = [q for q in spec.queues if q.gpu_models]
    if not labels_enabled(spec):
        if with_models and not (spec.uses_kueue and not spec.has_platform("yarn")):
            # Kueue reads gpuModels as per-model ClusterQueue quotas (`accelplane.checks.kueue`)
            yield _models_without_labels(spec, with_models)
        return
    models = {p.model: p.label for p in partitions(spec) if p.model is not None}
    for q in with_models:
        for g in q.gpu_models:
            if g.model not in models:
                yield Problem(
                    g.path,
                    f"queue {q.name!r}: no YARN node pool has GPUs of model {g.model!r}, so this "
                    f"share would give nothing; use one of: {', '.join(sorted(models)) or 'none'}",
                    GPU_MODEL_NOT_A_PARTITION,
                )
            elif g.deserved is not None and g.capability is not None and g.deserved > g.capability:
                yield Problem(
                    (*g.path, "deserved"),
                    f"queue {q.name!r}: deserved {g.deserved} {g.model} GPUs exceed its capability "
                    f"{g.capability}; the capacity written is {g.capability}: lower deserved to at most "
                    f"{g.capability}",
                    DESERVED_OVER_CAPABILITY,
                )
    access = gpu_model_access(spec)
    children_of = children_by_parent(spec)
    default_vendors = vendor_totals(spec, label_pools(spec, None))
    for q in spec.queues:
        if access[q.name] or not models:
            continue
        fields = [
            (field, name, amount.value)
            for field in ("deserved", "capability")
            for name, amount in getattr(q, field).items
            if (vendor := _vendor_of(name)) is not None and amount.value > 0 and default_vendors.get(vendor, 0) <= 0
        ]
        if fields:  # one finding per queue: one fix (gpuModels) covers every field
            field, name, value = fields[0]
            listed = ", ".join(f"{f} {n}: {v}" for f, n, v in fields)
            why = (
                "it is a parent queue (only leaf queues get every partition of their GPU vendor by "
                "default) and no queue below it may use a GPU partition"
                if children_of.get(q.name)
                else f"no GPU-model partition has {name} GPUs"
            )
            yield Problem(
                (*q.path, field, name),
                f"queue {q.name!r} has {listed} but with yarn.nodeLabels every GPU is in a GPU-model "
                f"partition and {why}, so on YARN it gets no GPU; list the models it may use, e.g. "
                f"gpuModels: {{{sorted(models)[0]!r}: {{{field}: {value}}}}}",
                GPUS_REACH_NO_PARTITION,
            )
    stopped: dict[tuple[str, str], list[FlinkCluster]] = {}
    for c in yarn_gpu_clusters(spec):
        label = taskmanager_label(spec, c)
        queue = spec.queue(c.queue) if c.queue else None
        if label is None or queue is None:
            continue
        model = next(m for m, lb in models.items() if lb == label)
        if model not in access[queue.name]:
            stopped.setdefault((queue.name, model), []).append(c)
    for (queue_name, model), clusters in stopped.items():  # one finding per queue and model: one fix
        names = ", ".join(repr(c.name) for c in clusters)
        yield Problem(
            clusters[0].field_path("queue"),
            f"Flink cluster(s) {names} run their TaskManagers in partition {models[model]} ({model}) but "
            f"queue {queue_name!r} may not use it (its gpuModels do not list {model!r}), so YARN "
            f"never allocates them; add {model!r} to the gpuModels of queue {queue_name!r}",
            FLINK_QUEUE_WITHOUT_PARTITION,
        )
    if spec.queues:
        used = set().union(*access.values())
        idle = [(model, label) for model, label in sorted(models.items()) if model not in used]
        if idle:  # one finding at the one path for every idle partition (#39 item 4)
            several = len(idle) > 1
            yield Problem(
                ("yarn", "nodeLabels"),
                f"no queue lists GPU model{'s' if several else ''} {', '.join(repr(m) for m, _ in idle)} in "
                f"gpuModels, so no queue may use partition{'s' if several else ''} "
                f"{', '.join(str(lb) for _, lb in idle)} and {'their' if several else 'its'} NodeManagers stay idle; "
                f"add {'them' if several else 'it'} to the gpuModels of the queues that should use "
                f"{'them' if several else 'it'}",
                PARTITION_WITHOUT_QUEUE,
            )
