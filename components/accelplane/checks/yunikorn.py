"""Checks for Apache YuniKorn clusters: what its config validator rejects, what it ignores.

The rules are apache/yunikorn-core ``pkg/common/configs/configvalidator.go`` (``checkQueueResource``:
a queue's max fits its parent's effective max, the effective max being the component-wise minimum
along the path from root; the children's guaranteed add up to no more than the parent's guaranteed
and effective max, a parent whose guaranteed is unset or all zeros passing its children's sum up;
``checkPlacementRules``: a fixed rule names a leaf) and ``pkg/common/resources/quantity.go``
(integers only, milli only for ``vcore``); at submission, the gang's admission against the queue
path (``partition.go``, ``queue.go``). YuniKorn's validator itself, run as an oracle, judged the
trees of tests/yunikorn/data/oracle_trees.json: these checks reject exactly the trees it rejects.
Rules the schema already keeps (queue names: DNS labels are within YuniKorn's
``^[a-zA-Z0-9_:#/@-]{1,64}$``, lowercase so never duplicates by case) and those shared with Volcano
(guaranteed within max, a max within the parent's: `accelplane.checks.scheduling`) are not repeated.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from accelplane.derive.dra import cluster_device_class
from accelplane.derive.flink_placement import flink_map
from accelplane.derive.flink_pods import min_resources, pod_count
from accelplane.derive.queues import children_by_parent, leaf_queue_names, parent_cycles, queue_parent
from accelplane.derive.yunikorn import (
    APP_ID_LABEL,
    FALLBACK_QUEUE,
    MAX_LABEL_VALUE,
    QUEUE_LABEL,
    format_value,
    guaranteed,
    is_volcano_only_resource,
    queue_path,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, Queue, Spec
from accelplane.quantity import format_resource

VOLCANO_SETTINGS_IGNORED = declare(
    "AP2501", WARNING, "the volcano block has no effect on a cluster scheduled by YuniKorn",
    fix="remove `volcano` (or set `scheduler: volcano`)",
)
YUNIKORN_SETTINGS_IGNORED = declare(
    "AP2502", WARNING, "the yunikorn block has no effect unless YuniKorn schedules a Kubernetes cluster",
    fix="remove `yunikorn` (or set `scheduler: yunikorn` on a Kubernetes cluster)",
)
WEIGHT_IGNORED = declare(
    "AP2503", WARNING, "YuniKorn has no queue weights: weight has no effect",
    fix="remove `weight` and give the queue its share as `deserved` (YuniKorn's guaranteed)",
)
GUARANTEE_IGNORED = declare(
    "AP2504", WARNING, "with deserved set, guarantee has no effect on YuniKorn (deserved becomes guaranteed)",
    fix="remove `guarantee` (YuniKorn guarantees the `deserved` resources)",
)
DEVICECLASS_IGNORED = declare(
    "AP2505", WARNING, "YuniKorn never counts DRA claims under deviceclass/<class>: the quota has no effect",
    fix="remove the `deviceclass/<class>` key (or schedule with Volcano, which accounts DRA devices)",
)
QUANTITY_UNREPRESENTABLE = declare(
    "AP2506", ERROR,
    "YuniKorn accepts only whole quantities (milli-cores for cpu) that fit an int64: it rejects the queue configuration",
    fix="round the value to a whole number (cpu: to a milli-core, e.g. 250m)",
)
ANCESTOR_MAX_EXCEEDED = declare(
    "AP2507", ERROR, "a capability exceeds an ancestor queue's capability: YuniKorn rejects the queue configuration",
    fix="lower the capability to at most the ancestor's",
)
CHILDREN_GUARANTEED_EXCEED = declare(
    "AP2508", ERROR,
    "the children's guaranteed add up to more than the parent's guaranteed or max: YuniKorn rejects the queue "
    "configuration",
    fix="raise the parent's deserved/capability or lower the children's deserved/guarantee",
)
QUEUE_PATH_TOO_LONG = declare(
    "AP2509", ERROR, "the queue path is longer than a label value may be (63 characters)",
    fix="use shorter queue names (the `queue` label carries root.<parents>.<queue>)",
)
FALLBACK_QUEUE_NOT_LEAF = declare(
    "AP2510", ERROR, "queue 'default' has child queues, but YuniKorn's fallback placement needs root.default to be a leaf",
    fix="rename the parent queue 'default'",
)
POD_METADATA_OVERRIDDEN = declare(
    "AP2512", ERROR,
    "a Flink labels/annotations key overrides the pod template's YuniKorn application, queue or gang metadata",
    fix="remove the key from kubernetes.<role>.labels/annotations (accelplane sets it in the pod templates)",
)
GANG_OVER_PATH_MAX = declare(
    "AP2590", ERROR,
    "a Flink cluster's gang needs more than the smallest max along its queue path: YuniKorn rejects the application",
    fix="raise the capability of the limiting queue (and of its ancestors) or shrink the cluster",
)
HARD_GANG_NEVER_RECOVERS = declare(
    "AP2591", ERROR,
    "gangSchedulingStyle Hard fails a Flink application for good: the JobManager Deployment's new pod joins the "
    "failed application and is never scheduled",
    fix="set yunikorn.gangSchedulingStyle: Soft (the default)",
)
DRA_NOT_RESERVED = declare(
    "AP2511", WARNING, "YuniKorn's placeholders cannot hold DRA claims: the gang reserves no GPUs for these TaskManagers",
    fix="use a device-plugin GPU pool with YuniKorn, or `scheduler: volcano` for DRA pools",
)


def _check_blocks(spec: Spec) -> Iterator[Problem]:
    if spec.uses_yunikorn and spec.volcano.configured:
        yield Problem(
            ("volcano",),
            "YuniKorn schedules this cluster (scheduler: yunikorn), so no Volcano setting has any effect; "
            "remove volcano",
            VOLCANO_SETTINGS_IGNORED,
        )
    if spec.scheduler == "yunikorn" and not spec.has_platform("kubernetes"):
        yield Problem(
            ("scheduler",),
            "the cluster has no kubernetes platform, so scheduler: yunikorn (and any yunikorn setting) has no "
            "effect; remove them",
            YUNIKORN_SETTINGS_IGNORED,
        )
    elif not spec.uses_yunikorn and spec.yunikorn.configured:
        yield Problem(
            ("yunikorn",),
            f"scheduler is {spec.scheduler}, so no YuniKorn setting has any effect; remove yunikorn or set "
            "scheduler: yunikorn",
            YUNIKORN_SETTINGS_IGNORED,
        )


def _check_queue_fields(spec: Spec) -> Iterator[Problem]:
    """Queue fields YuniKorn ignores (weight and guarantee still size YARN queues on a cluster that
    also runs YARN) and values it cannot hold."""
    yarn = spec.has_platform("yarn")
    for q in spec.queues:
        if q.weight != 1 and not yarn:
            yield Problem(
                (*q.path, "weight"),
                f"YuniKorn shares resources by guaranteed and max, never by weight, so weight {q.weight} "
                "would have no effect; give the queue its share as deserved and remove weight",
                WEIGHT_IGNORED,
            )
        if q.deserved and q.guarantee and not yarn:
            yield Problem(
                (*q.path, "guarantee"),
                "YuniKorn guarantees this queue its deserved resources, so guarantee would have no effect; "
                "remove guarantee",
                GUARANTEE_IGNORED,
            )
        for field, values in (("capability", q.capability), ("deserved", q.deserved), ("guarantee", q.guarantee)):
            for name, quantity in values.items:
                if is_volcano_only_resource(name):
                    yield Problem(
                        (*q.path, field, name),
                        f"YuniKorn never counts DRA claims under {name}, so this quota would have no effect; "
                        "remove it",
                        DEVICECLASS_IGNORED,
                    )
                elif format_value(name, quantity.value) is None:
                    yield Problem(
                        (*q.path, field, name),
                        f"YuniKorn accepts only whole quantities{' of milli-cores' if name == 'cpu' else ''} "
                        f"up to an int64, not {quantity}; round it",
                        QUANTITY_UNREPRESENTABLE,
                    )


def _values(values: dict[str, Decimal]) -> str:
    return ", ".join(f"{n}: {format_resource(n, v)}" for n, v in sorted(values.items()))


def _counted(queue: Queue, field: str) -> dict[str, Decimal]:
    """``guaranteed`` or ``max`` of a queue as YuniKorn counts it (Volcano-only keys dropped)."""
    values = guaranteed(queue) if field == "guaranteed" else queue.capability
    return {n: q.value for n, q in values.items if not is_volcano_only_resource(n)}


def _check_tree(spec: Spec) -> Iterator[Problem]:
    """``checkQueueResource`` on the spec's tree: ancestors' max and the children's guaranteed."""
    cyclic = {q.name for cycle in parent_cycles(spec) for q in cycle}
    by_parent = children_by_parent(spec)
    problems: list[Problem] = []

    def walk(queue: Queue, inherited_max: dict[str, tuple[Decimal, str]]) -> dict[str, Decimal]:
        own_max = _counted(queue, "max")
        parent = spec.queue(queue_parent(queue) or "")
        parent_max = _counted(parent, "max") if parent is not None else {}
        for name, value in own_max.items():
            limit = inherited_max.get(name)
            # above the direct parent's own max is `accelplane.checks.scheduling`'s AP2014 (shared
            # with Volcano), also when an ancestor's equal max is the one that limits: one finding
            if limit is not None and value > limit[0] and not (name in parent_max and value > parent_max[name]):
                problems.append(
                    Problem(
                        (*queue.path, "capability", name),
                        f"capability {format_resource(name, value)} exceeds {format_resource(name, limit[0])}, "
                        f"the capability of ancestor queue {limit[1]!r}; YuniKorn rejects it",
                        ANCESTOR_MAX_EXCEEDED,
                    )
                )
        effective = dict(inherited_max)
        for name, value in own_max.items():
            if name not in effective or value < effective[name][0]:
                effective[name] = (value, queue.name)
        children_sum: dict[str, Decimal] = {}
        for child in by_parent.get(queue.name, []):
            if child.name in cyclic:
                continue
            for name, value in walk(child, effective).items():
                children_sum[name] = children_sum.get(name, Decimal(0)) + value
        own_g = _counted(queue, "guaranteed")
        for name, total in children_sum.items():
            bound = own_g.get(name)
            what = "guaranteed"
            if bound is None or total <= bound:
                bound, what = (effective[name][0], "max") if name in effective else (None, "")
            if bound is not None and total > bound:
                problems.append(
                    Problem(
                        queue.path,
                        f"the guaranteed {name} of queue {queue.name!r}'s children (deserved, else guarantee) "
                        f"add up to {format_resource(name, total)}, more than its {what} "
                        f"{format_resource(name, bound)}; YuniKorn rejects the queue configuration",
                        CHILDREN_GUARANTEED_EXCEED,
                    )
                )
        # configvalidator.go:149-152: a parent whose guaranteed is all zeros (or unset) passes its
        # children's sum up, so the grandparent's guaranteed must hold that sum
        return children_sum if all(v == 0 for v in own_g.values()) else own_g

    for top in by_parent.get(None, []):
        if top.name not in cyclic:
            walk(top, {})
    yield from problems


def _check_placement(spec: Spec) -> Iterator[Problem]:
    fallback = spec.queue(FALLBACK_QUEUE)
    if fallback is not None and queue_parent(fallback) is None and _has_children(spec, FALLBACK_QUEUE):
        yield Problem(
            (*fallback.path, "name"),
            "YuniKorn places pods that name no queue in root.default, which must be a leaf; "
            "this queue 'default' has child queues: rename it",
            FALLBACK_QUEUE_NOT_LEAF,
        )
    too_long: dict[str, list[FlinkCluster]] = {}  # one finding per queue: its names are the one fix
    for c in spec.flink_clusters:
        if not c.on_kubernetes:
            continue
        if c.queue is not None and spec.queue(c.queue) is not None and len(queue_path(spec, c.queue)) > MAX_LABEL_VALUE:
            too_long.setdefault(c.queue, []).append(c)
        if cluster_device_class(spec, c) is not None:
            yield Problem(
                c.field_path("taskManager", "gpu"),
                "the TaskManagers claim their GPUs through DRA, and YuniKorn's placeholder pods cannot hold "
                "claims: the gang would reserve no GPUs; use a device-plugin pool or scheduler: volcano",
                DRA_NOT_RESERVED,
            )
    for queue, clusters in too_long.items():
        path = queue_path(spec, queue)
        yield Problem(
            clusters[0].field_path("queue"),
            f"the pods' queue label of Flink cluster{'s' if len(clusters) > 1 else ''} "
            f"{', '.join(c.name for c in clusters)} would be {path!r} ({len(path)} characters), more than a "
            f"label value's {MAX_LABEL_VALUE}; use shorter queue names",
            QUEUE_PATH_TOO_LONG,
        )


FLINK_METADATA_KEYS = tuple(
    f"kubernetes.{role}.{kind}" for role in ("jobmanager", "taskmanager") for kind in ("labels", "annotations")
)
YUNIKORN_KEY_PREFIX = "yunikorn.apache.org/"


def _check_flink_metadata(spec: Spec) -> Iterator[Problem]:
    """Flink's ``InitJobManagerDecorator``/``InitTaskManagerDecorator`` put ``kubernetes.<role>.labels``
    and ``.annotations`` on the pods over the pod template's: an application id, queue or
    ``yunikorn.apache.org/*`` key there would split the cluster into other applications, queues or gangs."""
    for c in spec.flink_clusters:
        if not c.on_kubernetes:
            continue
        for key, value in c.config:
            if key not in FLINK_METADATA_KEYS:
                continue
            clash = sorted(
                k for k in flink_map(value) if k in (APP_ID_LABEL, QUEUE_LABEL) or k.startswith(YUNIKORN_KEY_PREFIX)
            )
            if clash:
                yield Problem(
                    c.field_path("config", key),
                    f"Flink puts these on the pods over the pod template's, so {', '.join(clash)} here would "
                    "override the YuniKorn application, queue or task groups accelplane sets; remove "
                    f"{'it' if len(clash) == 1 else 'them'}",
                    POD_METADATA_OVERRIDDEN,
                )


def gang_request(spec: Spec, cluster: FlinkCluster) -> dict[str, Decimal]:
    """What the shim asks the core to reserve for the cluster's task groups (k8shim
    ``common.GetTGResource``, summed in ``Application.setTaskGroups``): every member's requests
    (JobManagers and TaskManagers, GPUs included) and one ``pods`` per member. The task groups'
    ``minResource`` is the main container's request, which the init containers never exceed."""
    ask = {n: v for n, v in min_resources(spec, cluster).items() if not is_volcano_only_resource(n)}
    ask["pods"] = Decimal(pod_count(cluster))
    return ask


def path_max(spec: Spec, name: str) -> dict[str, tuple[Decimal, str]]:
    """The smallest ``max`` per resource along the path from queue ``name`` up to root, with the
    queue that sets it (yunikorn-core ``Queue.GetMaxQueueSet``: the component-wise minimum of the
    queue's and its ancestors' max; a resource no queue on the path limits is unlimited)."""
    out: dict[str, tuple[Decimal, str]] = {}
    seen: set[str] = set()
    queue = spec.queue(name)
    while queue is not None and queue.name not in seen:
        seen.add(queue.name)
        for res, value in _counted(queue, "max").items():
            if res not in out or value < out[res][0]:
                out[res] = (value, queue.name)
        queue = spec.queue(queue_parent(queue) or "")
    return out


def _check_gangs(spec: Spec) -> Iterator[Problem]:
    """partition.go ``AddApplication`` (yunikorn-core be3bb48, lines 384-393): an application with
    task groups is rejected unless its whole placeholder request fits ``GetMaxQueueSet`` of its
    queue (queue.go 1605-1627), ``FitInMaxUndef``: a resource absent from every max is unlimited."""
    leaves = leaf_queue_names(spec)
    for c in spec.flink_clusters:
        if not c.on_kubernetes or c.queue is None or c.queue not in leaves:
            continue  # references.check reports undefined and non-leaf queues
        limits = path_max(spec, c.queue)
        over = [
            (res, value, limits[res])
            for res, value in sorted(gang_request(spec, c).items())
            if res in limits and value > max(Decimal(0), limits[res][0])
        ]
        if not over:
            continue
        needs = ", ".join(
            f"{res} {format_resource(res, value)} (queue {by!r} allows {format_resource(res, limit)})"
            for res, value, (limit, by) in over
        )
        yield Problem(
            c.field_path("queue"),
            f"YuniKorn reserves the whole cluster (JobManager and {c.task_manager.replicas} TaskManagers) with "
            f"placeholders and admits it only if that fits the smallest max along queue path "
            f"{queue_path(spec, c.queue)}; it needs {needs}, so YuniKorn rejects the application when "
            "its JobManager pod is submitted; raise those capabilities or shrink the cluster",
            GANG_OVER_PATH_MAX,
        )


def _check_gang_style(spec: Spec) -> Iterator[Problem]:
    """``Hard``: on placeholder timeout the core fails the application (yunikorn-core
    objects/application.go ``timeoutPlaceholderProcessing``) and the shim fails its pods. Every
    Flink JobManager on Kubernetes is a Deployment's pod (native and operator targets): the
    replacement carries the same ``applicationId`` and joins the application while it is still
    Failed (k8shim cache/context.go ``ensureAppAndTaskCreated``), which the shim never schedules and
    removes only once all its tasks have terminated (shim/scheduler.go ``schedule``)."""
    if spec.yunikorn.gang_scheduling_style != "Hard":
        return
    clusters = [c.name for c in spec.flink_clusters if c.on_kubernetes]
    if clusters:
        yield Problem(
            ("yunikorn", "gangSchedulingStyle"),
            f"with Hard, a Flink cluster ({', '.join(clusters)}) whose placeholders time out fails for good: its "
            "JobManager Deployment starts a new pod with the same applicationId, which joins the failed "
            "application and is never scheduled; set gangSchedulingStyle: Soft (the default), which releases "
            "the placeholders and schedules the pods one by one",
            HARD_GANG_NEVER_RECOVERS,
        )


def _has_children(spec: Spec, name: str) -> bool:
    """True when some queue names ``name`` as its parent."""
    return any(queue_parent(q) == name for q in spec.queues)


def check(spec: Spec) -> Iterator[Problem]:
    """Every YuniKorn problem of the spec (only the blocks' warnings unless YuniKorn schedules it)."""
    yield from _check_blocks(spec)
    if not spec.uses_yunikorn:
        return
    yield from _check_queue_fields(spec)
    yield from _check_tree(spec)
    yield from _check_placement(spec)
    yield from _check_gangs(spec)
    yield from _check_gang_style(spec)
    yield from _check_flink_metadata(spec)
