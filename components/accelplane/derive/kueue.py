"""Kueue's objects derived from the queue model: ResourceFlavors, Cohorts, ClusterQueues, LocalQueues.

Kueue (kubernetes-sigs/kueue, read at v0.19.2 = c3785e520aeeb0e0a93e8a3785a6e46c51502246) admits
pods against quotas and leaves placing them to kube-scheduler. The mapping (docs/kueue.md):

* one ResourceFlavor per Kubernetes GPU node pool (named after the pool and its GPU model; its
  ``nodeLabels`` are the pool's node labels, its ``nodeTaints`` the pool's NoSchedule/NoExecute
  taints) and one CPU flavor (`CPU_FLAVOR`, no labels) for the JobManagers;
* a leaf queue is a ClusterQueue, a queue with children a Cohort (``parentName`` from its parent):
  a ClusterQueue's ``cohortName`` is its parent queue;
* one resource group covering cpu, memory and every GPU resource of the pools; ``nominalQuota`` per
  flavor from ``deserved`` (``guarantee`` when unset): the JobManagers' cpu and memory on the CPU
  flavor, the rest filled into the GPU pools' flavors in pool order up to each pool's size, GPUs
  per model from ``gpuModels`` where the queue lists them; ``borrowingLimit`` is
  ``capability - deserved`` and ``reclaimable: false`` is ``lendingLimit: 0`` (both only in a
  cohort: Kueue refuses limits without one);
* a LocalQueue per (Flink namespace, queue), named as the queue.

Everything here is plain data; `accelplane.builders.kueue` wraps it into manifests and
`accelplane.checks.kueue` checks it with Kueue's own rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from accelplane.derive.flink_pods import jobmanager_requests, taskmanager_requests
from accelplane.derive.gpu_resources import advertised_resources, candidate_pools
from accelplane.derive.node_selection import pool_labels
from accelplane.derive.queues import leaf_queue_names, queue_parent
from accelplane.model import FlinkCluster, NodePool, Queue, Spec
from accelplane.quantity import format_resource

API_VERSION = "kueue.x-k8s.io/v1beta2"
"""Kueue's storage version since v0.16; the v0.19.2 CRDs serve v1beta1 and v1beta2 and store v1beta2
(../shared/reference/kueue/*.yaml, ``storage: true``)."""

MIN_VERSION = (0, 16)
"""The oldest Kueue release whose storage version is v1beta2."""

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""pkg/controller/constants/constants.go:23 (``QueueLabel``)."""
MANAGED_LABEL = "kueue.x-k8s.io/managed"
"""pkg/constants/constants.go:52 (``ManagedByKueueLabelKey``); its only accepted value is ``"true"``
(pkg/controller/jobs/pod/pod_webhook.go:256-263, ``validateManagedLabel``)."""
MANAGED_VALUE = "true"
SUSPENDING_PARENT_ANNOTATION = "kueue.x-k8s.io/pod-suspending-parent"
"""pkg/controller/jobs/pod/constants/constants.go:26 (``SuspendedByParentAnnotation``)."""
SUSPENDING_PARENT = "flink-jobmanager"
"""The annotation's value: free text Kueue does not validate (its Spark guide,
site/content/en/docs/tasks/run/external_workloads/spark_submit_plain_pod.md:65-67)."""
DEFAULT_LOCAL_QUEUE = "default"
"""pkg/controller/constants/constants.go:27: a LocalQueue of this name makes every unlabelled pod of
its namespace Kueue-managed (pod_webhook.go:151-158)."""
CPU_FLAVOR = "cpu"
"""The flavor of pods without GPUs (the JobManagers): no node labels, no taints."""
EXCLUDED_NAMESPACES = ("kube-system", "kueue-system")
"""Namespaces Kueue's default ``managedJobsNamespaceSelector`` leaves out (its manager configuration
defaults, apis/config/v1beta2/defaults.go); pods there are never suspended (pod_webhook.go:119-121)."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server sets on every namespace to its name (immutable, Kubernetes ≥ 1.22)."""


def flavor_name(pool: NodePool) -> str:
    """A GPU pool's ResourceFlavor name: ``<pool>-<gpu model>`` in DNS-1123 form (``<pool>-<vendor>``
    without a model), so the model shows in ``kubectl get resourceflavors``."""
    assert pool.gpu is not None
    model = pool.gpu.model or pool.gpu.vendor
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"{pool.name}-{slug}"[:253].rstrip("-")


def gpu_pools(spec: Spec) -> list[NodePool]:
    """Kubernetes GPU pools with device-plugin resources, in name order (DRA claims are no pod
    request Kueue's quotas count)."""
    return [
        p
        for p in sorted(spec.node_pools, key=lambda p: p.name)
        if p.platform == "kubernetes" and p.gpu is not None and p.gpu.allocation == "devicePlugin"
        and advertised_resources(p)
    ]


def pool_resources(pool: NodePool) -> dict[str, int]:
    """GPU resource → what all the pool's nodes advertise (whole GPUs, MIG slices of each profile,
    shared replicas)."""
    return {name: n * pool.nodes for name, n in advertised_resources(pool).items()}


def covered_resources(spec: Spec) -> list[str]:
    """cpu, memory and every GPU resource of the pools (Kueue counts a requested resource only when
    a resource group covers it)."""
    return ["cpu", "memory", *sorted({r for p in gpu_pools(spec) for r in pool_resources(p)})]


def flavor_taints(pool: NodePool) -> list[dict[str, str]]:
    """The pool's taints a flavor lists: Kueue only reads NoSchedule/NoExecute when it picks a flavor
    (PreferNoSchedule never keeps a pod off)."""
    out = []
    for t in pool.taints:
        if t.effect in ("NoSchedule", "NoExecute"):
            taint = {"key": t.key, "effect": t.effect}
            if t.value:
                taint["value"] = t.value
            out.append(taint)
    return out


def resource_flavors(spec: Spec) -> list[tuple[str, dict[str, Any], NodePool | None]]:
    """(name, spec, pool) of every flavor: the CPU flavor first, then one per GPU pool."""
    out: list[tuple[str, dict[str, Any], NodePool | None]] = [(CPU_FLAVOR, {}, None)]
    for pool in gpu_pools(spec):
        body: dict[str, Any] = {}
        labels = pool_labels(pool)
        if labels:
            body["nodeLabels"] = labels
        taints = flavor_taints(pool)
        if taints:
            body["nodeTaints"] = taints
        out.append((flavor_name(pool), body, pool))
    return out


def queue_clusters(spec: Spec, queue: str) -> list[FlinkCluster]:
    """The Kubernetes Flink clusters that queue in ``queue``."""
    return [c for c in spec.flink_clusters if c.on_kubernetes and c.queue == queue]


def cohort_queues(spec: Spec) -> list[Queue]:
    """Queues with children: Kueue Cohorts."""
    leaves = leaf_queue_names(spec)
    return [q for q in spec.queues if q.name not in leaves]


def cluster_queues(spec: Spec) -> list[Queue]:
    """Leaf queues: Kueue ClusterQueues."""
    leaves = leaf_queue_names(spec)
    return [q for q in spec.queues if q.name in leaves]


def _base(queue: Queue, name: str) -> Decimal:
    """What the queue deserves of a resource (``guarantee`` when ``deserved`` leaves it unset)."""
    q = queue.deserved.get(name) or queue.guarantee.get(name)
    return q.value if q is not None else Decimal(0)


def _pool_total(pool: NodePool, name: str) -> Decimal | None:
    """What all nodes of a pool have of a resource, None when the spec does not say."""
    if name == "cpu":
        return pool.cpu.value * pool.nodes if pool.cpu is not None else None
    if name == "memory":
        return pool.memory.value * pool.nodes if pool.memory is not None else None
    return Decimal(pool_resources(pool).get(name, 0))


def _per_gpu(pool: NodePool, name: str) -> Decimal | None:
    """A pool node's cpu (whole millicores) or memory (whole MiB) per GPU resource unit it
    advertises (a GPU, a MIG slice, a shared replica), None when not given."""
    total = _pool_total(pool, name)
    units = sum(pool_resources(pool).values())
    if total is None or units == 0:
        return None
    return _floor(name, total / units)


def _floor(name: str, value: Decimal) -> Decimal:
    """``value`` rounded down to whole millicores (cpu) or MiB (memory)."""
    step = Decimal("0.001") if name == "cpu" else Decimal(2**20)
    return (value / step).to_integral_value(rounding="ROUND_FLOOR") * step


def _fill(amount: Decimal, pools: list[NodePool], name: str) -> tuple[dict[str, Decimal], Decimal]:
    """``amount`` of resource ``name`` spread over ``pools`` in order, each taking at most its size;
    returns flavor → share and what is left over."""
    out: dict[str, Decimal] = {}
    for pool in pools:
        cap = _pool_total(pool, name)
        take = amount if cap is None else min(amount, cap)
        out[flavor_name(pool)] = take
        amount -= take
    return out, amount


@dataclass(frozen=True)
class FlavorQuota:
    """One flavor's quotas in a ClusterQueue: resource → (nominal, borrowing limit, lending limit)."""

    flavor: str
    resources: tuple[tuple[str, Decimal, Decimal | None, Decimal | None], ...]

    def nominal(self, name: str) -> Decimal:
        """Nominal quota of ``name`` (0 when not covered)."""
        return next((n for r, n, _b, _l in self.resources if r == name), Decimal(0))

    def borrowing(self, name: str) -> Decimal | None:
        """Borrowing limit of ``name`` (None: unlimited)."""
        return next((b for r, _n, b, _l in self.resources if r == name), None)


def _demand(spec: Spec, queue: Queue, resource: str, pools: list[NodePool]) -> list[tuple[NodePool, Decimal]]:
    """(pool, units of ``resource``) the queue's Flink clusters request on each of ``pools``: all of a
    cluster's TaskManagers on its first candidate pool that advertises the resource."""
    out: list[tuple[NodePool, Decimal]] = []
    names = {p.name: p for p in pools}
    for c in queue_clusters(spec, queue.name):
        requests = taskmanager_requests(spec, c)
        if resource not in requests:
            continue
        first = next((names[p.name] for p in sorted(candidate_pools(spec, c), key=lambda p: p.name) if p.name in names), None)
        if first is not None:
            out.append((first, requests[resource] * c.task_manager.replicas))
    return out


def _gpu_amounts(
    spec: Spec, queue: Queue, resource: str, pools: list[NodePool]
) -> tuple[dict[str, Decimal], dict[str, Decimal | None]]:
    """flavor → GPUs nominal and flavor → GPU headroom (capability - deserved, None: unlimited)."""
    nominal: dict[str, Decimal] = {}
    headroom: dict[str, Decimal | None] = {}
    if queue.gpu_models:
        for pool in pools:
            assert pool.gpu is not None
            entry = queue.gpu_model(pool.gpu.model or "")
            nominal[flavor_name(pool)] = Decimal(0)
            headroom[flavor_name(pool)] = Decimal(0)
            if entry is None:
                continue
            same = [p for p in pools if p.gpu is not None and p.gpu.model == pool.gpu.model]
            shares, left = _fill(Decimal(entry.deserved or 0), same, resource)
            nominal[flavor_name(pool)] = shares[flavor_name(pool)] + (left if pool is same[-1] else 0)
            model_cap = entry.capability
            headroom[flavor_name(pool)] = (
                None if model_cap is None else max(Decimal(model_cap) - Decimal(entry.deserved or 0), Decimal(0))
            )
        return nominal, headroom
    shares = {flavor_name(p): Decimal(0) for p in pools}
    left = _base(queue, resource)
    # first the pools the queue's Flink clusters run their TaskManagers on, as many as they request
    for pool, demand in _demand(spec, queue, resource, pools):
        size = _pool_total(pool, resource) or Decimal(0)
        take = max(min(left, demand, size - shares[flavor_name(pool)]), Decimal(0))
        shares[flavor_name(pool)] += take
        left -= take
    for pool in pools:
        size = _pool_total(pool, resource) or Decimal(0)
        take = max(min(left, size - shares[flavor_name(pool)]), Decimal(0))
        shares[flavor_name(pool)] += take
        left -= take
    if pools:
        shares[flavor_name(pools[-1])] += left
    limit = queue.capability.get(resource)
    room = None if limit is None else max(limit.value - _base(queue, resource), Decimal(0))
    return shares, {flavor_name(p): room for p in pools}


def flavor_quotas(spec: Spec, queue: Queue) -> list[FlavorQuota]:
    """The ClusterQueue's quotas per flavor, in flavor order (`resource_flavors`)."""
    pools = gpu_pools(spec)
    covered = covered_resources(spec)
    in_cohort = queue_parent(queue) is not None
    lend = Decimal(0) if in_cohort and queue.reclaimable is False else None
    jm = {"cpu": Decimal(0), "memory": Decimal(0)}
    for c in queue_clusters(spec, queue.name):
        for name, value in jobmanager_requests(c).items():
            jm[name] += value
    nominal: dict[str, dict[str, Decimal]] = {CPU_FLAVOR: {}}
    room: dict[str, dict[str, Decimal | None]] = {CPU_FLAVOR: {}}
    for p in pools:
        nominal[flavor_name(p)] = {}
        room[flavor_name(p)] = {}
    for resource in covered[2:]:
        with_resource = [p for p in pools if resource in pool_resources(p)]
        shares_g, rooms_g = _gpu_amounts(spec, queue, resource, with_resource)
        nominal[CPU_FLAVOR][resource] = Decimal(0)
        room[CPU_FLAVOR][resource] = Decimal(0)
        for p in pools:
            nominal[flavor_name(p)][resource] = shares_g.get(flavor_name(p), Decimal(0))
            room[flavor_name(p)][resource] = rooms_g.get(flavor_name(p), Decimal(0))
    for name in ("cpu", "memory"):
        base = _base(queue, name)
        cap = queue.capability.get(name)
        headroom = None if cap is None else max(cap.value - base, Decimal(0))
        on_cpu = min(base, jm[name])
        left = base - on_cpu
        # first what goes with the queue's GPUs of each pool (the pool's cpu/memory per GPU),
        # then the rest in pool order up to each pool's size
        wanted = {}
        for p in pools:
            per_gpu = _per_gpu(p, name)
            gpus = sum(nominal[flavor_name(p)][r] for r in pool_resources(p))
            wanted[flavor_name(p)] = per_gpu * gpus if per_gpu is not None else Decimal(0)
        total_wanted = sum(wanted.values(), Decimal(0))
        for flavor, want in wanted.items():
            # more wanted than deserved: each pool its proportional part (rounded down)
            take = want if total_wanted <= left else _floor(name, left * want / total_wanted)
            nominal[flavor][name] = take
        left -= sum((nominal[f][name] for f in wanted), Decimal(0))
        for p in pools:
            total = _pool_total(p, name)
            have = nominal[flavor_name(p)][name]
            take = left if total is None else min(left, max(total - have, Decimal(0)))
            nominal[flavor_name(p)][name] = have + take
            left -= take
        nominal[CPU_FLAVOR][name] = on_cpu + left
        for flavor in nominal:
            room[flavor][name] = headroom
    out = []
    for flavor in [CPU_FLAVOR, *(flavor_name(p) for p in pools)]:
        out.append(
            FlavorQuota(
                flavor,
                tuple(
                    (r, nominal[flavor][r], room[flavor][r] if in_cohort else None, lend)
                    for r in covered
                ),
            )
        )
    return out


def cluster_queue_spec(spec: Spec, queue: Queue) -> dict[str, Any]:
    """The ClusterQueue's ``spec``: namespaceSelector (the namespaces of the Flink clusters that queue
    here, by their immutable name label; none when no cluster does, which Kueue reads as no
    namespace, unlike ``{}``, all of them), cohortName, one resource group."""
    namespaces = sorted({c.namespace for c in queue_clusters(spec, queue.name)})
    body: dict[str, Any] = {}
    if namespaces:  # unset is Kueue's "nothing" selector: a queue no Flink cluster uses admits nothing
        body["namespaceSelector"] = {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": namespaces}]
        }
    parent = queue_parent(queue)
    if parent is not None:
        body["cohortName"] = parent
    flavors = []
    for fq in flavor_quotas(spec, queue):
        resources = []
        for name, nominal, borrowing, lending in fq.resources:
            r: dict[str, Any] = {"name": name, "nominalQuota": format_resource(name, nominal)}
            if borrowing is not None:
                r["borrowingLimit"] = format_resource(name, borrowing)
            if lending is not None:
                r["lendingLimit"] = format_resource(name, lending)
            resources.append(r)
        flavors.append({"name": fq.flavor, "resources": resources})
    body["resourceGroups"] = [{"coveredResources": covered_resources(spec), "flavors": flavors}]
    return body


def cohort_spec(queue: Queue) -> dict[str, Any]:
    """A Cohort's ``spec``: its parent cohort (none at the top). It holds no quota of its own: in
    Kueue a cohort's quota adds to its ClusterQueues', which already hold the queue's ``deserved``."""
    parent = queue_parent(queue)
    return {"parentName": parent} if parent is not None else {}


def local_queues(spec: Spec) -> list[tuple[str, str]]:
    """(namespace, queue) of every LocalQueue: one per Flink namespace and queue its clusters use
    (the LocalQueue is named as the queue and points to the ClusterQueue of that name)."""
    leaves = leaf_queue_names(spec)
    return sorted(
        {(c.namespace, c.queue) for c in spec.flink_clusters if c.on_kubernetes and c.queue in leaves}
    )


def pod_metadata(cluster: FlinkCluster, role: str) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) Kueue needs on a Flink pod (none without a queue).

    JobManager: ``queue-name`` only, in the pod template (not ``kubernetes.jobmanager.labels``,
    which Flink also puts on the Deployment): the pod webhook adds ``managed`` and its finalizer
    (pod_webhook.go:160-174). TaskManager: ``queue-name``, ``managed: "true"`` and
    ``pod-suspending-parent``: with the annotation the webhook gates the pod whatever its owners
    (pod_webhook.go:109-113, 170-176), and the pod reconciler skips a pod without ``managed``
    (pod_controller.go:610-616)."""
    if cluster.queue is None:
        return {}, {}
    labels = {QUEUE_NAME_LABEL: cluster.queue}
    if role == "jobmanager":
        return labels, {}
    return {**labels, MANAGED_LABEL: MANAGED_VALUE}, {SUSPENDING_PARENT_ANNOTATION: SUSPENDING_PARENT}


def pod_requests(spec: Spec, cluster: FlinkCluster, role: str) -> dict[str, Decimal]:
    """What one pod of a role asks Kueue for (its main container's requests)."""
    return jobmanager_requests(cluster) if role == "jobmanager" else taskmanager_requests(spec, cluster)


def manager_values(spec: Spec) -> dict[str, Any]:
    """The part of Kueue's manager configuration this cluster needs (``integrations.frameworks``
    with ``pod``; ``managedJobsNamespaceSelector`` over the Flink namespaces), as a Helm values
    snippet (``managerConfig.controllerManagerConfigYaml`` of the kueue chart takes it as text)."""
    namespaces = sorted({ns for ns, _q in local_queues(spec)})
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "manageJobsWithoutQueueName": False,
        "managedJobsNamespaceSelector": {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": namespaces}]
        },
        "integrations": {"frameworks": ["pod"]},
    }
