"""Checks for Kueue clusters: what Kueue rejects, and where a Flink pod would stay gated for ever or
run without quota.

Rules read in kubernetes-sigs/kueue v0.19.2 (commit c3785e520aeeb0e0a93e8a3785a6e46c51502246):
the pod webhook (``pkg/controller/jobs/pod/pod_webhook.go`` 104-183 ``Default``: a pod with
``kueue.x-k8s.io/pod-suspending-parent`` is gated whatever its namespace and owners, and gets no
``managed`` label; other pods only in a namespace the ``managedJobsNamespaceSelector`` selects;
256-263 ``validateManagedLabel``: ``managed`` may only be ``"true"``), the pod reconciler
(``pod_controller.go`` 610-616 ``Skip``: a pod without ``managed: "true"`` is never reconciled, so a
gated one stays gated), the LocalQueue defaulting (pod_webhook.go 151-158: a LocalQueue named
``default`` labels every unlabelled pod of its namespace), flavor assignment (a flavor is tried only
when the pod tolerates its NoSchedule/NoExecute taints and its node selector agrees on the flavor's
label keys; the pod fits a flavor when its requests fit nominal quota plus what it may borrow) and
the ported webhook rules of `accelplane.kueue_rules`.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Literal

from accelplane.derive.dra import cluster_device_class
from accelplane.derive.flink_placement import flink_map, with_config_placement
from accelplane.derive.gpu_resources import candidate_pools
from accelplane.derive.kueue import (
    DEFAULT_LOCAL_QUEUE,
    EXCLUDED_NAMESPACES,
    MANAGED_LABEL,
    MANAGED_VALUE,
    MIN_VERSION,
    QUEUE_NAME_LABEL,
    SUSPENDING_PARENT_ANNOTATION,
    FlavorQuota,
    cluster_queue_spec,
    cluster_queues,
    covered_resources,
    flavor_quotas,
    local_queues,
    pod_metadata,
    pod_requests,
    resource_flavors,
)
from accelplane.derive.node_selection import merged_tolerations, pool_labels
from accelplane.derive.queues import leaf_queue_names, queue_parent
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.kubernetes_rules import tolerates
from accelplane.kueue_rules import cluster_queue_errors, is_resource_name, resource_flavor_errors
from accelplane.model import FlinkCluster, Queue, Spec
from accelplane.quantity import format_resource

KUEUE_TOO_OLD = declare(
    "AP2601", ERROR, "the Kueue release serves no kueue.x-k8s.io/v1beta2 storage version",
    fix="set kueue.version to 0.16 or later (install a Kueue release that stores v1beta2)",
)
KUEUE_SETTINGS_IGNORED = declare(
    "AP2602", WARNING, "the kueue block has no effect: Kueue does not schedule this cluster",
    fix="remove kueue, or set scheduler: kueue on a cluster with the kubernetes platform",
)
VOLCANO_SETTINGS_IGNORED = declare(
    "AP2603", WARNING, "the volcano block has no effect on a cluster whose pods Kueue admits",
    fix="remove volcano",
)
CLUSTER_WITHOUT_QUEUE = declare(
    "AP2604", WARNING, "a Flink cluster without a queue runs outside Kueue's quotas",
    fix="set queue on the Flink cluster to a leaf queue",
)
DEFAULT_LOCAL_QUEUE_NAME = declare(
    "AP2605", WARNING, "a LocalQueue named default makes every unlabelled pod of its namespace Kueue-managed",
    fix="rename the queue (the LocalQueue takes its name) to anything but default",
)
NAMESPACE_NOT_MANAGED = declare(
    "AP2606", WARNING, "Kueue never manages JobManager pods in kube-system or kueue-system",
    fix="move the Flink cluster to a namespace of its own",
)
MANAGED_LABEL_VALUE = declare(
    "AP2607", ERROR, "Kueue's pod webhook rejects a kueue.x-k8s.io/managed label other than \"true\"",
    fix="remove kueue.x-k8s.io/managed from the Flink config (the pod templates carry it)",
)
QUEUE_NAME_WITHOUT_LOCAL_QUEUE = declare(
    "AP2608", ERROR, "a Flink pod's kueue.x-k8s.io/queue-name names no LocalQueue of its namespace: it stays gated",
    fix="remove kueue.x-k8s.io/queue-name from the Flink config and set the cluster's queue instead",
)
SUSPENDED_WITHOUT_MANAGED = declare(
    "AP2609", ERROR,
    "a pod with kueue.x-k8s.io/pod-suspending-parent but without managed: \"true\" and a queue-name is gated for ever",
    fix="remove kueue.x-k8s.io/pod-suspending-parent from the Flink config (accelplane puts it on the TaskManagers)",
)
POD_FITS_NO_FLAVOR = declare(
    "AP2610", ERROR, "a Flink pod fits no flavor of its ClusterQueue (nominal quota plus what it may borrow)",
    fix="raise the queue's deserved or capability (or gpuModels) for the pool the pod needs, or shrink the pod",
)
FLAVOR_REJECTED = declare(
    "AP2611", ERROR, "Kueue rejects the ResourceFlavor of this node pool",
    fix="give the pool at most 8 labels and 8 NoSchedule/NoExecute taints, each key and effect once",
)
CLUSTER_QUEUE_REJECTED = declare(
    "AP2612", ERROR, "Kueue's ClusterQueue webhook or schema rejects the ClusterQueue of this queue",
    fix="use fewer node pools (at most 63 GPU pools give at most 64 flavors) so the resource group fits",
)
PARENT_QUOTA_IGNORED = declare(
    "AP2613", WARNING, "a queue with children is a Kueue Cohort: its deserved/guarantee has no effect",
    fix="remove deserved and guarantee from the parent queue (its children's ClusterQueues hold the quota)",
)
RESOURCE_NAME_REFUSED = declare(
    "AP2615", ERROR, "a queue resource name is no Kubernetes resource name: Kueue refuses it as a covered resource",
    fix="use a resource name of at most 63 characters after an optional DNS prefix (e.g. nvidia.com/gpu)",
)
RESOURCE_NOT_COVERED = declare(
    "AP2616", WARNING, "a queue resource Kueue's ClusterQueue does not cover: its limit has no effect",
    fix="remove the resource from the queue (Kueue quotas cover cpu, memory and the node pools' GPU resources)",
)
DRA_NOT_COUNTED = declare(
    "AP2614", WARNING, "Kueue counts no DRA claim here: these TaskManagers' GPUs are outside its quotas",
    fix="use a device-plugin GPU pool with Kueue, or scheduler: volcano for DRA pools",
)


def _check_blocks(spec: Spec) -> Iterator[Problem]:
    if spec.kueue.configured and not spec.uses_kueue:
        yield Problem(
            ("kueue",),
            f"scheduler is {spec.scheduler}" + ("" if spec.has_platform("kubernetes") else " and the cluster has no kubernetes platform")
            + ", so no Kueue setting has any effect; remove kueue or set scheduler: kueue",
            KUEUE_SETTINGS_IGNORED,
        )
    if spec.uses_kueue and spec.volcano.configured:
        yield Problem(
            ("volcano",),
            "Kueue admits this cluster's pods and kube-scheduler places them (scheduler: kueue), so no "
            "Volcano setting has any effect; remove volcano",
            VOLCANO_SETTINGS_IGNORED,
        )


def _check_version(spec: Spec) -> Iterator[Problem]:
    if spec.kueue.version_tuple < MIN_VERSION:
        yield Problem(
            ("kueue", "version"),
            f"Kueue {spec.kueue.version} does not store kueue.x-k8s.io/v1beta2, the version accelplane "
            f"emits; set kueue.version to {MIN_VERSION[0]}.{MIN_VERSION[1]} or later",
            KUEUE_TOO_OLD,
        )


def _check_queues(spec: Spec) -> Iterator[Problem]:
    leaves = leaf_queue_names(spec)
    for q in spec.queues:
        if q.name not in leaves:
            for field in ("deserved", "guarantee"):
                if getattr(q, field):
                    yield Problem(
                        (*q.path, field),
                        f"queue {q.name!r} has children, so it is a Kueue Cohort without quota of its own; "
                        f"its {field} has no effect (its children's ClusterQueues hold the quota); remove it",
                        PARENT_QUOTA_IGNORED,
                    )
    covered = set(covered_resources(spec))
    for q in spec.queues:
        for field in ("deserved", "guarantee", "capability"):
            for name in getattr(q, field).names():
                if not is_resource_name(name):
                    yield Problem(
                        (*q.path, field, name),
                        f"{name[:80]!r}{'…' if len(name) > 80 else ''} is no Kubernetes resource name (a qualified "
                        "name: at most 63 characters after an optional DNS prefix); Kueue's ClusterQueue webhook "
                        "refuses it (pkg/webhooks/common.go:29-35) and no pod can request it; rename or remove it",
                        RESOURCE_NAME_REFUSED,
                    )
                elif name not in covered:
                    yield Problem(
                        (*q.path, field, name),
                        f"Kueue's ClusterQueues cover {', '.join(sorted(covered))}, so the queue's {field} of {name} "
                        "has no effect under Kueue; remove it",
                        RESOURCE_NOT_COVERED,
                    )
    for namespace, queue in local_queues(spec):
        default = spec.queue(queue) if queue == DEFAULT_LOCAL_QUEUE else None
        if default is not None:
            yield Problem(
                (*default.path, "name"),
                f"the LocalQueue of queue {queue!r} in namespace {namespace!r} is named default, so Kueue labels "
                "every pod of that namespace without a queue-name with it (pod_webhook.go:151-158); rename the queue",
                DEFAULT_LOCAL_QUEUE_NAME,
            )


def _check_rendered_rules(spec: Spec) -> Iterator[Problem]:
    for name, body, pool in resource_flavors(spec):
        if pool is None:
            continue
        for path, message in resource_flavor_errors({"spec": body}):
            yield Problem(pool.path, f"ResourceFlavor {name}: {path}: {message}", FLAVOR_REJECTED)
    for q in cluster_queues(spec):
        for path, message in cluster_queue_errors({"spec": cluster_queue_spec(spec, q)}):
            yield Problem(q.path, f"ClusterQueue {q.name}: {path}: {message}", CLUSTER_QUEUE_REJECTED)


def _role(role: str) -> Literal["jobmanager", "taskmanager"]:
    return "jobmanager" if role == "jobmanager" else "taskmanager"


def _effective_metadata(cluster: FlinkCluster, role: str) -> tuple[dict[str, str], dict[str, str]]:
    """Kueue's labels and annotations on a Flink pod: the template's (`pod_metadata`), with Flink's
    config maps over them (Flink's decorators put ``kubernetes.<role>.labels``/``annotations`` over
    the template's)."""
    labels, annotations = pod_metadata(cluster, role)
    config = dict(cluster.config)
    labels = {**labels, **flink_map(config.get(f"kubernetes.{role}.labels", ""))}
    annotations = {**annotations, **flink_map(config.get(f"kubernetes.{role}.annotations", ""))}
    return labels, annotations


def _placement(spec: Spec, cluster: FlinkCluster, role: str) -> dict[str, Any]:
    """nodeSelector and tolerations Kueue compares with a flavor, as on the pods Flink creates: the
    TaskManager template's (one labelled candidate pool: its labels; several: a node affinity, whose
    terms Kueue compares too but which this check leaves out, so it may try a flavor Kueue would
    skip, never the reverse) plus Flink's config."""
    base: dict[str, Any] = {}
    if role == "taskmanager" and cluster.uses_gpus:
        pools = sorted(candidate_pools(spec, cluster), key=lambda p: p.name)
        if len(pools) == 1 and pools[0].labels:
            base["nodeSelector"] = pool_labels(pools[0])
        tolerations = merged_tolerations([], pools)
        if tolerations:
            base["tolerations"] = tolerations
    return with_config_placement(base, cluster, _role(role))


def _check_pod_metadata(spec: Spec, c: FlinkCluster) -> Iterator[Problem]:
    queues = {q for ns, q in local_queues(spec) if ns == c.namespace}
    for role in ("jobmanager", "taskmanager"):
        labels, annotations = _effective_metadata(c, role)
        config_labels = flink_map(dict(c.config).get(f"kubernetes.{role}.labels", ""))
        config_annotations = flink_map(dict(c.config).get(f"kubernetes.{role}.annotations", ""))
        path = c.field_path("config", f"kubernetes.{role}.labels")
        if MANAGED_LABEL in config_labels and config_labels[MANAGED_LABEL] != MANAGED_VALUE:
            yield Problem(
                path,
                f"{MANAGED_LABEL}: {config_labels[MANAGED_LABEL]!r} on the {role} pods: Kueue's pod webhook only "
                f"accepts \"true\" (pod_webhook.go:256-263), so Flink could not create them; remove it",
                MANAGED_LABEL_VALUE,
            )
            continue
        if QUEUE_NAME_LABEL in config_labels and config_labels[QUEUE_NAME_LABEL] not in queues:
            yield Problem(
                path,
                f"{QUEUE_NAME_LABEL}: {config_labels[QUEUE_NAME_LABEL]!r} on the {role} pods names no LocalQueue "
                f"accelplane renders in namespace {c.namespace!r} ({', '.join(sorted(queues)) or 'none'}), so Kueue "
                "never admits them; remove it and set the cluster's queue",
                QUEUE_NAME_WITHOUT_LOCAL_QUEUE,
            )
            continue
        if SUSPENDING_PARENT_ANNOTATION in annotations and (
            labels.get(MANAGED_LABEL) != MANAGED_VALUE or not labels.get(QUEUE_NAME_LABEL)
        ):
            where = (
                c.field_path("config", f"kubernetes.{role}.annotations")
                if SUSPENDING_PARENT_ANNOTATION in config_annotations
                else c.field_path("queue")
            )
            yield Problem(
                where,
                f"the {role} pods carry {SUSPENDING_PARENT_ANNOTATION} without {MANAGED_LABEL}: \"true\" and a "
                f"{QUEUE_NAME_LABEL}: Kueue's webhook gates them (pod_webhook.go:109-113) but its pod reconciler "
                "skips them (pod_controller.go:610-616), so they never start; remove the annotation from the "
                "Flink config",
                SUSPENDED_WITHOUT_MANAGED,
            )


def _flavor_admits(pod: dict[str, Any], flavor_body: dict[str, Any]) -> bool:
    """True when Kueue tries the flavor for this pod: it tolerates the flavor's NoSchedule/NoExecute
    taints, and its nodeSelector agrees with the flavor's nodeLabels on the keys both have."""
    tolerations = pod.get("tolerations", [])
    for t in flavor_body.get("nodeTaints", []):
        if not any(tolerates(tol, t["key"], t.get("value", ""), t["effect"]) for tol in tolerations):
            return False
    selector = pod.get("nodeSelector", {})
    return all(selector.get(k, v) == v for k, v in flavor_body.get("nodeLabels", {}).items())


def _lendable(spec: Spec, queue: Queue, flavor: str, resource: str) -> Decimal | None:
    """What the other ClusterQueues of the queue's cohort tree can lend of ``resource`` in
    ``flavor`` (None when the queue is in no cohort)."""
    if queue_parent(queue) is None:
        return None
    root = _root(spec, queue)
    total = Decimal(0)
    for other in cluster_queues(spec):
        if other.name == queue.name or _root(spec, other) != root:
            continue
        for fq in flavor_quotas(spec, other):
            if fq.flavor != flavor:
                continue
            nominal = fq.nominal(resource)
            lending = next((lend for r, _n, _b, lend in fq.resources if r == resource), None)
            total += nominal if lending is None else min(nominal, lending)
    return total


def _root(spec: Spec, queue: Queue) -> str:
    seen = {queue.name}
    current = queue
    while (parent := queue_parent(current)) is not None and parent not in seen:
        seen.add(parent)
        nxt = spec.queue(parent)
        if nxt is None:
            return parent
        current = nxt
    return current.name


def _available(spec: Spec, queue: Queue, fq: FlavorQuota, resource: str) -> Decimal:
    nominal = fq.nominal(resource)
    lendable = _lendable(spec, queue, fq.flavor, resource)
    if lendable is None:
        return nominal
    limit = fq.borrowing(resource)
    return nominal + (lendable if limit is None else min(limit, lendable))


def _misfits(spec: Spec, c: FlinkCluster) -> Iterator[tuple[Queue, str]]:
    """(ClusterQueue, what the pod needs and which flavors were tried) for each pod of the cluster
    (JobManager, TaskManager) that fits no flavor of its ClusterQueue."""
    q = spec.queue(c.queue or "")
    if q is None or q.name not in leaf_queue_names(spec):
        return  # references.check reports undefined and non-leaf queues
    bodies = {name: body for name, body, _pool in resource_flavors(spec)}
    quotas = flavor_quotas(spec, q)
    for role in ("jobmanager", "taskmanager"):
        placement = _placement(spec, c, role)
        requests = pod_requests(spec, c, role)
        if any(r.startswith("deviceclass/") for r in requests):
            continue
        tried = [fq for fq in quotas if _flavor_admits(placement, bodies[fq.flavor])]
        if any(all(v <= _available(spec, q, fq, r) for r, v in requests.items()) for fq in tried):
            continue
        need = ", ".join(f"{r} {format_resource(r, v)}" for r, v in requests.items())
        yield q, f"a {role} pod of {c.name!r} needs {need} (flavors {', '.join(fq.flavor for fq in tried) or 'none'})"


def _check_fit(spec: Spec) -> Iterator[Problem]:
    """One finding per ClusterQueue that some Flink pods fit in no flavor of, naming every such pod:
    the queue's quota is the one setting that admits them all (#39 item 4); at the first such
    cluster's ``queue``, where moving or shrinking the cluster is the other way out."""
    by_queue: dict[str, tuple[FlinkCluster, list[str]]] = {}
    for c in spec.flink_clusters:
        if c.on_kubernetes:
            for q, pod in _misfits(spec, c):
                by_queue.setdefault(q.name, (c, []))[1].append(pod)
    for name, (first, pods) in by_queue.items():
        yield Problem(
            first.field_path("queue"),
            f"{'; '.join(pods)}, but no flavor of ClusterQueue {name!r} {'they' if len(pods) > 1 else 'it'} may "
            f"use has that much nominal quota plus what it may borrow, so Kueue never admits "
            f"{'them' if len(pods) > 1 else 'it'}; raise the queue's deserved/capability (or gpuModels) or "
            f"shrink the pod{'s' if len(pods) > 1 else ''}",
            POD_FITS_NO_FLAVOR,
        )


def _check_clusters(spec: Spec) -> Iterator[Problem]:
    for c in spec.flink_clusters:
        if not c.on_kubernetes:
            continue
        if c.queue is None:
            yield Problem(
                c.field_path("queue"),
                f"Flink cluster {c.name!r} names no queue, so its pods carry no {QUEUE_NAME_LABEL} and run "
                "without Kueue's quotas; set queue to a leaf queue",
                CLUSTER_WITHOUT_QUEUE,
            )
        elif c.namespace in EXCLUDED_NAMESPACES:
            yield Problem(
                c.field_path("namespace"),
                f"Kueue's managedJobsNamespaceSelector leaves {c.namespace} out by default, so its JobManager "
                "pods run without quota (pod_webhook.go:119-121); move the cluster to a namespace of its own",
                NAMESPACE_NOT_MANAGED,
            )
        yield from _check_pod_metadata(spec, c)
        if cluster_device_class(spec, c) is not None:
            yield Problem(
                c.field_path("taskManager", "gpu"),
                f"the TaskManagers of {c.name!r} claim DRA devices, which Kueue only counts with its alpha "
                "DynamicResourceAllocation feature; use a device-plugin pool or scheduler: volcano",
                DRA_NOT_COUNTED,
            )


def check(spec: Spec) -> Iterator[Problem]:
    """Every Kueue problem of the spec (only the blocks' warnings unless Kueue admits its pods)."""
    yield from _check_blocks(spec)
    if not spec.uses_kueue:
        return
    yield from _check_version(spec)
    yield from _check_queues(spec)
    yield from _check_rendered_rules(spec)
    yield from _check_clusters(spec)
    yield from _check_fit(spec)
