"""Checks that the device plugins can run where they must and provide what workloads request.

* Pool GPU settings the NVIDIA/ROCm plugins accept: MIG ``single`` = exactly one profile, ``mixed``
  ≥ 1, at most 7 compute slices per GPU; sharing needs ``replicas ≥ 2``; MPS never on MIG GPUs;
  MIG and sharing are NVIDIA-only.
* Every device-plugin DaemonSet can select its pools (labels exist, none written by NFD/GFD) and
  selects nothing else it would run on (another pool carrying all of its pool's labels whose
  taints it tolerates), and tolerates its own pools' taints.
* Every GPU resource a Kubernetes Flink cluster or a queue names is advertised by some Kubernetes
  pool; a TaskManager's GPUs fit one node of a matching pool; shared replicas are requested one at
  a time where the plugin enforces it (MPS, ``failRequestsGreaterThanOne``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelplane.checks.mig_layout import layout_checked_by_model
from accelplane.derive.device_plugin_placement import (
    Placement,
    kubernetes_gpu_pools,
    placements,
    plugin_enabled,
)
from accelplane.derive.dra import cluster_dra_pools, is_dra_pool, quota_class
from accelplane.derive.gpu_resources import (
    advertised_resources,
    candidate_pools,
    gfd_product_label_for_pool,
    kubernetes_gpu_resource,
    max_request_per_container,
)
from accelplane.derive.node_selection import is_agent_written_label, pool_labels, selects, untolerated
from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, NodePool, Spec, Vendor, is_gpu_resource
from accelplane.names import is_label_value

AMD_MIG = declare(
    'AP3010', ERROR, 'MIG is configured on an AMD pool',
    fix='remove gpu.mig from the AMD pool',
)
AMD_SHARING = declare(
    'AP3011', ERROR, 'GPU sharing is configured on an AMD pool',
    fix='remove gpu.sharing from the AMD pool',
)
MIG_PROFILES_UNUSED = declare(
    'AP3102', WARNING, 'MIG profiles are listed but mig.strategy is none',
    fix='set mig.strategy single or mixed, or remove mig.devices',
)
MIG_SINGLE_PROFILES = declare(
    'AP3012', ERROR, 'mig.strategy single needs exactly one profile',
    fix='list one profile, or use mig.strategy mixed',
)
MIG_MIXED_EMPTY = declare(
    'AP3013', ERROR, 'mig.strategy mixed lists no profile',
    fix='list the profiles in mig.devices',
)
MIG_TOO_MANY_SLICES = declare(
    'AP3014', ERROR, 'the MIG profiles need more than 7 compute slices per GPU',
    fix='reduce the instance counts',
)
SHARING_OPTIONS_UNUSED = declare(
    'AP3101', WARNING, 'sharing options are set but sharing.strategy is none',
    fix='set sharing.strategy timeSlicing or mps, or remove the options',
)
SHARING_RENAME_IMPLICIT = declare(
    'AP3100', WARNING, 'GPU sharing without an explicit renameByDefault keeps the dedicated resource name (upstream default)',
    fix='set renameByDefault: false, or true and use <resource>.shared in Flink requests and queue limits',
)
SHARING_REPLICAS_TOO_FEW = declare(
    'AP3015', ERROR, 'time-slicing/MPS needs replicas >= 2',
    fix='set replicas to 2 or more, or sharing.strategy none',
)
MPS_ON_MIG = declare(
    'AP3016', ERROR, 'MPS sharing on MIG GPUs',
    fix='use timeSlicing, or mig.strategy none',
)
MPS_FAIL_REQUESTS_UNUSED = declare(
    'AP3103', WARNING, 'failRequestsGreaterThanOne has no effect with MPS',
    fix='remove failRequestsGreaterThanOne',
)
PLUGIN_TAINT_UNTOLERATED = declare(
    'AP3020', ERROR, 'a pool taint keeps its device-plugin DaemonSet off the pool',
    fix='remove the taint from nodePools[].taints, or report a bug (accelplane tolerates every taint listed there)',
)
POOL_WITHOUT_LABELS = declare(
    'AP3021', ERROR, 'a GPU pool has no labels to select it by',
    fix='add a label only its nodes carry, e.g. accelplane.io/pool: <pool>',
)
POOL_AGENT_LABEL = declare(
    'AP3022', ERROR, 'a pool is selected by a label NFD/GFD writes',
    fix='select the pool by a label you put on the nodes yourself',
)
PLUGIN_OVERLAP = declare(
    'AP3023', ERROR, 'a device-plugin DaemonSet would also run on another pool',
    fix='give the owning pool a label the other pool lacks',
)
PLUGIN_ENABLED_NO_POOLS = declare(
    'AP3104', WARNING, 'a device plugin is enabled but no Kubernetes pool has its GPUs',
    fix='add such a pool or remove enabled',
)
GFD_LABEL_INVALID = declare(
    'AP3024', ERROR, "GPU Feature Discovery's product label would not be a valid label value",
    fix='write the model name nvidia-smi reports',
)
FLINK_POOL_NOT_KUBERNETES = declare(
    'AP3030', ERROR, 'a Kubernetes Flink cluster names a pool of another platform',
    fix='name a kubernetes pool',
)
FLINK_NO_KUBERNETES_GPU_POOL = declare(
    'AP3031', ERROR, 'no Kubernetes pool has the GPUs a Flink cluster asks for',
    fix='add such a pool or fix taskManager.gpu', whole_spec=True,
)
FLINK_RESOURCE_NOT_ADVERTISED = declare(
    'AP3032', ERROR, 'the GPU resource a Flink cluster requests is advertised by no pool',
    fix="request a resource the pools advertise, or change the pool's MIG/sharing settings", whole_spec=True,
)
FLINK_GPUS_OVER_NODE = declare(
    'AP3033', ERROR, 'a TaskManager requests more GPUs than one node offers',
    fix='lower taskManager.gpu.amount', whole_spec=True,
)
FLINK_SHARED_REQUEST_TOO_BIG = declare(
    'AP3034', ERROR, 'a TaskManager requests more shared replicas than the device plugin allows per container',
    fix='request the amount the message names', whole_spec=True,
)
QUEUE_RESOURCE_NOT_ADVERTISED = declare(
    'AP3105', WARNING, 'a queue limits a GPU resource no pool advertises (the limit means nothing)',
    fix='limit a resource the pools advertise, or remove it', whole_spec=True,
)

MAX_MIG_SLICES = 7
VENDOR_GPU = "nvidia.com/gpu"
_PROFILE_RE = re.compile(r"^([1-8])g\.")


def _fmt(resources: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in resources.items()) or "nothing"


# --- pool GPU settings ------------------------------------------------------------------------


def _rename_consequences(spec: Spec, pool: NodePool) -> str:
    """What ``renameByDefault: true`` on ``pool`` asks for besides: the queues that limit the
    dedicated name but not the shared one (a Flink cluster on the pool then requests the shared
    name, which such a queue does not limit: volcano#3426)."""
    shared = f"{VENDOR_GPU}.shared"
    queues = [
        q.name
        for q in spec.queues
        if q.capability.get(VENDOR_GPU) is not None and q.capability.get(shared) is None
    ]
    if not queues or not spec.has_platform("kubernetes"):
        return ""
    return (
        f"; with true, queue(s) {', '.join(queues)} must limit {shared} too (their capability limits "
        f"{VENDOR_GPU}; rename that key where no pool keeps whole GPUs)"
    )


def _check_pool_gpu(spec: Spec, pool: NodePool) -> Iterator[Problem]:
    gpu = pool.gpu
    if gpu is None:
        return
    base: PathTuple = (*pool.path, "gpu")
    mig, sharing = gpu.mig, gpu.sharing
    if gpu.vendor == "amd":
        if mig.strategy != "none" or mig.devices:
            yield Problem(
                (*base, "mig"),
                "MIG is an NVIDIA feature; the ROCm device plugin advertises whole amd.com/gpu devices "
                "(remove gpu.mig from this AMD pool)", AMD_MIG,
            )
        if sharing.strategy != "none":
            yield Problem(
                (*base, "sharing", "strategy"),
                "the ROCm device plugin cannot share GPUs (time-slicing and MPS are NVIDIA device plugin "
                "features); remove gpu.sharing from this AMD pool", AMD_SHARING,
            )
        return
    profiles = ", ".join(p for p, _ in mig.devices)
    if mig.strategy == "none" and mig.devices:
        yield Problem(
            (*base, "mig", "devices"),
            f"MIG profiles ({profiles}) are only used with mig.strategy single or mixed; set the strategy "
            "or remove mig.devices", MIG_PROFILES_UNUSED,
        )
    if mig.strategy == "single" and len(mig.devices) != 1:
        found = f"found {len(mig.devices)}: {profiles}" if mig.devices else "found none"
        yield Problem(
            (*base, "mig", "devices"),
            "mig.strategy single needs exactly one MIG profile in mig.devices (every MIG device of a "
            f"node must be identical and is advertised as nvidia.com/gpu; {found}); use mixed for "
            "several profiles", MIG_SINGLE_PROFILES,
        )
    if mig.strategy == "mixed" and not mig.devices:
        yield Problem(
            (*base, "mig", "devices"),
            "mig.strategy mixed needs at least one MIG profile in mig.devices (e.g. {1g.10gb: 7}); each "
            "profile is advertised as nvidia.com/mig-<profile>", MIG_MIXED_EMPTY,
        )
    slices = sum(int(m.group(1)) * n for p, n in mig.devices if (m := _PROFILE_RE.match(p)))
    if mig.strategy != "none" and slices > MAX_MIG_SLICES and not layout_checked_by_model(pool):
        yield Problem(
            (*base, "mig", "devices"),
            f"the MIG profiles use {slices} compute slices per GPU, more than the {MAX_MIG_SLICES} a MIG "
            "GPU has; reduce the instance counts", MIG_TOO_MANY_SLICES,
        )
    if is_dra_pool(pool):
        return  # sharing through the DRA driver's claim configuration: accelplane.checks.dra
    if sharing.strategy == "none":
        extras = [
            name
            for name, on in (
                ("replicas", sharing.replicas != 1),
                ("renameByDefault", sharing.rename_by_default is not None),
                ("failRequestsGreaterThanOne", sharing.fail_requests_greater_than_one),
            )
            if on
        ]
        if extras:
            yield Problem(
                (*base, "sharing"),
                f"sharing.{', sharing.'.join(extras)} has no effect without sharing.strategy timeSlicing "
                "or mps; set the strategy or remove them", SHARING_OPTIONS_UNUSED,
            )
        return
    label = "time-slicing" if sharing.strategy == "timeSlicing" else "MPS"
    if sharing.rename_by_default is None and pool.platform != "yarn":  # yarn.check rejects sharing
        yield Problem(
            (*base, "sharing"),
            f"with {label} the device plugin advertises {sharing.replicas} slices per GPU; without "
            "renameByDefault they keep the dedicated name (nvidia.com/gpu), so queues and Flink "
            "requests would count slices as whole GPUs — set renameByDefault: true (slices become "
            "<resource>.shared) or renameByDefault: false to accept slices under the dedicated name "
            f"(report counts them apart){_rename_consequences(spec, pool) if mig.strategy == 'none' else ''}",
            SHARING_RENAME_IMPLICIT,
        )
    if sharing.replicas < 2:
        yield Problem(
            (*base, "sharing", "replicas"),
            f"{label} needs replicas >= 2 (the device plugin rejects 'number of replicas must be >= 2'; "
            f"got {sharing.replicas}); use sharing.strategy none for exclusive GPUs", SHARING_REPLICAS_TOO_FEW,
        )
    if sharing.strategy == "mps" and mig.strategy != "none":
        yield Problem(
            (*base, "sharing", "strategy"),
            f"sharing with MPS is not supported on MIG-enabled GPUs (mig.strategy {mig.strategy}); use "
            "timeSlicing, or mig.strategy none", MPS_ON_MIG,
        )
    if sharing.strategy == "mps" and sharing.fail_requests_greater_than_one:
        yield Problem(
            (*base, "sharing", "failRequestsGreaterThanOne"),
            "failRequestsGreaterThanOne applies to time-slicing only; the MPS plugin always refuses a "
            "request for more than one replica (remove it)", MPS_FAIL_REQUESTS_UNUSED,
        )


# --- DaemonSet placement ----------------------------------------------------------------------


def untolerated_pool_taints(spec: Spec, placement: Placement) -> Iterator[Problem]:
    """Taints of a DaemonSet's own pools that its tolerations do not cover."""
    for pool in placement.pools:
        for taint in untolerated(placement.tolerations, pool.taints):
            shown = (
                f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
            )
            yield Problem(
                taint.path,
                f"taint {shown} is not tolerated by DaemonSet {placement.name}, so it never runs on pool "
                f"{pool.name!r} and the pool's GPUs are never advertised", PLUGIN_TAINT_UNTOLERATED,
            )


def _check_placements(spec: Spec) -> Iterator[Problem]:
    all_placements = placements(spec)
    k8s_pools = [p for p in spec.node_pools if p.platform == "kubernetes"]
    unlabeled: set[str] = set()
    for placement in all_placements:
        for pool in placement.pools:
            if not pool.labels and pool.name not in unlabeled:
                unlabeled.add(pool.name)
                yield Problem(
                    (*pool.path, "labels"),
                    f"pool {pool.name!r} has no labels, so DaemonSet {placement.name} cannot select its nodes "
                    f"(it would run nowhere); add a label only its nodes carry, e.g. accelplane.io/pool: {pool.name}", POOL_WITHOUT_LABELS,
                )
        yield from untolerated_pool_taints(spec, placement)
    labelled = {p.name for pl in all_placements for p in pl.pools}
    for pool in spec.node_pools:
        if pool.name not in labelled:
            continue
        for key, _ in pool.labels:
            if is_agent_written_label(key):
                yield Problem(
                    (*pool.path, "labels", key),
                    f"label {key!r} is written on nodes by Node/GPU Feature Discovery or the AMD labeller, which "
                    "may not run (or need the device plugin first); select pools by labels you put on the "
                    "nodes yourself", POOL_AGENT_LABEL,
                )
    overlaps: dict[tuple[str, str], list[str]] = {}
    # Pools by each (label, value) they carry: a pool can only carry every label of an owner pool
    # if it carries the owner's rarest one, so only those are compared (pairwise over all pools was
    # quadratic, issue 15 §10).
    by_label: dict[tuple[str, str], list[int]] = {}
    for i, pool in enumerate(k8s_pools):
        for label in pool.labels:
            by_label.setdefault(label, []).append(i)
    for placement in all_placements:
        extra = dict(placement.node_selector)
        candidates: set[int] = set()
        for owner in placement.pools:
            if owner.labels:
                rarest: list[int] = min((by_label.get(lb, []) for lb in owner.labels), key=len)
                candidates.update(rarest)
        for other in (k8s_pools[i] for i in sorted(candidates)):
            if other in placement.pools:
                continue
            other_labels = pool_labels(other)
            if any(k in other_labels and other_labels[k] != v for k, v in extra.items()):
                continue
            owners = [p for p in placement.pools if p.labels and selects(pool_labels(p), other_labels)]
            if owners and not untolerated(placement.tolerations, other.taints):
                overlaps.setdefault((other.name, owners[0].name), []).append(placement.name)
    for (other_name, owner_name), names in sorted(overlaps.items()):
        selected = spec.pool(other_name)
        assert selected is not None
        yield Problem(
            (*selected.path, "labels"),
            f"nodes of pool {other_name!r} carry every label of pool {owner_name!r} and no taint keeps "
            f"DaemonSet(s) {', '.join(sorted(names))} (meant for {owner_name!r}) off them, so they would run "
            f"there too; give pool {owner_name!r} a label that {other_name!r} lacks", PLUGIN_OVERLAP,
        )


def _check_enabled(spec: Spec) -> Iterator[Problem]:
    if not spec.has_platform("kubernetes"):
        return
    vendors: tuple[tuple[Vendor, bool | None, str], ...] = (
        ("nvidia", spec.device_plugins.nvidia.enabled, "NVIDIA"),
        ("amd", spec.device_plugins.amd.enabled, "AMD"),
    )
    for vendor, enabled, shown in vendors:
        if enabled and not kubernetes_gpu_pools(spec, vendor):
            yield Problem(
                ("devicePlugins", vendor, "enabled"),
                f"no Kubernetes node pool has {shown} GPUs, so the device-plugin DaemonSet would have 0 "
                "desired pods; add such a pool or remove enabled", PLUGIN_ENABLED_NO_POOLS,
            )


def _check_gfd_labels(spec: Spec) -> Iterator[Problem]:
    if not plugin_enabled(spec, "nvidia") or not spec.device_plugins.nvidia.gpu_feature_discovery:
        return
    for pool in kubernetes_gpu_pools(spec, "nvidia"):
        value = gfd_product_label_for_pool(pool)
        if value is not None and not is_label_value(value):
            yield Problem(
                (*pool.path, "gpu", "model"),
                f"GPU Feature Discovery would label these nodes nvidia.com/gpu.product={value!r}, which is not "
                "a valid Kubernetes label value (at most 63 characters, alphanumeric at both ends), so the "
                "label never appears; use the model name nvidia-smi reports", GFD_LABEL_INVALID,
            )


# --- what workloads request -------------------------------------------------------------------


def _advertised_on_kubernetes(spec: Spec) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pool in spec.node_pools:
        if pool.platform == "kubernetes":
            for name in advertised_resources(pool):
                out.setdefault(name, []).append(pool.name)
    return dict(sorted(out.items()))


def _hint(resource: str, pools: list[NodePool]) -> str:
    if resource.startswith("nvidia.com/mig-"):
        single = [p.name for p in pools if p.gpu is not None and p.gpu.mig.strategy == "single"]
        if single:
            return (
                f"; nvidia.com/mig-<profile> resources exist only with mig.strategy mixed, pool "
                f"{single[0]!r} uses single (every slice is advertised as nvidia.com/gpu)"
            )
        return "; nvidia.com/mig-<profile> resources exist only on pools with mig.strategy mixed and that profile"
    if resource.endswith(".shared"):
        return "; <resource>.shared names exist only on pools with sharing.renameByDefault: true"
    return ""


def _check_flink_cluster(spec: Spec, cluster: FlinkCluster) -> Iterator[Problem]:
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.amount == 0 or cluster.platform != "kubernetes":
        return
    if cluster_dra_pools(spec, cluster):
        return  # claims DRA devices: accelplane.checks.dra
    if gpu.pool is not None and spec.pool(gpu.pool) is None:
        return  # reported by the references check
    resource = kubernetes_gpu_resource(spec, cluster)
    assert resource is not None
    candidates = candidate_pools(spec, cluster)
    if gpu.pool is not None and candidates and candidates[0].platform != "kubernetes":
        yield Problem(
            cluster.field_path("taskManager", "gpu", "pool"),
            f"pool {gpu.pool!r} is a {candidates[0].platform} pool; TaskManagers of a {cluster.target} "
            "cluster need a kubernetes pool", FLINK_POOL_NOT_KUBERNETES,
        )
        return
    if not candidates:
        wanted = " ".join(x for x in (gpu.vendor, gpu.model and repr(gpu.model)) if x) or "GPU"
        gpu_pools = [p.name for p in spec.node_pools if p.platform == "kubernetes" and p.gpu is not None]
        yield Problem(
            cluster.field_path(
                "taskManager", "gpu", "model" if gpu.model else "vendor" if gpu.vendor else "amount"
            ),
            f"no Kubernetes node pool has {wanted} GPUs, so no device plugin provides {resource} "
            f"(Kubernetes GPU pools: {', '.join(gpu_pools) or 'none'})", FLINK_NO_KUBERNETES_GPU_POOL,
        )
        return
    providers = [p for p in candidates if resource in advertised_resources(p)]
    res_path = cluster.field_path("taskManager", "gpu", "resource" if gpu.resource else "amount")
    if not providers:
        offered = "; ".join(f"pool {p.name!r} advertises {_fmt(advertised_resources(p))}" for p in candidates)
        yield Problem(
            res_path,
            f"{resource} is not provided by any Kubernetes node pool's device plugin ({offered})"
            f"{_hint(resource, candidates)}", FLINK_RESOURCE_NOT_ADVERTISED,
        )
        return
    amount_path = cluster.field_path("taskManager", "gpu", "amount")
    if not any(advertised_resources(p)[resource] >= gpu.amount for p in providers):
        per_node = ", ".join(f"pool {p.name!r}: {advertised_resources(p)[resource]}" for p in providers)
        yield Problem(
            amount_path,
            f"{gpu.amount} {resource} per TaskManager exceed what one node offers ({per_node}); a "
            "TaskManager never spans nodes", FLINK_GPUS_OVER_NODE,
        )
    for pool in providers:
        limit = max_request_per_container(pool, resource)
        if limit is not None and gpu.amount > limit:
            assert pool.gpu is not None
            why = (
                "MPS always refuses"
                if pool.gpu.sharing.strategy == "mps"
                else "time-slicing with failRequestsGreaterThanOne refuses"
            )
            yield Problem(
                amount_path,
                f"pool {pool.name!r} shares its GPUs and its device plugin ({why} a request for more than "
                f"{limit} {resource} per container), so these TaskManagers would fail admission; request "
                f"{limit}", FLINK_SHARED_REQUEST_TOO_BIG,
            )


def _check_queues(spec: Spec) -> Iterator[Problem]:
    if not spec.has_platform("kubernetes"):
        return
    advertised = _advertised_on_kubernetes(spec)
    shown = ", ".join(advertised) or "none"
    for q in spec.queues:
        for field, values in (
            ("capability", q.capability),
            ("deserved", q.deserved),
            ("guarantee", q.guarantee),
        ):
            for name in values.names():
                if is_gpu_resource(name) and name not in advertised and quota_class(name) is None:
                    yield Problem(
                        (*q.path, field, name),
                        f"{name} is not advertised by any Kubernetes node pool's device plugin, so this queue "
                        f"limit means nothing (advertised: {shown}){_hint(name, list(spec.node_pools))}", QUEUE_RESOURCE_NOT_ADVERTISED,
                    )


def check(spec: Spec) -> Iterator[Problem]:
    """Every device-plugin, GPU resource-name and pool-selection problem."""
    for pool in spec.node_pools:
        yield from _check_pool_gpu(spec, pool)
    yield from _check_enabled(spec)
    yield from _check_placements(spec)
    yield from _check_gfd_labels(spec)
    for cluster in spec.flink_clusters:
        yield from _check_flink_cluster(spec, cluster)
    yield from _check_queues(spec)
