"""Dynamic Resource Allocation problems: what would make a DRA pool, its DeviceClass, a Flink
cluster's claim or a ``deviceclass/<class>`` quota fail on the declared Kubernetes and Volcano
releases (see `accelplane.derive.dra` for the facts each rule stands on)."""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.dra import (
    MIN_KUBERNETES,
    MIN_VOLCANO,
    MIN_VOLCANO_QUOTA,
    cluster_dra_pools,
    device_class_for_pool,
    device_class_names,
    devices_per_node,
    dra_pools,
    quota_class,
    uses_dra,
)
from accelplane.derive.gpu_resources import candidate_pools
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, NodePool, Spec

DRA_KUBERNETES_TOO_OLD = declare(
    'AP3040', ERROR, 'DRA needs Kubernetes 1.32 or later',
    fix='raise kubernetes.version or use allocation devicePlugin',
)
DRA_NEEDS_MODEL = declare(
    'AP3041', ERROR, 'a DRA pool has no gpu.model',
    fix='set gpu.model as the driver reports it',
)
DRA_MIG_PROFILES = declare(
    'AP3042', ERROR, 'a DRA pool lists more or fewer than one MIG profile',
    fix='split the pool per profile',
)
DRA_SHARING_OPTIONS_UNUSED = declare(
    'AP3106', WARNING, 'device-plugin sharing options on a DRA pool have no effect',
    fix='remove them (sharing.strategy only)',
)
DRA_SHARING_MIG = declare(
    'AP3043', ERROR, 'sharing MIG devices on a DRA pool',
    fix='use sharing.strategy none or mig.strategy none',
)
DRA_CLASS_NAME_TOO_LONG = declare(
    'AP3044', ERROR, "a DeviceClass name is too long for Volcano's quota key",
    fix='shorten gpu.model',
)
DRA_NOT_KUBERNETES = declare(
    'AP3107', WARNING, 'gpu.allocation on a pool that is not on Kubernetes has no effect',
    fix='remove allocation',
)
DRA_CLASS_CLASH = declare(
    'AP3045', ERROR, 'two pools give the same DeviceClass name',
    fix='write each model exactly as the driver reports it',
)
DRA_VOLCANO_TOO_OLD = declare(
    'AP3046', ERROR, 'the Volcano version cannot schedule pods with resource claims',
    fix='upgrade volcano.version or use allocation devicePlugin',
)
DRA_QUOTA_UNKNOWN_CLASS = declare(
    'AP3108', WARNING, 'a queue limits a deviceclass/<class> no DRA pool has (the limit means nothing)',
    fix='use a DeviceClass of the DRA pools, or remove the limit', whole_spec=True,
)
DRA_QUOTA_IGNORED = declare(
    'AP3109', WARNING, 'the Volcano version ignores deviceclass/<class> quotas',
    fix='upgrade volcano.version to 1.15 or later',
)
DRA_MIXED_CANDIDATES = declare(
    'AP3047', ERROR, 'TaskManagers could land on DRA and device-plugin pools',
    fix='name one pool (gpu.pool) or a model only one kind of pool has',
)
DRA_CLASSES_DIFFER = declare(
    'AP3048', ERROR, 'candidate DRA pools have different DeviceClasses',
    fix='name one pool (gpu.pool) or a model',
)
DRA_RESOURCE_SET = declare(
    'AP3049', ERROR, 'gpu.resource is set for TaskManagers on a DRA pool',
    fix='remove taskManager.gpu.resource',
)
DRA_DEVICES_OVER_NODE = declare(
    'AP3050', ERROR, 'a TaskManager claims more devices than one node publishes',
    fix='lower taskManager.gpu.amount',
)

QUOTA_NAME_MAX = 63
"""Longest name part of a resource name (``deviceclass/<class>``): a qualified name's name part."""


def _check_pool(spec: Spec, pool: NodePool) -> Iterator[Problem]:
    gpu = pool.gpu
    assert gpu is not None
    path = (*pool.path, "gpu", "allocation")
    if spec.kubernetes_version_tuple < MIN_KUBERNETES:
        yield Problem(
            path,
            f"DRA needs Kubernetes 1.32 or later (resource.k8s.io/v1beta1); kubernetes.version is "
            f"{spec.kubernetes_version!r}: raise it or use allocation devicePlugin", DRA_KUBERNETES_TOO_OLD,
        )
    if not gpu.model:
        yield Problem(
            path,
            "a DRA pool needs gpu.model: its DeviceClass selects the driver's devices by productName", DRA_NEEDS_MODEL,
        )
    if gpu.vendor == "nvidia" and gpu.mig.strategy != "none" and len(gpu.mig.devices) != 1:
        yield Problem(
            (*pool.path, "gpu", "mig", "devices"),
            "a DRA pool hands out one MIG profile (one DeviceClass selecting the driver's mig devices by "
            f"profile); found {len(gpu.mig.devices)}: split the pool per profile", DRA_MIG_PROFILES,
        )
    sharing = gpu.sharing
    extras = [
        name
        for name, on in (
            ("replicas", sharing.replicas != 1),
            ("renameByDefault", sharing.rename_by_default),
            ("failRequestsGreaterThanOne", sharing.fail_requests_greater_than_one),
        )
        if on
    ]
    if extras:
        yield Problem(
            (*pool.path, "gpu", "sharing"),
            f"sharing.{', sharing.'.join(extras)} configure the device plugin; a DRA pool shares through "
            "the claim's GpuConfig (sharing.strategy only): remove them", DRA_SHARING_OPTIONS_UNUSED,
        )
    if sharing.strategy != "none" and gpu.mig.strategy != "none":
        yield Problem(
            (*pool.path, "gpu", "sharing", "strategy"),
            "on a DRA pool sharing applies to whole GPUs (the driver's GpuConfig); MIG devices are not "
            "shared: use sharing.strategy none or mig.strategy none", DRA_SHARING_MIG,
        )
    device_class = device_class_for_pool(pool)
    if device_class is not None and len(device_class.name) > QUOTA_NAME_MAX:
        yield Problem(
            (*pool.path, "gpu", "model"),
            f"the DeviceClass name {device_class.name!r} is longer than {QUOTA_NAME_MAX} characters, so "
            "Volcano's deviceclass/<class> resource key would be invalid; shorten the model", DRA_CLASS_NAME_TOO_LONG,
        )


def _check_non_kubernetes_pools(spec: Spec) -> Iterator[Problem]:
    for pool in spec.node_pools:
        if pool.gpu is not None and pool.gpu.allocation == "dra" and pool.platform != "kubernetes":
            yield Problem(
                (*pool.path, "gpu", "allocation"),
                f"DRA is Kubernetes' allocation mechanism; pool platform is {pool.platform}: remove allocation", DRA_NOT_KUBERNETES,
            )


def _check_class_names(spec: Spec) -> Iterator[Problem]:
    """Two models whose DeviceClass names coincide (``A100 X`` and ``A100-X``) would share one class
    selecting only one of them."""
    seen: dict[str, tuple[NodePool, object]] = {}
    for pool in dra_pools(spec):
        cls = device_class_for_pool(pool)
        if cls is None:
            continue
        first = seen.setdefault(cls.name, (pool, cls))
        if first[1] != cls:
            yield Problem(
                (*pool.path, "gpu", "model"),
                f"the DeviceClass name {cls.name!r} is the same as for pool {first[0].name!r} "
                f"({first[0].gpu.model if first[0].gpu else ''!r}), so one class would select only one "
                "of the models; write the model exactly as the driver reports it in both pools", DRA_CLASS_CLASH,
            )


def _check_volcano(spec: Spec) -> Iterator[Problem]:
    if uses_dra(spec) and spec.volcano.version_tuple < MIN_VOLCANO:
        yield Problem(
            ("volcano", "version"),
            f"Volcano {spec.volcano.version} cannot schedule pods with resource claims (DRA support in the "
            "predicates plugin came with Volcano 1.12); upgrade Volcano or use allocation devicePlugin", DRA_VOLCANO_TOO_OLD,
        )


def _check_queues(spec: Spec) -> Iterator[Problem]:
    if not spec.has_platform("kubernetes"):
        return
    classes = device_class_names(spec)
    shown = ", ".join(sorted(classes)) or "none"
    for q in spec.queues:
        for field, values in (("capability", q.capability), ("deserved", q.deserved), ("guarantee", q.guarantee)):
            for name in values.names():
                cls = quota_class(name)
                if cls is None:
                    continue
                path = (*q.path, field, name)
                if cls not in classes:
                    yield Problem(
                        path,
                        f"{name} names no DeviceClass of this cluster, so this queue limit means nothing "
                        f"(DeviceClasses of the DRA pools: {shown})", DRA_QUOTA_UNKNOWN_CLASS,
                    )
                elif spec.volcano.version_tuple < MIN_VOLCANO_QUOTA:
                    yield Problem(
                        path,
                        f"Volcano {spec.volcano.version} ignores deviceclass/<class> quotas (the capacity "
                        "plugin accounts DRA claims since Volcano 1.15); upgrade Volcano (volcano.version)", DRA_QUOTA_IGNORED,
                    )


def _check_cluster(spec: Spec, cluster: FlinkCluster) -> Iterator[Problem]:
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0 or cluster.platform != "kubernetes":
        return
    dra = cluster_dra_pools(spec, cluster)
    if not dra:
        return
    where = cluster.field_path("taskManager", "gpu", "pool" if gpu.pool else "model" if gpu.model else "amount")
    plugin = [p.name for p in candidate_pools(spec, cluster) if p not in dra]
    if plugin:
        yield Problem(
            where,
            f"the TaskManagers could land on DRA pools ({', '.join(p.name for p in dra)}) and device-plugin "
            f"pools ({', '.join(plugin)}), which need different requests; name one pool (gpu.pool) or a "
            "model only one kind of pool has", DRA_MIXED_CANDIDATES,
        )
        return
    classes = {c.name for c in (device_class_for_pool(p) for p in dra) if c is not None}
    if len(classes) > 1:
        yield Problem(
            where,
            f"the candidate DRA pools have different DeviceClasses ({', '.join(sorted(classes))}); one claim "
            "names one class: name one pool (gpu.pool) or a model", DRA_CLASSES_DIFFER,
        )
    if gpu.resource is not None:
        yield Problem(
            cluster.field_path("taskManager", "gpu", "resource"),
            "gpu.resource names a device-plugin extended resource; TaskManagers on a DRA pool claim devices "
            "of the pool's DeviceClass: remove it", DRA_RESOURCE_SET,
        )
    if not any(devices_per_node(p) >= gpu.amount for p in dra):
        per_node = ", ".join(f"pool {p.name!r}: {devices_per_node(p)}" for p in dra)
        yield Problem(
            cluster.field_path("taskManager", "gpu", "amount"),
            f"{gpu.amount} devices per TaskManager exceed what one node publishes ({per_node}); a "
            "TaskManager never spans nodes", DRA_DEVICES_OVER_NODE,
        )


def check(spec: Spec) -> Iterator[Problem]:
    """Every DRA problem of the spec."""
    yield from _check_non_kubernetes_pools(spec)
    if spec.has_platform("kubernetes"):
        for pool in dra_pools(spec):
            yield from _check_pool(spec, pool)
        yield from _check_class_names(spec)
    yield from _check_volcano(spec)
    yield from _check_queues(spec)
    for cluster in spec.flink_clusters:
        yield from _check_cluster(spec, cluster)
