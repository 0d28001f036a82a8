"""NVIDIA device-plugin objects for one Kubernetes GPU pool.

NVIDIA (upstream ``deployments/static/nvidia-device-plugin.yml``, k8s-device-plugin v0.20.0):
* one device-plugin DaemonSet **per NVIDIA pool**, ``nvidia-device-plugin-<pool>``, because the
  plugin config (MIG strategy, time-slicing/MPS, replicas) is per node and pools differ. A pool's
  DaemonSet admits exactly the nodes carrying ALL of the pool's labels (node affinity, never NFD
  labels) and tolerates the pool's taints on top of upstream's ``nvidia.com/gpu`` toleration.
  Per-pool DaemonSets replace upstream's map of named configs selected by the node label
  ``nvidia.com/device-plugin.config`` (and its config-manager sidecar): nothing has to label nodes
  and a pool's config can never be applied to another pool's nodes.
* when the pool needs a config (MIG strategy other than ``none``, sharing, or a non-default
  ``deviceListStrategy``) an immutable ConfigMap ``nvidia-device-plugin-<pool>-<hash>`` holding the
  ``api/config/v1`` file, mounted read-only and named by ``CONFIG_FILE``. The content hash in the
  name rolls the DaemonSet when the config changes (the static plugin reads it only at start).
* ``gpu-feature-discovery-<pool>`` (upstream ``gpu-feature-discovery-daemonset*.yaml``) with the
  pool's ``MIG_STRATEGY`` and config, so ``nvidia.com/gpu.product`` exists for model affinity.
* for MPS pools, the MPS control daemon ``nvidia-mps-control-daemon-<pool>`` (upstream Helm chart
  ``daemonset-mps-control-daemon.yml``), without which an MPS plugin never serves a GPU.
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import K8sObject, k8s_object
from accelplane.builders.device_plugin_daemonset import (
    FAMILY,
    KUBELET_DEVICE_PLUGINS_DIR,
    SYSTEM_NODE_CRITICAL,
    common_skips,
    daemonset,
    image_ref,
    selector,
)
from accelplane.builders.hardening import (
    ROOT_FOR_KUBELET_SOCKET,
    SMALL_DAEMON,
    UNVERIFIED_READ_ONLY_ROOT,
    resources,
)
from accelplane.derive.device_plugin_placement import (
    Placement,
    gfd_name,
    mps_daemon_name,
    nvidia_plugin_name,
)
from accelplane.derive.gpu_resources import unshared_resources
from accelplane.digests import short_sha256
from accelplane.model import NodePool, Spec
from accelplane.names import is_label_value
from accelplane.yaml_io import dump_yaml

CONFIG_KEY = "config.yaml"
CONFIG_DIR = "/config"
CONFIG_FILE = f"{CONFIG_DIR}/{CONFIG_KEY}"
MPS_ROOT = "/run/nvidia/mps"
CDI_ROOT = "/var/run/cdi"
GFD_FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"

# --- NVIDIA plugin config (api/config/v1) -------------------------------------------------------


def nvidia_plugin_config(spec: Spec, pool: NodePool) -> dict[str, Any] | None:
    """The k8s-device-plugin ``api/config/v1`` document for a pool, or None when upstream's
    defaults apply (no MIG, no sharing, ``envvar`` device lists).

    ``flags.migStrategy`` is always set when a config exists (GFD and the plugin read it);
    ``sharing`` holds exactly one of ``timeSlicing`` / ``mps`` replicating every resource the pool
    advertises before sharing, with ``renameByDefault`` inside that block.
    """
    gpu = pool.gpu
    if gpu is None or gpu.vendor != "nvidia":
        return None
    strategy = spec.device_plugins.nvidia.device_list_strategy
    if gpu.mig.strategy == "none" and gpu.sharing.strategy == "none" and strategy == "envvar":
        return None
    flags: dict[str, Any] = {"migStrategy": gpu.mig.strategy}
    if strategy != "envvar":
        flags["plugin"] = {"deviceListStrategy": strategy}
    config: dict[str, Any] = {"version": "v1", "flags": flags}
    sharing = gpu.sharing
    if sharing.strategy != "none":
        resources = [{"name": name, "replicas": sharing.replicas} for name in unshared_resources(pool)]
        if sharing.strategy == "timeSlicing":
            block: dict[str, Any] = {
                "renameByDefault": bool(sharing.rename_by_default),
                "failRequestsGreaterThanOne": sharing.fail_requests_greater_than_one,
                "resources": resources,
            }
        else:
            block = {"renameByDefault": bool(sharing.rename_by_default), "resources": resources}
        config["sharing"] = {sharing.strategy: block}
    return config


def config_text(config: dict[str, Any]) -> str:
    """The config file exactly as it is stored in the ConfigMap."""
    return dump_yaml(config)


def config_map_name(pool: NodePool, text: str) -> str:
    """Content-addressed name of a pool's plugin ConfigMap (a new config is a new, immutable object)."""
    return f"nvidia-device-plugin-{pool.name}-{short_sha256(text)}"


# --- manifests -------------------------------------------------------------------------------


def nvidia_security_context(pool: NodePool) -> dict[str, Any]:
    """Plugin container securityContext: upstream's (no escalation, every capability dropped);
    with MIG the plugin must read ``/proc/driver/nvidia/capabilities/mig/monitor`` and upstream's
    Helm chart grants ``SYS_ADMIN`` — we add only that capability back (escalation cannot be
    forbidden together with SYS_ADMIN: the API server rejects the combination)."""
    if pool.gpu is not None and pool.gpu.mig.strategy != "none":
        return {"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def _config_volume(name: str) -> dict[str, Any]:
    return {"name": "config", "configMap": {"name": name}}


_CONFIG_MOUNT = {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}


def nvidia_objects(spec: Spec, pool: NodePool, by_name: dict[str, Placement]) -> list[K8sObject]:
    """A pool's plugin DaemonSet, its config ConfigMap when it needs one, GPU feature discovery and,
    for MPS pools, the MPS control daemon (``by_name``: the placements, by DaemonSet name)."""
    assert pool.gpu is not None
    nv = spec.device_plugins.nvidia
    image = image_ref(nv.image, nv.version, nv.image_digest)
    mig = pool.gpu.mig.strategy != "none"
    mps = pool.gpu.sharing.strategy == "mps"
    cdi = nv.device_list_strategy.startswith("cdi-")
    objects: list[K8sObject] = []
    config = nvidia_plugin_config(spec, pool)
    cm_name = None
    if config is not None:
        text = config_text(config)
        cm_name = config_map_name(pool, text)
        cm = k8s_object(
            "v1",
            "ConfigMap",
            cm_name,
            family=FAMILY,
            namespace=spec.device_plugins.namespace,
            labels={**spec.common_labels(), **selector("nvidia-device-plugin", pool)},
            body={"immutable": True, "data": {CONFIG_KEY: text}},
        )
        objects.append(cm)

    # device plugin
    env: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = [
        {"name": "kubelet-device-plugins-dir", "mountPath": KUBELET_DEVICE_PLUGINS_DIR}
    ]
    volumes: list[dict[str, Any]] = [
        {
            "name": "kubelet-device-plugins-dir",
            "hostPath": {"path": KUBELET_DEVICE_PLUGINS_DIR, "type": "Directory"},
        }
    ]
    if cm_name is not None:
        env.append({"name": "CONFIG_FILE", "value": CONFIG_FILE})
        mounts.append(dict(_CONFIG_MOUNT))
        volumes.append(_config_volume(cm_name))
    if mig:
        env.append({"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"})
    if mps:
        env.append({"name": "MPS_ROOT", "value": MPS_ROOT})
        mounts += [{"name": "mps-shm", "mountPath": "/dev/shm"}, {"name": "mps-root", "mountPath": "/mps"}]
        volumes += [
            {"name": "mps-root", "hostPath": {"path": MPS_ROOT, "type": "DirectoryOrCreate"}},
            {"name": "mps-shm", "hostPath": {"path": f"{MPS_ROOT}/shm"}},
        ]
    if cdi:
        mounts.append({"name": "cdi-root", "mountPath": CDI_ROOT})
        volumes.append({"name": "cdi-root", "hostPath": {"path": CDI_ROOT, "type": "DirectoryOrCreate"}})
    container: dict[str, Any] = {"name": "nvidia-device-plugin-ctr", "image": image}
    if env:
        container["env"] = env
    container["resources"] = SMALL_DAEMON
    container["securityContext"] = nvidia_security_context(pool)
    container["volumeMounts"] = mounts
    skips = {
        **common_skips(nv.image_digest, "devicePlugins.nvidia.imageDigest"),
        "CKV_K8S_22": UNVERIFIED_READ_ONLY_ROOT,
        "CKV_K8S_23": ROOT_FOR_KUBELET_SOCKET,
        "CKV_K8S_40": ROOT_FOR_KUBELET_SOCKET,
    }
    if mig:
        why = (
            "MIG: reads /proc/driver/nvidia/capabilities/mig/monitor, which needs SYS_ADMIN (upstream Helm "
            "chart); the API server refuses allowPrivilegeEscalation: false together with SYS_ADMIN"
        )
        skips.update({"CKV_K8S_20": why, "CKV_K8S_25": why, "CKV_K8S_37": why, "CKV_K8S_39": why})
    pod = {
        "priorityClassName": SYSTEM_NODE_CRITICAL,
        "automountServiceAccountToken": False,
        "containers": [container],
        "volumes": volumes,
    }
    objects.append(
        daemonset(spec, by_name[nvidia_plugin_name(pool)], selector("nvidia-device-plugin", pool), pod, skips)
    )

    # GPU Feature Discovery
    if nv.gpu_feature_discovery:
        objects.append(_gfd(spec, pool, by_name[gfd_name(pool)], image, cm_name))

    # MPS control daemon
    if mps:
        assert cm_name is not None
        objects.append(_mps_daemon(spec, pool, by_name[mps_daemon_name(pool)], image, cm_name))
    return objects


def _gfd(spec: Spec, pool: NodePool, placement: Placement, image: str, cm_name: str | None) -> K8sObject:
    assert pool.gpu is not None
    strategy = pool.gpu.mig.strategy
    env: list[dict[str, Any]] = []
    if strategy != "none":
        env.append({"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"})
    env.append({"name": "MIG_STRATEGY", "value": strategy})
    mounts: list[dict[str, Any]] = [
        {"name": "output-dir", "mountPath": GFD_FEATURES_DIR},
        {"name": "host-sys", "mountPath": "/sys"},
    ]
    volumes: list[dict[str, Any]] = [
        {"name": "output-dir", "hostPath": {"path": GFD_FEATURES_DIR, "type": "DirectoryOrCreate"}},
        {"name": "host-sys", "hostPath": {"path": "/sys", "type": "Directory"}},
    ]
    if cm_name is not None:
        env.append({"name": "CONFIG_FILE", "value": CONFIG_FILE})
        mounts.append(dict(_CONFIG_MOUNT))
        volumes.append(_config_volume(cm_name))
    container = {
        "name": "gpu-feature-discovery",
        "image": image,
        "command": ["/usr/bin/gpu-feature-discovery"],
        "env": env,
        "resources": SMALL_DAEMON,
        # upstream: privileged access is required to read vGPU information on the host
        "securityContext": {"privileged": True},
        "volumeMounts": mounts,
    }
    pod = {"automountServiceAccountToken": False, "containers": [container], "volumes": volumes}
    privileged = "upstream runs GPU Feature Discovery privileged: it reads vGPU and MIG information from the host"
    skips = {
        **common_skips(spec.device_plugins.nvidia.image_digest, "devicePlugins.nvidia.imageDigest"),
        **dict.fromkeys(("CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_40"), privileged),
        **dict.fromkeys(("CKV_K8S_28", "CKV_K8S_37"), privileged),
    }
    extra = {"app.kubernetes.io/part-of": "nvidia-gpu"}
    version = spec.device_plugins.nvidia.version.removeprefix("v")
    if is_label_value(version):
        extra["app.kubernetes.io/version"] = version
    return daemonset(spec, placement, selector("gpu-feature-discovery", pool), pod, skips, extra)


def _mps_daemon(spec: Spec, pool: NodePool, placement: Placement, image: str, cm_name: str) -> K8sObject:
    """Upstream Helm ``daemonset-mps-control-daemon.yml`` with a static config instead of the
    config-manager sidecar. Privileged as upstream: it mounts a shared /dev/shm for the MPS server
    with bidirectional propagation and runs ``nvidia-cuda-mps-control`` on the host's GPUs;
    ``hostPID`` as upstream's default (``mps.enableHostPID: true``) so the MPS server finds its PID."""
    init = {
        "name": "mps-control-daemon-mounts",
        "image": image,
        "command": ["mps-control-daemon", "mount-shm"],
        "resources": SMALL_DAEMON,
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": "mps-root", "mountPath": "/mps", "mountPropagation": "Bidirectional"}],
    }
    container = {
        "name": "mps-control-daemon-ctr",
        "image": image,
        "command": ["mps-control-daemon"],
        "env": [
            {
                "name": "NODE_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
            },
            {"name": "CONFIG_FILE", "value": CONFIG_FILE},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        ],
        "resources": resources("100m", "128Mi", "1", "1Gi"),
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "mps-shm", "mountPath": "/dev/shm"},
            {"name": "mps-root", "mountPath": "/mps"},
            dict(_CONFIG_MOUNT),
        ],
    }
    pod = {
        "priorityClassName": SYSTEM_NODE_CRITICAL,
        "automountServiceAccountToken": False,
        "hostPID": True,
        "initContainers": [init],
        "containers": [container],
        "volumes": [
            {"name": "mps-root", "hostPath": {"path": MPS_ROOT, "type": "DirectoryOrCreate"}},
            {"name": "mps-shm", "hostPath": {"path": f"{MPS_ROOT}/shm"}},
            _config_volume(cm_name),
        ],
    }
    privileged = (
        "upstream runs the MPS control daemon privileged with hostPID: it mounts a shared /dev/shm with "
        "bidirectional propagation and starts the MPS server on the host's GPUs"
    )
    skips = {
        **common_skips(spec.device_plugins.nvidia.image_digest, "devicePlugins.nvidia.imageDigest"),
        **dict.fromkeys(
            ("CKV_K8S_16", "CKV_K8S_17", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_28"), privileged
        ),
        **dict.fromkeys(("CKV_K8S_37", "CKV_K8S_40"), privileged),
    }
    return daemonset(spec, placement, selector("nvidia-mps-control-daemon", pool), pod, skips)
