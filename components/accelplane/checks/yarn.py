"""Checks for the YARN side: resource type names and bounds, NodeManager pools, Flink on YARN.

Everything here mirrors a failure of Hadoop itself (ResourceUtils refusing resource-types.xml,
the ResourceManager rejecting a container request larger than ``maximum-allocation``, the
CapacityScheduler rejecting a queue tree) or of a container that could never be placed, and says
which spec field to change.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.gpu_resources import YARN_GPU, candidate_pools, yarn_gpu_type
from accelplane.derive.images import flink_image, inherits_node_image, is_stock_flink_image
from accelplane.derive.yarn_capacity import plan_queues, queue_mode
from accelplane.derive.yarn_docker import runs_in_docker
from accelplane.derive.yarn_labels import (
    APPLICATION_LABEL_KEY,
    application_label,
    candidate_labels,
    cluster_labels,
    is_valid_label,
    label_pools,
    labels_enabled,
    pool_label,
    taskmanager_label,
)
from accelplane.derive.yarn_types import (
    BUILTIN_TYPES,
    RESERVED_NAMES,
    container_gpu_request,
    needed_types,
    pool_types,
    providing_pools,
    type_bounds,
    uses_gpu_plugin,
    yarn_gpu_clusters,
    yarn_pools,
)
from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, NodePool, Spec, YarnResourceType
from accelplane.names import is_valid_yarn_resource_name

YARN_POOL_PLATFORM_MISSING = declare(
    'AP5001', ERROR, 'a YARN pool on a cluster without the yarn platform',
    fix='add yarn to cluster.platforms or move the pool',
)
YARN_TARGET_PLATFORM_MISSING = declare(
    'AP5002', ERROR, 'a YARN Flink cluster on a cluster without the yarn platform',
    fix='add yarn to cluster.platforms or change the target',
)
YARN_MIG = declare(
    'AP5003', ERROR, 'MIG on a YARN pool',
    fix='use mig strategy none',
)
YARN_SHARING = declare(
    'AP5004', ERROR, 'GPU sharing on a YARN pool',
    fix='use sharing strategy none',
)
YARN_ALLOWED_DEVICES_VENDOR = declare(
    'AP5005', ERROR, 'allowedDevices on a pool that is not NVIDIA',
    fix='remove allowedDevices',
)
YARN_ALLOWED_DEVICES_TOO_MANY = declare(
    'AP5006', ERROR, 'more allowed devices than GPUs per node',
    fix='list at most perNode devices',
)
YARN_ALLOWED_DEVICES_DUPLICATE = declare(
    'AP5007', ERROR, 'an index or minor number repeats in allowedDevices',
    fix='list each once',
)
YARN_ALLOWED_DEVICES_INDEX = declare(
    'AP5008', ERROR, 'an allowed device index does not exist',
    fix='use indexes 0..perNode-1',
)
YARN_NODE_LABEL_INVALID = declare(
    'AP5009', ERROR, 'a GPU model gives a node label Hadoop rejects',
    fix='write the model without such characters',
)
YARN_PER_MODEL_TYPES = declare(
    'AP5010', ERROR, "per-model resource types bypass YARN's GPU plugin",
    fix='remove perModelTypes and set yarn.nodeLabels: true',
)
YARN_LABELS_WITHOUT_MODELS = declare(
    'AP5101', WARNING, 'yarn.nodeLabels without any GPU pool model has no effect',
    fix='set gpu.model on the YARN GPU pools or remove nodeLabels',
)
YARN_LABELS_WITHOUT_DEFAULT_POOL = declare(
    'AP5011', ERROR, 'node labels without a YARN pool in the default partition',
    fix='add a YARN node pool without GPUs (or without a model), with cpu and memory',
)
YARN_NO_POOL_FOR_CLUSTER = declare(
    'AP5012', ERROR, 'no YARN pool has the GPUs a cluster asks for',
    fix='add such a pool or fix taskManager.gpu', whole_spec=True,
)
YARN_SEVERAL_PARTITIONS = declare(
    'AP5013', ERROR, 'the candidate pools lie in several node partitions',
    fix='set taskManager.gpu.model or pool',
)
YARN_MODEL_NOT_ENFORCED = declare(
    'AP5014', ERROR, 'a GPU model or pool is asked for but YARN could place the container elsewhere',
    fix='set yarn.nodeLabels: true or remove the model/pool',
)
YARN_TYPE_RESERVED = declare(
    'AP5015', ERROR, 'a mandatory resource is declared as a resource type',
    fix='remove it',
)
YARN_TYPE_NAME_INVALID = declare(
    'AP5016', ERROR, 'a resource type name Hadoop rejects',
    fix='fix the name',
)
YARN_TYPE_BUILTIN_UNITS = declare(
    'AP5017', ERROR, 'units on a built-in countable type',
    fix='remove units',
)
YARN_TYPE_UNITS = declare(
    'AP5018', ERROR, 'units on a GPU type',
    fix='remove units',
)
YARN_TYPE_MIN_ALLOCATION = declare(
    'AP5019', ERROR, 'a minimum allocation above 0 for a GPU type',
    fix='use 0',
)
YARN_TYPE_UNUSED = declare(
    'AP5102', WARNING, 'a declared resource type nothing provides or requests',
    fix='fix the name or remove the entry', whole_spec=True,
)
YARN_MODEL_TYPE_INVALID = declare(
    'AP5020', ERROR, 'a GPU model gives a resource type name Hadoop rejects',
    fix='write the model without such characters',
)
YARN_OVER_MAX_ALLOCATION = declare(
    'AP5021', ERROR, 'a TaskManager requests more GPUs than the maximum allocation',
    fix='raise maximumAllocation or lower the amount',
)
YARN_TYPE_NOT_PROVIDED = declare(
    'AP5022', ERROR, 'no YARN pool provides the requested type',
    fix='add a pool providing it or fix taskManager.gpu', whole_spec=True,
)
YARN_GPUS_OVER_NODE = declare(
    'AP5023', ERROR, 'a TaskManager requests more GPUs than any NodeManager has',
    fix='use at most the amount the message names',
)
YARN_DOCKER_RUNTIME = declare(
    'AP5024', ERROR, 'NVIDIA GPU pools without the nvidia Docker runtime',
    fix='set yarn.docker.runtime: nvidia',
)
AM_LABEL_UNKNOWN = declare(
    "AP5552",
    ERROR,
    "yarn.application.node-label names a partition no NodeManager is in",
    fix="name a partition of the cluster (gpu-<model>) or remove the key for the default partition",
)

DOCKER_DEFAULT_IMAGE = declare(
    "AP5561",
    ERROR,
    "GPU TaskManagers in Docker on YARN would run the stock Flink image, which has no python3 for GPU discovery",
    fix="set the cluster's image (or nodeImage.image) to an image with python3, such as the one nodeImage builds",
)
CGROUPS_V2_NO_GPU_ISOLATION = declare(
    "AP5562",
    WARNING,
    "cgroups v2 without Docker: YARN's GPU plugin cannot isolate GPUs (no devices controller in cgroup v2)",
    fix="set yarn.docker.enabled: true with runtime nvidia, or run the NodeManagers on cgroup v1/hybrid hosts",
)

NAME_RULE = (
    "Hadoop accepts an optional namespace of dot-separated letter/digit/dash groups and '/', then a "
    "letter followed by letters, digits, '_', '.' or '-'"
)


def _check_platforms(spec: Spec) -> Iterator[Problem]:
    if spec.has_platform("yarn"):
        return
    for pool in yarn_pools(spec):
        yield Problem(
            (*pool.path, "platform"),
            f"node pool {pool.name!r} is on platform yarn but cluster.platforms does not list yarn; "
            "add yarn to cluster.platforms or move the pool to another platform", YARN_POOL_PLATFORM_MISSING,
        )
    for c in spec.flink_clusters:
        if c.target == "yarn":
            yield Problem(
                c.field_path("target"),
                f"Flink cluster {c.name!r} targets yarn but cluster.platforms does not list yarn; "
                "add yarn to cluster.platforms or choose another target", YARN_TARGET_PLATFORM_MISSING,
            )


def _check_pool(spec: Spec, pool: NodePool) -> Iterator[Problem]:
    gpu = pool.gpu
    if gpu is None:
        return
    gpath = (*pool.path, "gpu")
    if gpu.mig.strategy != "none":
        yield Problem(
            (*gpath, "mig", "strategy"),
            "YARN's GPU plugin hands out whole GPUs (yarn.io/gpu); MIG is Kubernetes-only — "
            "use mig strategy none for a platform: yarn pool", YARN_MIG,
        )
    if gpu.sharing.strategy != "none":
        yield Problem(
            (*gpath, "sharing", "strategy"),
            "YARN has no GPU sharing (time-slicing/MPS is a Kubernetes device-plugin feature) — "
            "use sharing strategy none for a platform: yarn pool", YARN_SHARING,
        )
    if gpu.allowed_devices:
        if gpu.vendor != "nvidia":
            yield Problem(
                (*gpath, "allowedDevices"),
                "allowedDevices configures YARN's GPU plugin, which discovers NVIDIA GPUs only; "
                f"remove it from this {gpu.vendor} pool", YARN_ALLOWED_DEVICES_VENDOR,
            )
        pairs = [tuple(int(x) for x in d.split(":")) for d in gpu.allowed_devices]
        indexes = [i for i, _ in pairs]
        minors = [m for _, m in pairs]
        if len(pairs) > gpu.per_node:
            yield Problem(
                (*gpath, "allowedDevices"),
                f"{len(pairs)} allowed devices but perNode is {gpu.per_node}; list at most {gpu.per_node}", YARN_ALLOWED_DEVICES_TOO_MANY,
            )
        if len(set(indexes)) != len(indexes) or len(set(minors)) != len(minors):
            yield Problem(
                (*gpath, "allowedDevices"),
                "each GPU index and each minor number may appear only once in allowedDevices", YARN_ALLOWED_DEVICES_DUPLICATE,
            )
        too_high = sorted({i for i in indexes if i >= gpu.per_node})
        if too_high:
            yield Problem(
                (*gpath, "allowedDevices"),
                f"GPU index {', '.join(map(str, too_high))} does not exist on a node with perNode "
                f"{gpu.per_node} (nvidia-smi indexes are 0..{gpu.per_node - 1})", YARN_ALLOWED_DEVICES_INDEX,
            )
    label = pool_label(spec, pool)
    if label is not None and not is_valid_label(label):
        yield Problem(
            (*gpath, "model"),
            f"GPU model {gpu.model!r} gives the YARN node label {label!r}, which Hadoop rejects (node "
            "labels are letters, digits, '-' and '_', starting with a letter or digit, at most 255 "
            "characters); write the model without such characters", YARN_NODE_LABEL_INVALID,
        )


def _check_labels(spec: Spec) -> Iterator[Problem]:
    y = spec.yarn
    if y is not None and y.per_model_types:
        yield Problem(
            ("yarn", "perModelTypes"),
            "per-model resource types (yarn.io/gpu-<model>) take the GPU away from YARN's GPU plugin, "
            "which assigns and isolates devices only for containers requesting yarn.io/gpu; remove "
            "perModelTypes and set yarn.nodeLabels: true to place TaskManagers by GPU model with one "
            "node partition per model (docs/yarn.md)", YARN_PER_MODEL_TYPES,
        )
    if not labels_enabled(spec):
        return
    if not cluster_labels(spec):
        yield Problem(
            ("yarn", "nodeLabels"),
            "no YARN node pool has GPUs with a model, so there is no partition to place TaskManagers "
            "in; set gpu.model on the YARN GPU pools or remove nodeLabels", YARN_LABELS_WITHOUT_MODELS,
        )
        return
    if not label_pools(spec, None):
        yarn_clusters = [c for c in spec.flink_clusters if c.target == "yarn"]
        unlabelled = [c.name for c in yarn_clusters if application_label(c) is None]
        if unlabelled or not yarn_clusters:
            who = f" (Flink clusters {', '.join(unlabelled)})" if unlabelled else ""
            yield Problem(
                ("yarn", "nodeLabels"),
                f"every YARN node pool is in a GPU-model partition, but ApplicationMasters{who} request no "
                "node label and run only in the default partition; add a YARN node pool without GPUs (or "
                f"without a GPU model) for them"
                f"{', with cpu and memory (queues get absolute capacities)' if queue_mode(spec) == 'absolute' else ''}"
                f", or give each Flink cluster config {APPLICATION_LABEL_KEY} naming the partition its "
                "JobManager should run in",
                YARN_LABELS_WITHOUT_DEFAULT_POOL,
            )


def _check_application_labels(spec: Spec) -> Iterator[Problem]:
    """Flink's ``yarn.application.node-label`` must name a partition that has NodeManagers."""
    known = cluster_labels(spec) if labels_enabled(spec) else []
    for c in spec.flink_clusters:
        label = application_label(c) if c.target == "yarn" else None
        if label is None:
            continue
        path = c.field_path("config", APPLICATION_LABEL_KEY)
        if not labels_enabled(spec):
            yield Problem(
                path,
                f"the ApplicationMaster (JobManager) would request node label {label!r}, but node labels are "
                "off (yarn.nodeLabels), and the ResourceManager rejects a request with a label expression "
                "when labels are not enabled; remove this key or set yarn.nodeLabels: true",
                AM_LABEL_UNKNOWN,
            )
        elif label not in known:
            yield Problem(
                path,
                f"no NodeManager is in partition {label!r} (partitions: {', '.join(known)}; the default "
                "partition is the pools without a GPU model), so the ApplicationMaster (JobManager) would "
                "never start; name one of them or remove this key for the default partition",
                AM_LABEL_UNKNOWN,
            )


def _model_not_enforced(unenforced: list[tuple[FlinkCluster, str, list[str]]]) -> Iterator[Problem]:
    """One finding for every cluster whose GPU model or pool YARN cannot enforce without node
    labels: ``yarn.nodeLabels`` is the one setting that fixes them all (#39 item 4), so with several
    clusters the finding sits there and names each; with one it sits at the cluster's ``gpu``, where
    removing the model/pool is the other way out."""
    if len(unenforced) == 1:
        c, wanted, others = unenforced[0]
        yield Problem(
            c.field_path("taskManager", "gpu"),
            f"these TaskManagers ask for {wanted}, but a YARN container requests only yarn.io/gpu and "
            f"could be placed on pools {', '.join(others)} too; set yarn.nodeLabels: true (one node "
            "partition per GPU model, yarn.taskmanager.node-label) or remove the model/pool", YARN_MODEL_NOT_ENFORCED,
        )
    elif unenforced:
        who = "; ".join(f"{c.name} ({wanted}; also pools {', '.join(others)})" for c, wanted, others in unenforced)
        yield Problem(
            ("yarn", "nodeLabels"),
            f"the TaskManagers of Flink clusters {who} ask for a GPU model or pool, but a YARN container "
            "requests only yarn.io/gpu and could be placed on the other pools too; set yarn.nodeLabels: true "
            "(one node partition per GPU model, yarn.taskmanager.node-label)", YARN_MODEL_NOT_ENFORCED,
        )


def _check_placement(spec: Spec) -> Iterator[Problem]:
    """A YARN Flink cluster that names a GPU model or pool lands only there."""
    gpu_pools = [p for p in yarn_pools(spec) if p.gpu is not None]
    unenforced: list[tuple[FlinkCluster, str, list[str]]] = []
    for c in yarn_gpu_clusters(spec):
        gpu = c.task_manager.gpu
        assert gpu is not None
        candidates = [p for p in candidate_pools(spec, c) if p.platform == "yarn"]
        path = c.field_path("taskManager", "gpu")
        if not candidates:
            if gpu.model is not None or gpu.pool is not None:
                wanted = f"GPUs of model {gpu.model!r}" if gpu.model is not None else f"pool {gpu.pool!r}"
                with_gpus = ", ".join(
                    f"{p.name} ({p.gpu.model or 'no model'})" for p in gpu_pools if p.gpu is not None
                )
                yield Problem(
                    path,
                    f"Flink cluster {c.name!r} asks for {wanted} on YARN but no YARN node pool has them "
                    f"(YARN pools with GPUs: {with_gpus or 'none'})", YARN_NO_POOL_FOR_CLUSTER,
                )
            continue
        if labels_enabled(spec):
            labels = candidate_labels(spec, c)
            if len(labels) > 1:
                shown = ", ".join(lb or "the default partition" for lb in labels)
                yield Problem(
                    path,
                    f"the pools that may host these TaskManagers lie in several node partitions "
                    f"({shown}) and a container request names one node label; set taskManager.gpu.model "
                    "or pool", YARN_SEVERAL_PARTITIONS,
                )
            continue
        others = sorted(p.name for p in gpu_pools if p not in candidates)
        if (gpu.model is not None or gpu.pool is not None) and others:
            wanted = f"model {gpu.model!r}" if gpu.model is not None else f"pool {gpu.pool!r}"
            unenforced.append((c, wanted, others))
    yield from _model_not_enforced(unenforced)


def _check_resource_types(spec: Spec) -> Iterator[Problem]:
    needed = set(needed_types(spec))
    for r in type_bounds(spec).values():
        if r.name in RESERVED_NAMES:
            yield Problem(
                (*r.path, "name"),
                f"{r.name!r} is one of Hadoop's mandatory resources (memory-mb, vcores) and cannot be "
                "declared in resource-types.xml; only list GPU types such as yarn.io/gpu", YARN_TYPE_RESERVED,
            )
            continue
        if not is_valid_yarn_resource_name(r.name):
            yield Problem(
                (*r.path, "name"), f"{r.name!r} is not a valid YARN resource type name ({NAME_RULE})", YARN_TYPE_NAME_INVALID
            )
            continue
        if r.units is not None:
            if r.name in BUILTIN_TYPES:
                yield Problem(
                    (*r.path, "units"),
                    f"{r.name} is built into Hadoop as a countable resource without units and "
                    "ResourceUtils refuses any units for it; remove units", YARN_TYPE_BUILTIN_UNITS,
                )
            elif r.units != "":
                yield Problem(
                    (*r.path, "units"),
                    f"GPU types count whole devices; with units {r.units!r} Hadoop would convert the "
                    f"NodeManager amounts into {r.units!r} (4 GPUs → 0{r.units}); remove units", YARN_TYPE_UNITS,
                )
        if r.minimum_allocation is not None and r.minimum_allocation > 0:
            yield Problem(
                (*r.path, "minimumAllocation"),
                f"the ResourceManager raises every container request to the minimum allocation, so "
                f"every container (ApplicationMasters and JobManagers too) would hold "
                f"{r.minimum_allocation} {r.name}; use 0", YARN_TYPE_MIN_ALLOCATION,
            )
        if r.name not in needed and r.name != YARN_GPU:  # bounds of yarn.io/gpu may come from a shared base
            used = ", ".join(sorted(needed)) or "none"
            yield Problem(
                (*r.path, "name"),
                f"resource type {r.name} is not provided by any YARN node pool nor requested by any "
                f"Flink cluster on YARN (types in use: {used}); fix the name or remove the entry", YARN_TYPE_UNUSED,
            )


def _over_maximum(bounds: dict[str, YarnResourceType], over: dict[str, list[tuple[str, int, PathTuple]]]) -> Iterator[Problem]:
    """One finding per resource type whose ``maximumAllocation`` is below the GPUs per TaskManager
    of some clusters: the bound is the one root cause, so the finding names every such cluster (at
    the cluster's amount when only one is affected, where lowering it is the other way out)."""
    for t, items in over.items():
        b = bounds[t]
        need = max(a for _, a, _ in items)
        who = ", ".join(f"{name} ({a})" for name, a, _ in items)
        yield Problem(
            items[0][2] if len(items) == 1 else (*b.path, "maximumAllocation"),
            f"GPUs per TaskManager of cluster(s) {who} exceed the maximum-allocation {b.maximum_allocation} "
            f"of {t} (yarn.resourceTypes); the ResourceManager would reject the containers — raise "
            f"maximumAllocation to at least {need}" + (" or lower the amount" if len(items) == 1 else ""),
            YARN_OVER_MAX_ALLOCATION,
        )


def _check_flink(spec: Spec) -> Iterator[Problem]:
    bounds = type_bounds(spec)
    over: dict[str, list[tuple[str, int, PathTuple]]] = {}
    for c in yarn_gpu_clusters(spec):
        gpu = c.task_manager.gpu
        assert gpu is not None
        config_key = yarn_gpu_type(spec, c)
        if config_key is None:
            continue
        amount_path = c.field_path("taskManager", "gpu", "amount")
        if not is_valid_yarn_resource_name(config_key):
            if gpu.model is not None:
                yield Problem(
                    c.field_path("taskManager", "gpu", "model"),
                    f"GPU model {gpu.model!r} gives the YARN resource type {config_key!r}, which Hadoop "
                    f"rejects ({NAME_RULE})", YARN_MODEL_TYPE_INVALID,
                )
            continue
        for t, amount in container_gpu_request(spec, c).items():
            b = bounds.get(t)
            if b is not None and b.maximum_allocation is not None and amount > b.maximum_allocation:
                over.setdefault(t, []).append((c.name, amount, amount_path))
        label = taskmanager_label(spec, c)
        pools = providing_pools(spec, config_key)
        if label is not None:
            pools = [(p, n) for p, n in pools if pool_label(spec, p) == label]
        if not pools:
            with_gpus = ", ".join(
                f"{p.name} ({', '.join(pool_types(spec, p))})" for p in yarn_pools(spec) if p.gpu
            )
            yield Problem(
                amount_path,
                f"Flink cluster {c.name!r} requests {config_key} on YARN but no YARN node pool provides "
                f"it (YARN pools with GPUs: {with_gpus or 'none'})", YARN_TYPE_NOT_PROVIDED,
            )
            continue
        most = max(n for _, n in pools)
        if gpu.amount > most:
            per_pool = ", ".join(f"{p.name}: {n}" for p, n in pools)
            yield Problem(
                amount_path,
                f"{gpu.amount} GPUs per TaskManager do not fit on any NodeManager offering {config_key} "
                f"(per node: {per_pool}); a container cannot span nodes — use at most {most}", YARN_GPUS_OVER_NODE,
            )
    yield from _over_maximum(bounds, over)


def _check_cgroups(spec: Spec) -> Iterator[Problem]:
    y = spec.yarn
    if y is None or y.cgroups != "v2" or y.docker_enabled:
        return
    pools = [p.name for p in yarn_pools(spec) if uses_gpu_plugin(p)]
    if pools:
        yield Problem(
            ("yarn", "cgroups"),
            f"with cgroups v2 and no Docker, YARN's GPU plugin cannot keep containers off each other's GPUs "
            f"on pools {', '.join(pools)} (cgroup v2 has no devices controller; YARN-11692 keeps GPU isolation "
            "only on mixed v1/v2 hierarchies), so every TaskManager sees every GPU of its node; set "
            "yarn.docker.enabled: true (runtime nvidia isolates by NVIDIA_VISIBLE_DEVICES) or use cgroups v1 "
            "or hybrid hosts",
            CGROUPS_V2_NO_GPU_ISOLATION,
        )


def _check_docker_images(spec: Spec) -> Iterator[Problem]:
    """Stock images in Docker on YARN: one finding per cluster's own image, and one at
    ``nodeImage.image`` naming every cluster that inherits it (one setting, one fix: #39 item 4)."""
    inheriting: list[str] = []
    for c in yarn_gpu_clusters(spec):
        if not runs_in_docker(spec, c) or not (c.image is None or is_stock_flink_image(c.image)):
            continue
        if inherits_node_image(spec, c):
            inheriting.append(c.name)
            continue
        yield Problem(
            c.field_path("image"),
            f"with yarn.docker the GPU TaskManagers run in Docker, here the stock image {flink_image(c)} ("
            f"{'an image' if c.image else 'a floating tag'} without python3, which the GPU discovery script needs, and without Hadoop); set "
            "image (or nodeImage.image) to a pinned image with python3, such as the one nodeImage builds",
            DOCKER_DEFAULT_IMAGE,
        )
    if inheriting and spec.node_image is not None:
        yield Problem(
            ("nodeImage", "image"),
            f"with yarn.docker the GPU TaskManagers of Flink cluster{'s' if len(inheriting) > 1 else ''} "
            f"{', '.join(inheriting)} run in Docker, here the stock image {spec.node_image.image} (an image "
            "without python3, which the GPU discovery script needs, and without Hadoop); set nodeImage.image "
            "to a pinned image with python3, such as the one nodeImage builds",
            DOCKER_DEFAULT_IMAGE,
        )


def _check_docker(spec: Spec) -> Iterator[Problem]:
    yield from _check_cgroups(spec)
    yield from _check_docker_images(spec)
    y = spec.yarn
    if y is None or not y.docker_enabled or y.docker_runtime == "nvidia":
        return
    nvidia = [p.name for p in yarn_pools(spec) if uses_gpu_plugin(p)]
    if nvidia:
        yield Problem(
            ("yarn", "docker", "runtime"),
            f"YARN's nvidia-docker-v2 GPU plugin starts GPU containers with --runtime=nvidia, and "
            f"pools {', '.join(nvidia)} have NVIDIA GPUs; set yarn.docker.runtime: nvidia", YARN_DOCKER_RUNTIME,
        )


def check(spec: Spec) -> Iterator[Problem]:
    """All YARN problems (only platform consistency when the cluster has no yarn platform)."""
    yield from _check_platforms(spec)
    if not spec.has_platform("yarn"):
        return
    for pool in yarn_pools(spec):
        yield from _check_pool(spec, pool)
    yield from _check_labels(spec)
    yield from _check_application_labels(spec)
    yield from _check_resource_types(spec)
    yield from _check_flink(spec)
    yield from _check_placement(spec)
    yield from _check_docker(spec)
    yield from plan_queues(spec).infeasible
