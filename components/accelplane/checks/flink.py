"""Checks on Flink clusters: the mistakes Volcano and Flink users hit in practice.

* target vs. ``cluster.platforms``; Flink version vs. config file format and target;
* memory Flink can request exactly (whole MiB), YARN vcores as integers;
* GPUs: a pool that can host the standalone TaskManagers with enough GPUs per host (on Kubernetes
  and YARN `device_plugins.check` and `yarn.check` own these), enough GPUs in total, a named
  pool's vendor/model, sharing vs. coordination mode, GPU model affinity needs GPU Feature
  Discovery;
* Volcano: the PodGroup's ``minResources`` fits the queue's capability (which must list the GPU
  resource), the pods fit the queue's ``pods``;
* ``config``: keys accelplane generates (or their Flink aliases) are errors, values must be
  writable in the file format, the wrong flag ``--enable-coordination`` is called out;
* Kubernetes ``config`` keys Flink applies over the pod templates (found with Flink's own pod
  factories, tests/flink/test_flink_pod_factory.py): annotations that would move the pods out of
  their PodGroup, node selectors that would move TaskManagers off their GPU pool, standby
  JobManagers (``kubernetes.jobmanager.replicas``) that are not positive integers or lack HA.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.checks.scheduling import volcano_unset_capability_blocks
from accelplane.derive.cluster_facts import standalone_workers
from accelplane.derive.dra import kubernetes_gpu_key, pool_gpu_resources
from accelplane.derive.flink_keys import (
    GPU_PREFIX,
    JOBMANAGER_REPLICAS_KEY,
    WRONG_COORDINATION_FLAG,
    config_format,
    format_problem,
    jobmanager_replicas,
    managed_keys,
    managed_prefixes,
    whole_mebibytes,
)
from accelplane.derive.flink_placement import LONG, flink_map, toleration_items
from accelplane.derive.flink_pods import (
    GROUP_NAME_ANNOTATION,
    cluster_resources,
    format_min_resources,
    pod_count,
    podgroup_name,
    taskmanagers_for_parallelism,
)
from accelplane.derive.flink_state import ha_enabled
from accelplane.derive.flink_values import legacy_value_problem, yaml_value_problem
from accelplane.derive.gpu_resources import (
    candidate_pools,
    cluster_vendor,
    is_shared,
    yarn_gpu_type,
)
from accelplane.derive.images import inherits_node_image, is_stock_flink_image
from accelplane.derive.queues import leaf_queue_names
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, NodePool, Spec
from accelplane.names import GPU_PRODUCT_LABEL, normalize_gpu_model

FLINK_TARGET_PLATFORM = declare(
    'AP4030', ERROR, "a Flink target's platform is not in cluster.platforms",
    fix='add the platform or change the target',
)
FLINK_PRIORITY_CLASS_IGNORED = declare(
    'AP4104', WARNING, 'priorityClass on a target that has no PriorityClasses has no effect',
    fix='remove priorityClass',
)
FLINK_QUEUE_IGNORED = declare(
    'AP4105', WARNING, 'queue on a standalone cluster has no effect',
    fix='remove queue',
)
FLINK_UPGRADE_MODE_IGNORED = declare(
    'AP4106', WARNING, 'upgradeMode on a target without the operator has no effect',
    fix='remove upgradeMode',
)
FLINK_SESSION_WITH_JOB = declare(
    'AP4107', WARNING, 'a session cluster has a job section, which it never uses (jobs are submitted later)',
    fix='remove job or set mode: application',
)
FLINK_APPLICATION_NEEDS_JAR = declare(
    'AP4032', ERROR, 'an operator application cluster has no job.jarURI',
    fix='add job.jarURI or set mode: session',
)
FLINK_PARALLELISM_OVER_SLOTS = declare(
    'AP4033', ERROR, "a standalone job's parallelism exceeds its slots",
    fix='raise taskManager.replicas or lower parallelism',
)
FLINK_REPLICAS_MISMATCH = declare(
    'AP4034', ERROR, 'taskManager.replicas differs from what parallelism needs',
    fix='set replicas or parallelism as the message says',
)
FLINK_STOCK_IMAGE = declare(
    'AP8010', ERROR, 'GPU TaskManagers would run the stock Flink image (unset or explicit), which has no python3',
    fix='set nodeImage.image to the image nodeImage builds (or image to an image with python3)',
)
FLINK_CONFIG_FORMAT = declare(
    'AP4035', ERROR, 'configFormat does not fit the Flink version',
    fix='use the format the message names',
)
FLINK_TOO_OLD_FOR_KUBERNETES = declare(
    'AP4036', ERROR, 'the Flink version has no pod templates',
    fix='use Flink 1.13 or newer',
)
FLINK_TOO_OLD_FOR_OPERATOR = declare(
    'AP4037', ERROR, 'the operator no longer supports this Flink version',
    fix='use Flink 1.15 or newer or target kubernetes',
)
FLINK_MEMORY_NOT_MIB = declare(
    'AP4038', ERROR, 'memory is not a whole number of MiB',
    fix='write it with Mi or Gi',
)
FLINK_CPU_NOT_POSITIVE = declare(
    'AP4039', ERROR, 'cpu is not positive',
    fix='set a positive cpu',
)
FLINK_YARN_CPU_FRACTION = declare(
    'AP4040', ERROR, 'YARN cpu is not a whole number of vcores',
    fix='write a whole number',
)
FLINK_POOL_PLATFORM = declare(
    'AP3035', ERROR, 'taskManager.gpu.pool is on another platform than the target',
    fix="name a pool of the target's platform",
)
FLINK_POOL_WITHOUT_GPUS = declare(
    'AP3036', ERROR, 'taskManager.gpu.pool has no GPUs',
    fix='name a pool with a gpu section',
)
FLINK_POOL_VENDOR = declare(
    'AP3037', ERROR, "taskManager.gpu.vendor differs from the pool's",
    fix='fix vendor or pool',
)
FLINK_POOL_MODEL = declare(
    'AP3038', ERROR, "taskManager.gpu.model differs from the pool's",
    fix='fix model or pool',
)
FLINK_NO_GPU_POOL = declare(
    'AP3039', ERROR, 'no pool of the target platform has the requested GPUs',
    fix='add such a pool or fix taskManager.gpu', whole_spec=True,
)
FLINK_GPUS_OVER_POOL_NODES = declare(
    'AP3053', ERROR, 'a TaskManager needs more GPUs than any host has',
    fix='lower taskManager.gpu.amount',
)
FLINK_GPUS_OVER_POOLS = declare(
    'AP3054', ERROR, 'the TaskManagers need more GPUs than the pools have',
    fix='lower replicas or amount, or add nodes', whole_spec=True,
)
FLINK_GPUS_OVER_HOST = declare(
    'AP3055', ERROR, 'the TaskManagers spread over the hosts do not fit one host',
    fix='lower replicas or add hosts',
)
FLINK_COORDINATION_ON_SHARED = declare(
    'AP8006', WARNING, 'discovery coordination on a pool that shares GPUs has no effect',
    fix='set discovery.coordination: false',
)
FLINK_MODEL_NEEDS_GFD = declare(
    'AP3056', ERROR, 'GPU model selection needs GPU Feature Discovery',
    fix='enable devicePlugins.nvidia.gpuFeatureDiscovery or name the pool',
)
FLINK_PODGROUP_OVER_QUEUE = declare(
    'AP2040', ERROR, "a PodGroup needs more than its queue's capability",
    fix="raise the queue's capability or shrink the cluster",
)
FLINK_QUEUE_LACKS_GPU_RESOURCE = declare(
    'AP2041', ERROR, 'a queue limits resources but not the GPU resource the cluster requests (Volcano before 1.9)',
    fix="add the resource to the queue's capability", whole_spec=True,
)
FLINK_QUEUE_GPU_UNLIMITED = declare(
    'AP2070', WARNING,
    'a queue limits resources but not the GPU resource the cluster requests, so its GPUs are unlimited (Volcano 1.9+)',
    fix="add the resource to the queue's capability", whole_spec=True,
)
FLINK_PODS_OVER_QUEUE = declare(
    'AP2042', ERROR, 'a cluster runs more pods than its queue allows',
    fix='raise the pods capability or lower replicas',
)
FLINK_PODGROUP_ANNOTATION = declare(
    'AP4041', ERROR, 'a pod annotation would take pods out of their PodGroup',
    fix='remove the annotation',
)
FLINK_NODE_SELECTOR_CLASH = declare(
    'AP4042', ERROR, 'a node selector key clashes with the GPU pool selection',
    fix='remove it and choose the pool with taskManager.gpu.pool',
)
FLINK_TOLERATION_SECONDS = declare(
    'AP4090', ERROR, 'a tolerationSeconds in kubernetes.<role>.tolerations is not an integer: Flink cannot build the pod',
    fix='write tolerationSeconds as a whole number of seconds (or remove it)',
)
FLINK_JOBMANAGER_REPLICAS = declare(
    'AP4043', ERROR, 'kubernetes.jobmanager.replicas is not a positive integer',
    fix='write a positive integer',
)
FLINK_STANDBY_NEEDS_HA = declare(
    'AP4044', ERROR, 'standby JobManagers without high availability',
    fix='enable HA or remove the key',
)
FLINK_WRONG_COORDINATION_FLAG = declare(
    'AP8007', ERROR, "'--enable-coordination' is not a flag of the discovery script",
    fix='remove the key and set discovery.coordination: true',
)
FLINK_MANAGED_KEY = declare(
    'AP4045', ERROR, 'a config key accelplane sets from another field',
    fix='set the field the message names instead',
)
FLINK_GPU_KEYS_GENERATED = declare(
    'AP4046', ERROR, 'external-resource keys are generated',
    fix='remove the config key',
)
FLINK_CONFIG_VALUE = declare(
    'AP4047', ERROR, 'a config value the config format cannot carry',
    fix='write the value as the message says',
)

MIN_KUBERNETES_VERSION = (1, 13)
MIN_OPERATOR_VERSION = (1, 15)


def _own(cluster: FlinkCluster, *keys: str) -> bool:
    """True when the cluster itself (not flink.defaults) may have set the field."""
    return keys not in cluster.from_defaults


def _check_target(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    platform = c.platform
    if c.target != "yarn" and not spec.has_platform(platform):  # yarn: yarn.check
        yield Problem(
            c.field_path("target"),
            f"target {c.target} runs on {platform}, but cluster.platforms is "
            f"[{', '.join(spec.platforms)}]; add {platform} to cluster.platforms or change the target", FLINK_TARGET_PLATFORM,
        )
    if not c.on_kubernetes:
        if c.priority_class is not None and _own(c, "priorityClass"):
            yield Problem(
                c.field_path("priorityClass"),
                f"PriorityClasses are Kubernetes objects and target {c.target} would ignore it; "
                "remove priorityClass from this cluster", FLINK_PRIORITY_CLASS_IGNORED,
            )
        if c.target == "standalone" and c.queue is not None and _own(c, "queue"):
            yield Problem(
                c.field_path("queue"),
                "a standalone Flink cluster has no scheduler queue and would ignore it; remove queue", FLINK_QUEUE_IGNORED,
            )
        if c.job is not None and c.job.upgrade_mode is not None:
            yield Problem(
                c.field_path("job", "upgradeMode"),
                f"upgradeMode is a Flink Kubernetes Operator setting and target {c.target} would ignore it; "
                "remove it", FLINK_UPGRADE_MODE_IGNORED,
            )
    if c.mode == "session" and c.job is not None:
        yield Problem(
            c.field_path("job"),
            "a session cluster takes its jobs at submission time; remove job or set mode: application", FLINK_SESSION_WITH_JOB,
        )
    if (
        c.target == "kubernetes-operator"
        and c.mode == "application"
        and (c.job is None or c.job.jar_uri is None)
    ):
        yield Problem(
            c.field_path("job", "jarURI"),
            "an application cluster on the Flink Kubernetes Operator needs job.jarURI (a FlinkDeployment "
            "without a job is a session cluster); add job.jarURI or set mode: session", FLINK_APPLICATION_NEEDS_JAR,
        )


def _check_parallelism(c: FlinkCluster) -> Iterator[Problem]:
    needed = taskmanagers_for_parallelism(c)
    if needed is None or c.job is None or c.job.parallelism is None or c.mode == "session":
        return  # a session cluster with a job is reported by _check_target
    tm = c.task_manager
    slots = tm.replicas * tm.slots
    path = c.field_path("job", "parallelism")
    if c.target == "standalone":
        if c.job.parallelism > slots:
            yield Problem(
                path,
                f"parallelism {c.job.parallelism} needs {c.job.parallelism} slots but the {tm.replicas} "
                f"standalone TaskManagers × {tm.slots} slots offer {slots}; the job would never get its "
                f"slots — set taskManager.replicas to {needed} or lower parallelism", FLINK_PARALLELISM_OVER_SLOTS,
            )
        return
    if needed != tm.replicas:
        how = (
            "the Flink Kubernetes Operator sets the parallelism to replicas × slots"
            if c.target == "kubernetes-operator"
            else f"Flink's {'YARN' if c.target == 'yarn' else 'native Kubernetes'} resource manager "
            f"starts ceil({c.job.parallelism} / {tm.slots}) = {needed} TaskManagers"
        )
        yield Problem(
            path,
            f"parallelism {c.job.parallelism} with {tm.slots} slots per TaskManager means {needed} "
            f"TaskManagers but taskManager.replicas is {tm.replicas} ({how}; the PodGroup, queue checks "
            f"and report count replicas) — set taskManager.replicas to {needed} or parallelism to "
            f"{slots}", FLINK_REPLICAS_MISMATCH,
        )


def _check_image(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    if not c.on_kubernetes or not c.uses_gpus:
        return
    if c.image is not None:
        if is_stock_flink_image(c.image) and not inherits_node_image(spec, c):
            yield Problem(c.field_path("image"), _stock_image_message(c.image, "Flink cluster " + c.name), FLINK_STOCK_IMAGE)
        return
    yield Problem(
        c.field_path("image"),
        f"GPU TaskManagers would run the stock image flink:{c.version}-java17: a floating tag without "
        "python3, which the GPU discovery script needs — set image (a pinned tag or digest of an image "
        "with python3, such as the one nodeImage builds) or nodeImage.image", FLINK_STOCK_IMAGE,
    )


def _stock_image_message(image: str, who: str) -> str:
    return (
        f"the GPU TaskManagers of {who} would run the stock Flink image {image}, which has no python3: the "
        "GPU discovery script cannot run, so the GPU preflight refuses to start every TaskManager — use "
        "the image nodeImage builds (FROM this image plus python3 and the script; set nodeImage.image "
        "to where it is pushed and leave image unset) or an image of your own with python3"
    )


def _check_node_image(spec: Spec) -> Iterator[Problem]:
    """One finding at ``nodeImage.image`` when it is a stock Flink image that GPU clusters on
    Kubernetes inherit, naming every such cluster (one setting, one fix: #39 item 4)."""
    node_image = spec.node_image
    if node_image is None or node_image.image is None or not is_stock_flink_image(node_image.image):
        return
    inheriting = [c.name for c in spec.flink_clusters if c.on_kubernetes and c.uses_gpus and inherits_node_image(spec, c)]
    if inheriting:
        who = f"Flink cluster{'s' if len(inheriting) > 1 else ''} {', '.join(inheriting)}"
        yield Problem(("nodeImage", "image"), _stock_image_message(node_image.image, who), FLINK_STOCK_IMAGE)


def _check_version(c: FlinkCluster) -> Iterator[Problem]:
    problem = format_problem(c)
    if problem is not None:
        yield Problem(c.field_path("configFormat"), problem, FLINK_CONFIG_FORMAT)
    version = c.version_tuple
    if c.on_kubernetes and version < MIN_KUBERNETES_VERSION:
        yield Problem(
            c.field_path("version"),
            f"Flink {c.version} has no pod templates, which carry the Volcano PodGroup annotation and "
            "schedulerName; use Flink 1.13 or newer on Kubernetes", FLINK_TOO_OLD_FOR_KUBERNETES,
        )
    elif c.target == "kubernetes-operator" and version < MIN_OPERATOR_VERSION:
        yield Problem(
            c.field_path("version"),
            f"the Flink Kubernetes Operator no longer supports Flink {c.version}; use Flink 1.15 or newer "
            "(or target kubernetes)", FLINK_TOO_OLD_FOR_OPERATOR,
        )


def _check_resources(c: FlinkCluster) -> Iterator[Problem]:
    for role, p in (("jobManager", c.job_manager), ("taskManager", c.task_manager)):
        if not whole_mebibytes(p.memory):
            yield Problem(
                c.field_path(role, "memory"),
                f"{p.memory} is not a whole number of MiB; Flink requests container memory in whole MiB, "
                "so write it with Mi or Gi (e.g. 1600Mi, 4Gi)", FLINK_MEMORY_NOT_MIB,
            )
        if p.cpu.value <= 0:
            yield Problem(c.field_path(role, "cpu"), f"cpu must be positive, got {p.cpu}", FLINK_CPU_NOT_POSITIVE)
        elif c.target == "yarn" and (p.cpu.value != p.cpu.value.to_integral_value()):
            yield Problem(
                c.field_path(role, "cpu"),
                f"YARN allocates whole vcores; {p.cpu} is not an integer (write e.g. {max(1, int(p.cpu.value))})", FLINK_YARN_CPU_FRACTION,
            )


def _pool_list(counts: dict[str, int], unit: str) -> str:
    return ", ".join(f"{name}: {n} {unit}" for name, n in sorted(counts.items()))


def _check_named_pool(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    gpu = c.task_manager.gpu
    assert gpu is not None and gpu.pool is not None
    pool = spec.pool(gpu.pool)
    if pool is None:
        return  # references.check reports the undefined pool
    platform = c.platform
    kubernetes = c.on_kubernetes
    # On Kubernetes, device_plugins.check reports a pool of another platform or without GPUs
    # (nothing advertises the resource there).
    if pool.platform != platform:
        if not kubernetes:
            yield Problem(
                c.field_path("taskManager", "gpu", "pool"),
                f"pool {pool.name!r} belongs to platform {pool.platform}, but target {c.target} runs its "
                f"TaskManagers on {platform} hosts; name a {platform} pool", FLINK_POOL_PLATFORM,
            )
    elif pool.gpu is None:
        if not kubernetes:
            yield Problem(
                c.field_path("taskManager", "gpu", "pool"),
                f"pool {pool.name!r} has no GPUs; name a pool with a gpu section", FLINK_POOL_WITHOUT_GPUS,
            )
    elif gpu.vendor is not None and gpu.vendor != pool.gpu.vendor:
        yield Problem(
            c.field_path("taskManager", "gpu", "vendor"),
            f"pool {pool.name!r} has {pool.gpu.vendor} GPUs, not {gpu.vendor}; fix vendor or pool", FLINK_POOL_VENDOR,
        )
    elif (
        gpu.model is not None
        and pool.gpu.model is not None
        and normalize_gpu_model(gpu.model) != normalize_gpu_model(pool.gpu.model)
    ):
        yield Problem(
            c.field_path("taskManager", "gpu", "model"),
            f"pool {pool.name!r} has {pool.gpu.model!r} GPUs, not {gpu.model!r}; fix model or pool", FLINK_POOL_MODEL,
        )


def _per_node(spec: Spec, c: FlinkCluster, pools: list[NodePool]) -> tuple[str, dict[str, int]]:
    """The GPU resource the TaskManagers request and how many each pool providing it has per node."""
    if c.on_kubernetes:
        resource = kubernetes_gpu_key(spec, c)
        assert resource is not None
        return resource, {p.name: n for p in pools if (n := pool_gpu_resources(p).get(resource, 0))}
    name = (yarn_gpu_type(spec, c) if c.target == "yarn" else None) or "GPUs"
    return name, {p.name: p.gpu.per_node for p in pools if p.gpu is not None}


def _check_gpu(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    gpu = c.task_manager.gpu
    amount = c.gpus_per_task_manager
    if gpu is None or amount == 0:
        return
    kubernetes = c.on_kubernetes
    if gpu.pool is not None:
        named = list(_check_named_pool(spec, c))
        yield from named
        pool = spec.pool(gpu.pool)
        if named or pool is None or pool.gpu is None or pool.platform != c.platform:
            return
    pools = candidate_pools(spec, c)
    resource, counts = _per_node(spec, c, pools)
    amount_path = c.field_path("taskManager", "gpu", "amount")
    best = max(counts.values(), default=0)
    if kubernetes or c.target == "yarn":
        # device_plugins.check (Kubernetes) and yarn.check (YARN) report a missing pool, a resource
        # no pool provides, more GPUs than one node offers, per-container limits of shared GPUs and
        # YARN's maximum-allocation.
        if amount > best:
            return
    elif not pools:
        wanted = " ".join(x for x in (gpu.vendor, repr(gpu.model) if gpu.model else None) if x) or "any"
        yield Problem(
            c.field_path("taskManager", "gpu"),
            f"no {c.platform} node pool has {wanted} GPUs for this cluster's TaskManagers; add such "
            "a pool or fix taskManager.gpu (pool, vendor, model)", FLINK_NO_GPU_POOL,
        )
        return
    elif amount > best:
        yield Problem(
            amount_path,
            f"{amount} GPUs per TaskManager exceed the GPUs per node of every pool that can host it "
            f"({_pool_list(counts, 'per node')}); a TaskManager runs on one host, so use at most {best}", FLINK_GPUS_OVER_POOL_NODES,
        )
        return
    total = sum(counts.get(p.name, 0) * p.nodes for p in pools)
    need = c.task_manager.replicas * amount
    if need > total:
        yield Problem(
            c.field_path("taskManager", "replicas"),
            f"{c.task_manager.replicas} TaskManagers × {amount} need {need} {resource}, but the pools that "
            f"can host them have {total} in total; lower replicas or amount, or add nodes", FLINK_GPUS_OVER_POOLS,
        )
    for host, count, per_node in standalone_workers(spec, c):
        if count * amount > per_node:
            yield Problem(
                c.field_path("taskManager", "replicas"),
                f"{c.task_manager.replicas} TaskManagers spread over the pools' hosts put {count} on {host}, "
                f"needing {count * amount} GPUs where it has {per_node}; lower replicas or add hosts", FLINK_GPUS_OVER_HOST,
            )
            break
    if kubernetes:
        yield from _check_kubernetes_gpu(spec, c, pools)


def _check_kubernetes_gpu(spec: Spec, c: FlinkCluster, pools: list[NodePool]) -> Iterator[Problem]:
    gpu = c.task_manager.gpu
    assert gpu is not None
    shared = [p for p in pools if is_shared(p)]
    if shared and c.coordination:
        pool = shared[0]
        assert pool.gpu is not None
        yield Problem(
            c.field_path("discovery", "coordination"),
            f"pool {pool.name!r} shares each GPU between containers ({pool.gpu.sharing.strategy}), so the "
            "device plugin hands the same physical GPU to several TaskManagers; coordination mode has no effect "
            "there: the discovery script runs with --isolated-devices on Kubernetes, so each TaskManager takes "
            "the GPU its container was given and drops another pod's record for it, and the coordination file "
            "names only the last TaskManager started on each GPU; set discovery.coordination: false for this "
            "cluster", FLINK_COORDINATION_ON_SHARED,
        )
    if (
        gpu.model is not None
        and cluster_vendor(spec, c) == "nvidia"
        and not spec.device_plugins.nvidia.gpu_feature_discovery
    ):
        yield Problem(
            c.field_path("taskManager", "gpu", "model"),
            "selecting a GPU model uses the node label nvidia.com/gpu.product, which GPU Feature Discovery "
            "sets; enable devicePlugins.nvidia.gpuFeatureDiscovery or name the pool instead of the model", FLINK_MODEL_NEEDS_GFD,
        )
    # The coordination directory (hostPath) is checked for every platform by discovery_paths.check.


def _collect_queue_overruns(
    spec: Spec, c: FlinkCluster, leaves: set[str], over_queue: dict[str, list[tuple[FlinkCluster, list[tuple[str, str]]]]]
) -> None:
    """Collect the cluster's PodGroup against its Volcano queue's capability: a resource above it, or
    more pods than it allows, goes into ``over_queue`` (queue name → clusters and what they exceed),
    which `_podgroups_over_queue` reports once per queue."""
    if not c.on_kubernetes:
        return
    if c.queue is None:
        return  # the PodGroup goes to Volcano's default queue
    if not spec.uses_volcano:
        # Kueue admits each pod on its own (`accelplane.checks.kueue`); YuniKorn admits the gang
        # against the smallest max along the queue path, pods included,
        # and leaves a resource absent from max unlimited: `accelplane.checks.yunikorn`
        return
    q = spec.queue(c.queue)
    if q is None or c.queue not in leaves:
        return  # references.check reports undefined and non-leaf queues
    need = cluster_resources(spec, c)
    text = format_min_resources(need)
    over = [name for name, value in need.items() if (cap := q.capability.get(name)) is not None and value > cap.value]
    if over:
        over_queue.setdefault(q.name, []).append((c, [(name, text[name]) for name in over]))
    pods = q.capability.get("pods")
    if pods is not None and pod_count(c) > pods.value:
        over_queue.setdefault(q.name, []).append((c, [("pods", str(pod_count(c)))]))


def _podgroups_over_queue(
    spec: Spec, over_queue: dict[str, list[tuple[FlinkCluster, list[tuple[str, str]]]]]
) -> Iterator[Problem]:
    """One finding per Volcano queue whose capability is below the PodGroups of some clusters, naming
    every cluster and resource (AP2040), and one per queue whose pods capability is below their pods
    (AP2042): the queue's capability is the one setting that admits them all (#39 item 4); at the
    first such cluster's ``queue``, where shrinking it is the other way out."""
    for name, entries in over_queue.items():
        q = spec.queue(name)
        assert q is not None
        pods = [(c, res[0][1]) for c, res in entries if res[0][0] == "pods"]
        items = [(c, res) for c, res in entries if res[0][0] != "pods"]
        if items:
            needs = "; ".join(
                f"PodGroup {podgroup_name(c)} needs {', '.join(f'{r} {t}' for r, t in res)} ({_members(c)})"
                for c, res in items
            )
            limited = sorted({r for _, res in items for r, _ in res})
            caps = (
                str(q.capability.get(limited[0]))
                if len(limited) == 1
                else ", ".join(f"{r} {q.capability.get(r)}" for r in limited)
            )
            several = len(items) > 1
            yield Problem(
                items[0][0].field_path("queue"),
                f"{needs} but queue {name!r} has capability {caps}; Volcano would never admit "
                f"{'them' if several else 'it'}: raise the queue's capability or shrink the cluster{'s' if several else ''}",
                FLINK_PODGROUP_OVER_QUEUE,
            )
        if pods:
            who = (
                f"the cluster runs {pods[0][1]} pods ({_members(pods[0][0])})"
                if len(pods) == 1
                else "clusters " + ", ".join(f"{c.name} ({n} pods: {_members(c)})" for c, n in pods) + " run"
            )
            yield Problem(
                pods[0][0].field_path("queue"),
                f"{who} but queue {name!r} allows {q.capability.get('pods')}; raise its pods capability or "
                "lower replicas", FLINK_PODS_OVER_QUEUE,
            )


def _members(c: FlinkCluster) -> str:
    """``JobManager + 2 TaskManagers`` (``2 JobManagers + …`` with standby JobManagers)."""
    jms = jobmanager_replicas(c)
    return f"{'JobManager' if jms == 1 else f'{jms} JobManagers'} + {c.task_manager.replicas} TaskManagers"


def _check_kubernetes_config(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    """Config keys that Flink's pod factories apply over our pod templates and PodGroup.

    ``InitJobManagerDecorator``/``InitTaskManagerDecorator`` merge ``kubernetes.<role>.annotations``
    and ``kubernetes.<role>.node-selector`` over the template's (the config wins for the same key);
    ``KubernetesJobManagerParameters.getReplicas`` refuses standby JobManagers without HA.
    """
    if not c.on_kubernetes:
        return
    pool_keys = {GPU_PRODUCT_LABEL} if c.uses_gpus else set()
    if c.uses_gpus:
        for pool in candidate_pools(spec, c):
            pool_keys |= set(dict(pool.labels))
    for key, value in c.config:
        path = c.field_path("config", key)
        if key in ("kubernetes.jobmanager.annotations", "kubernetes.taskmanager.annotations"):
            if GROUP_NAME_ANNOTATION in flink_map(value) and spec.uses_volcano:
                yield Problem(
                    path,
                    f"Flink puts these annotations on the pods over the pod template's, so "
                    f"{GROUP_NAME_ANNOTATION} here would take the pods out of PodGroup {podgroup_name(c)} "
                    "(Volcano gang scheduling and the queue); remove it", FLINK_PODGROUP_ANNOTATION,
                )
        elif key == "kubernetes.taskmanager.node-selector":
            clash = sorted(set(flink_map(value)) & pool_keys)
            if clash:
                yield Problem(
                    path,
                    f"Flink puts this node selector on the TaskManagers over the pod template's, and "
                    f"{', '.join(clash)} selects the GPU pool (taskManager.gpu); remove "
                    f"{'it' if len(clash) == 1 else 'them'} and choose the pool with taskManager.gpu.pool", FLINK_NODE_SELECTOR_CLASH,
                )
        elif key in ("kubernetes.jobmanager.tolerations", "kubernetes.taskmanager.tolerations"):
            # KubernetesToleration.fromMap: Long.valueOf(tolerationSeconds) throws on anything else
            bad = [
                text
                for item in toleration_items(value)
                for name, text in item.items()
                if name.lower() == "tolerationseconds" and not LONG.fullmatch(text)
            ]
            if bad:
                yield Problem(
                    path,
                    f"Flink reads tolerationSeconds as a long, so {bad[0]!r} makes it fail to build the pods; "
                    "write a whole number of seconds or remove it", FLINK_TOLERATION_SECONDS,
                )
        elif key == JOBMANAGER_REPLICAS_KEY:
            text = str(value).strip()
            if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
                yield Problem(path, f"must be a positive integer (JobManager pods), not {value!r}", FLINK_JOBMANAGER_REPLICAS)
            elif int(text) > 1 and not ha_enabled(c):
                yield Problem(
                    path,
                    "standby JobManagers need high availability (Flink refuses to start them "
                    "otherwise); set config.high-availability.type (e.g. kubernetes) and "
                    "high-availability.storageDir, or remove this key", FLINK_STANDBY_NEEDS_HA,
                )


def _check_config(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    managed = managed_keys(spec, c)
    prefixes = managed_prefixes(c)
    operator = c.target == "kubernetes-operator"
    fmt = None if operator else config_format(c)
    for key, value in c.config:
        path = c.field_path("config", key)
        if isinstance(value, str) and WRONG_COORDINATION_FLAG in value.split():
            yield Problem(
                path,
                "'--enable-coordination' is not a flag of the GPU discovery script (Flink's docs show it by "
                "mistake; the flag is --enable-coordination-mode); remove this key and set "
                "discovery.coordination: true", FLINK_WRONG_COORDINATION_FLAG,
            )
            continue
        if key in managed:
            yield Problem(
                path,
                f"{key} is {managed[key].origin()}; set {managed[key].source} instead of config.{key}", FLINK_MANAGED_KEY,
            )
            continue
        if any(key.startswith(p) for p in prefixes) or (prefixes and key == "external-resources"):
            yield Problem(
                path,
                f"{GPU_PREFIX}* and external-resources are generated from taskManager.gpu and discovery; "
                f"remove config.{key}", FLINK_GPU_KEYS_GENERATED,
            )
            continue
        problem = legacy_value_problem(value) if fmt == "flink-conf.yaml" else yaml_value_problem(value)
        if problem is not None:
            yield Problem(path, problem, FLINK_CONFIG_VALUE)


def _check_queue_gpu_limits(spec: Spec, leaves: set[str]) -> Iterator[Problem]:
    """Queues that limit resources but not the GPU resource their Kubernetes clusters request: one
    finding per queue and resource (the queue's capability is the one root cause), at the first
    such cluster's ``queue``, naming every cluster: an error before Volcano 1.9 (the dimension is 0,
    volcano#3426), a warning from 1.9 (it is unlimited)."""
    if spec.uses_yunikorn:
        return  # YuniKorn leaves a resource the queue's max does not name unlimited (docs/yunikorn.md)
    found: dict[tuple[str, str], list[FlinkCluster]] = {}
    for c in spec.flink_clusters:
        if not c.on_kubernetes or c.queue is None or c.queue not in leaves:
            continue
        q = spec.queue(c.queue)
        gpu_resource = kubernetes_gpu_key(spec, c)
        if q is not None and q.capability and gpu_resource is not None and q.capability.get(gpu_resource) is None:
            found.setdefault((q.name, gpu_resource), []).append(c)
    for (name, gpu_resource), clusters in found.items():
        q = spec.queue(name)
        assert q is not None
        limits = ", ".join(q.capability.names())
        who = ", ".join(repr(c.name) for c in clusters)
        if volcano_unset_capability_blocks(spec):
            yield Problem(
                clusters[0].field_path("queue"),
                f"queue {name!r} limits {limits} but not {gpu_resource}, which cluster(s) {who} request; add "
                f"{gpu_resource} to its capability (on Volcano {spec.volcano.version} a partial capability "
                "blocks jobs, volcano#3426)", FLINK_QUEUE_LACKS_GPU_RESOURCE,
            )
        else:
            yield Problem(
                clusters[0].field_path("queue"),
                f"queue {name!r} limits {limits} but not {gpu_resource}, which cluster(s) {who} request; "
                f"Volcano {spec.volcano.version} leaves a dimension the capability does not set unlimited, so "
                f"the queue's jobs may take every {gpu_resource}: add {gpu_resource} to its capability",
                FLINK_QUEUE_GPU_UNLIMITED,
            )


def check(spec: Spec) -> Iterator[Problem]:
    """Every Flink cluster problem."""
    leaves = leaf_queue_names(spec)  # once: per cluster it made validation clusters × queues
    over_queue: dict[str, list[tuple[FlinkCluster, list[tuple[str, str]]]]] = {}
    for c in spec.flink_clusters:
        yield from _check_target(spec, c)
        yield from _check_version(c)
        yield from _check_parallelism(c)
        yield from _check_image(spec, c)
        yield from _check_resources(c)
        yield from _check_gpu(spec, c)
        _collect_queue_overruns(spec, c, leaves, over_queue)
        yield from _check_config(spec, c)
        yield from _check_kubernetes_config(spec, c)
    yield from _podgroups_over_queue(spec, over_queue)
    yield from _check_node_image(spec)
    yield from _check_queue_gpu_limits(spec, leaves)
