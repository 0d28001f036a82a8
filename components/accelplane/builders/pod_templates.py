"""JobManager and TaskManager pod templates of each Flink cluster on Kubernetes on Kubernetes.

Released Flink has no scheduler-name option and the Flink Kubernetes Operator no Volcano support,
so gang scheduling is wired through pod templates: ``schedulerName``, the PodGroup
annotation ``scheduling.k8s.io/group-name`` (Volcano) or YuniKorn's application id and queue labels
and task-group annotations (`accelplane.builders.task_groups`), and ``priorityClassName`` on both
roles. The
TaskManager template also places the pod on the GPU pool (node selector or affinity,
``nvidia.com/gpu.product`` for an explicit GPU model, the pool's taints tolerated), mounts the
accelplane discovery script from its ConfigMap with ``subPath`` (single files: the entry stub at
the script path, so Flink's ``plugins/external-resource-gpu`` directory and its GPU plugin jar stay
visible, and the module it runs), a pod-private bytecode cache for it (``emptyDir``) and, in
coordination mode, the node's coordination directory (hostPath) shared by all TaskManagers on the
node. Flink merges these templates with what it generates; the main container must be named
``flink-main-container``. Resources (including GPUs) are NOT set here: Flink sets them on the main
container from its configuration (``external-resource.gpu.kubernetes.config-key``) — except on a
DRA pool, where the template claims the GPUs: ``spec.resourceClaims`` names the cluster's
ResourceClaimTemplate and the main container's ``resources.claims`` uses it (Flink keeps both
when it builds the pod: tests/flink/test_dra_pod_factory.py).
"""

from __future__ import annotations

from typing import Any, Literal

from accelplane import discovery_install
from accelplane.builders.hardening import RUNTIME_DEFAULT_SECCOMP, checkov_skips
from accelplane.builders.task_groups import yunikorn_annotations, yunikorn_labels
from accelplane.derive.dra import CLAIM_NAME, claim_template_name, cluster_device_class, is_dra_pool
from accelplane.derive.flink_keys import devices_isolated_per_container
from accelplane.derive.flink_pods import GROUP_NAME_ANNOTATION, coordination_dir, podgroup_name
from accelplane.derive.gpu_resources import (
    candidate_pools,
    cluster_vendor,
    gfd_product_label_for_pool,
    kubernetes_gpu_resource,
)
from accelplane.derive.images import flink_image
from accelplane.derive.kueue import pod_metadata as kueue_pod_metadata
from accelplane.derive.node_fit import COORDINATION_INIT_REQUESTS, PREFLIGHT_INIT_REQUESTS
from accelplane.derive.node_selection import merged_tolerations, pool_labels, pool_node_affinity
from accelplane.derive.slot_groups import (
    GROUP_FILE,
    GROUP_FILE_DIR,
    GROUP_FILE_VOLUME,
    group_configmap_name,
    ships_group_file,
)
from accelplane.derive.yunikorn import JOBMANAGER_TASK_GROUP, TASKMANAGER_TASK_GROUP
from accelplane.model import FlinkCluster, NodePool, Spec
from accelplane.names import GPU_PRODUCT_LABEL, gfd_product_label

Role = Literal["jobmanager", "taskmanager"]

MAIN_CONTAINER = "flink-main-container"
FLINK_CLUSTER_LABEL = "accelplane.io/flink-cluster"
COMPONENT_LABEL = "accelplane.io/component"
DISCOVERY_VOLUME = "accelplane-gpu-discovery"
MODULE_VOLUME = "accelplane-gpu-discovery-module"
BYTECODE_VOLUME = "accelplane-gpu-discovery-bytecode"
BYTECODE_SIZE_LIMIT = "8Mi"
"""The cache holds the module's ``.pyc`` (~100 KiB) and those of the few stdlib modules it imports."""
COORDINATION_VOLUME = "accelplane-gpu-coordination"
COORDINATION_INIT_CONTAINER = "accelplane-coordination-dir"
PREFLIGHT_INIT_CONTAINER = "accelplane-gpu-preflight"
SCRIPT_MODE = 0o555
MODULE_MODE = 0o444


def flink_cluster_labels(spec: Spec, cluster: FlinkCluster) -> dict[str, str]:
    """Labels of every object of one Flink cluster: the platform's common labels plus the cluster id."""
    return {**spec.common_labels(), FLINK_CLUSTER_LABEL: cluster.name}


def _labels(spec: Spec, cluster: FlinkCluster, role: Role) -> dict[str, str]:
    return {**flink_cluster_labels(spec, cluster), COMPONENT_LABEL: role}


def _product_expression(values: list[str]) -> dict[str, Any]:
    return {"key": GPU_PRODUCT_LABEL, "operator": "In", "values": values}


def _product_label(spec: Spec, cluster: FlinkCluster, pool: NodePool) -> str | None:
    """The ``nvidia.com/gpu.product`` value GFD writes on the pool's nodes when the cluster asks for
    an NVIDIA GPU model (None otherwise)."""
    gpu = cluster.task_manager.gpu
    if gpu is None or gpu.model is None or cluster_vendor(spec, cluster) != "nvidia" or is_dra_pool(pool):
        return None  # DRA pools run no GPU Feature Discovery; the claim's DeviceClass selects the model
    return gfd_product_label_for_pool(pool) or gfd_product_label(gpu.model)


def placement(spec: Spec, cluster: FlinkCluster) -> dict[str, Any]:
    """``nodeSelector``/``affinity``/``tolerations`` for the cluster's GPU TaskManagers.

    One candidate pool with labels → its labels as nodeSelector; several → one required node
    affinity term per pool (OR, `accelplane.derive.node_selection.pool_node_affinity`). When any candidate
    pool has no labels, pool selection is left to the GPU resource request. An explicit NVIDIA GPU
    model adds ``nvidia.com/gpu.product`` (the value GPU Feature Discovery writes on that pool's
    nodes) to every term. Tolerations: every taint of every candidate pool.
    """
    if not cluster.uses_gpus:
        return {}
    pools = sorted(candidate_pools(spec, cluster), key=lambda p: p.name)
    out: dict[str, Any] = {}
    products = [_product_label(spec, cluster, p) for p in pools]
    labelled = bool(pools) and all(p.labels for p in pools)
    terms: list[list[dict[str, Any]]] = []
    if labelled and len(pools) > 1:
        affinity = pool_node_affinity(pools)
        selector_terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
        for term, product in zip(selector_terms, products, strict=True):
            terms.append([*term["matchExpressions"], *([_product_expression([product])] if product else [])])
    else:
        if labelled:
            out["nodeSelector"] = pool_labels(pools[0])
        values = sorted({v for v in products if v})
        if values:
            terms.append([_product_expression(values)])
    if terms:
        out["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
                }
            }
        }
    tolerations = merged_tolerations([], pools)
    if tolerations:
        out["tolerations"] = tolerations
    return out


def _discovery_mounts(spec: Spec, *, writes_bytecode: bool) -> list[dict[str, Any]]:
    """The discovery mounts shared by the main container and the GPU preflight init container: the
    ConfigMap's entry stub at the script path and its module at the module path (single files),
    and the pod's bytecode cache, writable only where ``writes_bytecode`` (the preflight, which
    runs first; see `accelplane.discovery_install.pod_entry_stub`)."""
    return [
        {
            "name": DISCOVERY_VOLUME,
            "mountPath": spec.discovery.script_path,
            "subPath": discovery_install.CONFIGMAP_KEY,
            "readOnly": True,
        },
        {
            "name": MODULE_VOLUME,
            "mountPath": discovery_install.MODULE_PATH,
            "subPath": discovery_install.MODULE_KEY,
            "readOnly": True,
        },
        {"name": BYTECODE_VOLUME, "mountPath": discovery_install.POD_BYTECODE_DIR}
        | ({} if writes_bytecode else {"readOnly": True}),
    ]


def _gpu_container_and_volumes(
    spec: Spec, cluster: FlinkCluster
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Main-container additions, volumes and init containers a GPU TaskManager needs."""
    mounts = _discovery_mounts(spec, writes_bytecode=False)
    stub, module = discovery_install.CONFIGMAP_KEY, discovery_install.MODULE_KEY
    configmap = discovery_install.configmap_name()
    volumes: list[dict[str, Any]] = [
        # One volume per key of the same ConfigMap: a mount names its volume, one file each.
        {
            "name": DISCOVERY_VOLUME,
            "configMap": {"name": configmap, "defaultMode": SCRIPT_MODE, "items": [{"key": stub, "path": stub}]},
        },
        {
            "name": MODULE_VOLUME,
            "configMap": {"name": configmap, "defaultMode": MODULE_MODE, "items": [{"key": module, "path": module}]},
        },
        # Memory-backed: the first call's bytecode, read by every later call of the pod.
        {"name": BYTECODE_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": BYTECODE_SIZE_LIMIT}},
    ]
    init: list[dict[str, Any]] = []
    if cluster.coordination:
        directory = coordination_dir(cluster)
        mounts.append({"name": COORDINATION_VOLUME, "mountPath": directory})
        # The node directory shared by the TaskManagers of a node (one accelplane owns, see
        # accelplane.derive.discovery_paths). kubelet creates it root-owned; the init container
        # hands that fresh directory to the Flink uid (mode 2770) so discovery, which runs as that
        # uid and refuses foreign-owned files, can create and lock the coordination file.
        volumes.append(
            {"name": COORDINATION_VOLUME, "hostPath": {"path": directory, "type": "DirectoryOrCreate"}}
        )
        init.append(coordination_dir_init_container(cluster, directory))
    init.append(gpu_preflight_init_container(spec, cluster))
    container: dict[str, Any] = {"volumeMounts": mounts}
    if cluster_vendor(spec, cluster) == "nvidia":
        # nvidia-smi/NVML indexes equal CUDA ordinals only in PCI bus order (CUDA_DEVICE_ORDER defaults to FASTEST_FIRST; docs/discovery.md).
        container["env"] = [{"name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID"}]
    return container, volumes, init


COORDINATION_DIR_SCRIPT = """\
set -eu
d=$1 want={uid}:{uid}:{mode}
if [ -L "$d" ] || [ ! -d "$d" ]; then
  echo "accelplane: $d is not a directory" >&2; exit 1
fi
state=$(stat -c %u:%g:%a -- "$d")
case $state in
  "$want") exit 0 ;;
  0:0:*)
    if [ -z "$(ls -A -- "$d")" ]; then
      chmod {mode} -- "$d"
      chown {uid}:{uid} -- "$d"
      exit 0
    fi ;;
esac
echo "accelplane: $d (owner:group:mode $state) was not created for accelplane;" \\
  "refusing to change its owner or mode (expected $want, or an empty root-owned directory)" >&2
exit 1
"""
"""Shell program of the init container (the directory arrives as ``$1``, never inside the program).

It takes over only the directory kubelet has just created for the pod's ``DirectoryOrCreate``
hostPath: root-owned and empty. A directory already prepared (Flink uid, mode 2770) is left as is;
anything else is refused, never chowned or chmodded. ``chmod`` runs while root still owns the
directory and ``chown`` keeps a directory's setgid bit, so ``CHOWN`` is the only capability needed.
"""


def coordination_dir_init_container(cluster: FlinkCluster, directory: str) -> dict[str, Any]:
    """Init container that prepares the node's coordination directory for the Flink uid.

    Least privilege: the spec's path reaches the fixed program `COORDINATION_DIR_SCRIPT` as one
    argv element (never part of the program), root only with the ``CHOWN`` capability, no privilege
    escalation, read-only root filesystem, RuntimeDefault seccomp profile, small CPU/memory limits.
    Idempotent, and it never re-owns a directory it did not create (see the script).
    """
    uid = str(discovery_install.FLINK_UID)
    script = COORDINATION_DIR_SCRIPT.format(uid=uid, mode=discovery_install.COORDINATION_DIR_MODE)
    return {
        "name": COORDINATION_INIT_CONTAINER,
        "image": flink_image(cluster),
        "command": ["sh", "-c", script, COORDINATION_INIT_CONTAINER, directory],
        "volumeMounts": [{"name": COORDINATION_VOLUME, "mountPath": directory}],
        "securityContext": {
            "runAsUser": 0,
            "runAsGroup": 0,
            "runAsNonRoot": False,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"], "add": ["CHOWN"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "resources": {
            "requests": dict(COORDINATION_INIT_REQUESTS),
            "limits": {"cpu": "100m", "memory": "32Mi"},
        },
    }


GPU_PREFLIGHT_SCRIPT = """\
set -eu
script=$1
shift
plugin_dir="${FLINK_PLUGINS_DIR:-${FLINK_HOME:-/opt/flink}/plugins}/external-resource-gpu"
refuse() {
  echo "accelplane: refusing to start this GPU TaskManager: $*" >&2
  exit 1
}
found=
for jar in "$plugin_dir"/flink-external-resource-gpu-*.jar; do
  if [ -f "$jar" ]; then found=1; fi
done
[ -n "$found" ] || refuse "Flink's GPU plugin (flink-external-resource-gpu-*.jar) is not in $plugin_dir of the image"
[ -x "$script" ] || refuse "the GPU discovery script $script is missing or not executable"
gpus=$("$script" "$@") || refuse "GPU discovery ($script $*) failed; its messages are above"
echo "accelplane: GPU preflight passed: discovery found GPU(s) $gpus for this TaskManager"
"""
"""Shell program of the GPU preflight init container (discovery script path and arguments arrive as
``$1…``, never inside the program).

Why: a TaskManager whose GPU plugin jar is missing, whose discovery script is missing, or whose
script fails still registers its configured GPU amount with Flink (``ExternalResourceUtils`` and
``GPUDriver`` only log a warning; tests/gpu_slots/test_gpu_slots_flink.py starts each case with real
Flink), and GPU tasks then run without a device. This container runs the same script in inventory
mode (no coordination file is touched) on the same devices before Flink starts: the pod fails with
the reason in its log instead.
"""


def gpu_preflight_init_container(spec: Spec, cluster: FlinkCluster) -> dict[str, Any]:
    """Init container that refuses to let a GPU TaskManager start when its GPU plugin or discovery
    cannot work (see `GPU_PREFLIGHT_SCRIPT`).

    It asks for exactly the main container's GPUs: the device plugin's extended resource as a limit
    (kubelet's device manager hands the devices of an init container on to the pod's app containers,
    so the pod still needs only ``gpu.amount``; the pod's effective request is the larger of an init
    container's and the app containers' sum, the same GPUs), or on a DRA pool the same resource
    claim. It runs as the Flink uid with no capabilities, no privilege escalation, a read-only root
    filesystem and small CPU/memory limits, with the same image (so the same plugin directory and
    Python) and the discovery script mounted like the main container's.
    """
    args = [str(cluster.gpus_per_task_manager)]
    if devices_isolated_per_container(spec, cluster):
        args.append("--isolated-devices")
    resources: dict[str, Any] = {
        "requests": dict(PREFLIGHT_INIT_REQUESTS),
        "limits": {"cpu": "1", "memory": "256Mi"},
    }
    if cluster_device_class(spec, cluster) is not None:
        resources["claims"] = [{"name": CLAIM_NAME}]
    else:
        resource = kubernetes_gpu_resource(spec, cluster)
        assert resource is not None
        resources["limits"][resource] = str(cluster.gpus_per_task_manager)
    return {
        "name": PREFLIGHT_INIT_CONTAINER,
        "image": flink_image(cluster),
        "command": ["sh", "-c", GPU_PREFLIGHT_SCRIPT, PREFLIGHT_INIT_CONTAINER, spec.discovery.script_path, *args],
        # the only writer of the bytecode cache: it runs before the TaskManager, which reads it
        "volumeMounts": _discovery_mounts(spec, writes_bytecode=True),
        # the main container's (Flink uid, no capabilities, no escalation), read-only, RuntimeDefault
        "securityContext": {
            **MAIN_CONTAINER_SECURITY,
            "readOnlyRootFilesystem": True,
            **RUNTIME_DEFAULT_SECCOMP,
        },
        "resources": resources,
    }


MAIN_CONTAINER_SECURITY: dict[str, Any] = {
    "runAsUser": discovery_install.FLINK_UID,
    "runAsGroup": discovery_install.FLINK_UID,
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}
"""Flink's main container: the official images' flink user (the coordination directory is handed
to that uid), no capabilities, no escalation. Flink keeps a template's securityContext (it
overwrites only image, pull policy, command/args, ports and resources, and merges env and mounts)."""

_FLINK_SETS = "Flink sets it on the pods it creates from its configuration (this template is merged into them)"
POD_TEMPLATE_SKIPS: dict[str, str] = {
    "CKV_K8S_8": "Flink creates no probes; the JobManager detects lost TaskManagers by heartbeat and replaces them",
    "CKV_K8S_9": "Flink creates no probes; the JobManager detects lost TaskManagers by heartbeat and replaces them",
    "CKV_K8S_10": f"resources: {_FLINK_SETS} (memory and CPU settings of the cluster)",
    "CKV_K8S_11": f"resources: {_FLINK_SETS} (memory and CPU settings of the cluster)",
    "CKV_K8S_12": f"resources: {_FLINK_SETS} (memory and CPU settings of the cluster)",
    "CKV_K8S_13": f"resources: {_FLINK_SETS} (memory and CPU settings of the cluster)",
    "CKV_K8S_14": f"image: {_FLINK_SETS} (kubernetes.container.image.ref, the spec's pinned image)",
    "CKV_K8S_15": f"imagePullPolicy: {_FLINK_SETS} (kubernetes.container.image.pull-policy)",
    "CKV_K8S_21": "Flink creates the pods in its configured namespace; a template carries none",
    "CKV_K8S_22": "Flink writes logs, temporary files and state working directories inside the container",
    "CKV_K8S_38": "Flink's Kubernetes resource manager and HA services use the API with the pod's service account",
    "CKV_K8S_40": "uid 9999 is the flink user of the official Flink images and of the accelplane node image",
    "CKV_K8S_43": f"image: {_FLINK_SETS}; pin it by digest in the spec's image (name@sha256:...)",
    "CKV2_K8S_6": "network policies of the Flink namespace belong to its owner; accelplane renders none",
}
"""Findings of checkov on a pod template that Flink or the cluster owner decides, with the reason."""

COORDINATION_INIT_SKIPS: dict[str, str] = dict.fromkeys(
    ("CKV_K8S_23", "CKV_K8S_25", "CKV_K8S_37"),
    "init container accelplane-coordination-dir: root with only CHOWN, to hand the directory kubelet just "
    "created to the Flink uid (it refuses any other directory)",
)


def pod_template(spec: Spec, cluster: FlinkCluster, role: Role) -> dict[str, Any]:
    """The pod template of one role as a plain ``v1/Pod`` manifest.

    Built once per spec, cluster and role (`Spec.memo`): the Flink builder serialises it, the
    operator's FlinkDeployment embeds it and the Namespaces builder reads its pod security. The
    callers share the dict, so none may modify it."""
    return spec.memo.get_or_make(("pod_template", role), cluster, lambda: _pod_template(spec, cluster, role))


def _pod_template(spec: Spec, cluster: FlinkCluster, role: Role) -> dict[str, Any]:
    """`pod_template`, built."""
    pod_spec: dict[str, Any] = {"schedulerName": spec.pod_scheduler_name}
    if cluster.priority_class is not None:
        pod_spec["priorityClassName"] = cluster.priority_class
    pod_spec["securityContext"] = dict(RUNTIME_DEFAULT_SECCOMP)
    container: dict[str, Any] = {"name": MAIN_CONTAINER, "securityContext": dict(MAIN_CONTAINER_SECURITY)}
    skips = dict(POD_TEMPLATE_SKIPS)
    if role == "taskmanager" and cluster.uses_gpus:
        pod_spec.update(placement(spec, cluster))
        extra, volumes, init = _gpu_container_and_volumes(spec, cluster)
        container.update(extra)
        if cluster_device_class(spec, cluster) is not None:
            pod_spec["resourceClaims"] = [
                {"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template_name(cluster)}
            ]
            container["resources"] = {"claims": [{"name": CLAIM_NAME}]}
        pod_spec["volumes"] = volumes
        pod_spec["initContainers"] = init
        if cluster.coordination:
            skips.update(COORDINATION_INIT_SKIPS)
    if role == "jobmanager" and ships_group_file(cluster):
        pod_spec["volumes"] = [
            {
                "name": GROUP_FILE_VOLUME,
                "configMap": {"name": group_configmap_name(spec, cluster), "items": [{"key": GROUP_FILE, "path": GROUP_FILE}]},
            }
        ]
        container["volumeMounts"] = [{"name": GROUP_FILE_VOLUME, "mountPath": GROUP_FILE_DIR, "readOnly": True}]
    pod_spec["containers"] = [container]
    labels = _labels(spec, cluster, role)
    if spec.uses_yunikorn:
        labels.update(yunikorn_labels(spec, cluster))
        gang = _yunikorn_gang_annotations(spec, cluster, role)
    elif spec.uses_kueue:
        kueue_labels, gang = kueue_pod_metadata(cluster, role)
        labels.update(kueue_labels)
    else:
        gang = {GROUP_NAME_ANNOTATION: podgroup_name(cluster)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{cluster.name}-{role}-template",
            "labels": labels,
            "annotations": {**gang, **checkov_skips(skips)},
        },
        "spec": pod_spec,
    }


def _yunikorn_gang_annotations(spec: Spec, cluster: FlinkCluster, role: Role) -> dict[str, str]:
    """YuniKorn's gang annotations of one role's template (`accelplane.builders.task_groups`): the
    TaskManager group is placed like the TaskManager template and sized by its init containers too."""
    tm_placement: dict[str, Any] = {}
    tm_init: list[dict[str, Any]] = []
    if cluster.uses_gpus:
        tm_placement = placement(spec, cluster)
        tm_init = _gpu_container_and_volumes(spec, cluster)[2]
    group = JOBMANAGER_TASK_GROUP if role == "jobmanager" else TASKMANAGER_TASK_GROUP
    return yunikorn_annotations(spec, cluster, group, tm_placement, tm_init)
