"""GPU device-plugin DaemonSets derived from the Kubernetes node pools .

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

AMD (upstream ``k8s-ds-amdgpu-dp.yaml``, ROCm k8s-device-plugin v1.31.0.10): one DaemonSet for all
AMD pools (the plugin has no per-node config), with a pinned tag, the ``amd.com/gpu`` and pool
tolerations, and the optional node labeller with upstream's least-privilege RBAC.
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import Bundle, K8sObject, k8s_object
from accelplane.builders.hardening import (
    NO_NETWORK,
    NO_PROBES,
    PULL_POLICY,
    ROOT_FOR_KUBELET_SOCKET,
    RUNTIME_DEFAULT_SECCOMP,
    SMALL_DAEMON,
    UNVERIFIED_READ_ONLY_ROOT,
    checkov_skips,
    digest_reason,
    resources,
)
from accelplane.derive.device_plugin_placement import (
    AMD_LABELLER_NAME,
    AMD_PLUGIN_NAME,
    Placement,
    gfd_name,
    kubernetes_gpu_pools,
    mps_daemon_name,
    nvidia_plugin_name,
    placements,
    plugin_enabled,
)
from accelplane.derive.gpu_resources import unshared_resources
from accelplane.derive.node_selection import pool_node_affinity
from accelplane.digests import short_sha256
from accelplane.model import NodePool, Spec
from accelplane.names import is_label_value
from accelplane.yaml_io import dump_yaml

FAMILY = "device-plugins"
SYSTEM_NODE_CRITICAL = "system-node-critical"
KUBELET_DEVICE_PLUGINS_DIR = "/var/lib/kubelet/device-plugins"
CONFIG_KEY = "config.yaml"
CONFIG_DIR = "/config"
CONFIG_FILE = f"{CONFIG_DIR}/{CONFIG_KEY}"
MPS_ROOT = "/run/nvidia/mps"
CDI_ROOT = "/var/run/cdi"
GFD_FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"
POOL_LABEL = "accelplane.io/node-pool"
AMD_LABELLER_ARGS = ("-vram", "-cu-count", "-simd-count", "-device-id", "-family", "-product-name")

DROP_ALL_NO_ESCALATION: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}

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


def _image(repo: str, tag: str, digest: str | None = None) -> str:
    return f"{repo}:{tag}@{digest}" if digest else f"{repo}:{tag}"


def _common_skips(digest: str | None, digest_field: str) -> dict[str, str]:
    """Findings every device-plugin DaemonSet shares, with the reason (see builders.hardening)."""
    out = {
        "CKV_K8S_8": NO_PROBES,
        "CKV_K8S_9": NO_PROBES,
        "CKV_K8S_15": PULL_POLICY,
        "CKV2_K8S_6": NO_NETWORK,
    }
    if digest is None:
        out["CKV_K8S_43"] = digest_reason(digest_field)
    return out


def _selector(name: str, pool: NodePool | None) -> dict[str, str]:
    sel = {"app.kubernetes.io/name": name}
    if pool is not None:
        sel[POOL_LABEL] = pool.name
    return sel


def _daemonset(
    spec: Spec,
    placement: Placement,
    selector: dict[str, str],
    pod_spec: dict[str, Any],
    skips: dict[str, str],
    extra_labels: dict[str, str] | None = None,
) -> K8sObject:
    """A DaemonSet whose pod runs with the RuntimeDefault seccomp profile; ``skips`` (check id →
    reason) explain the privileges it keeps to checkov."""
    labels = {**spec.common_labels(), **(extra_labels or {}), **selector}
    pod: dict[str, Any] = dict(pod_spec)
    pod["securityContext"] = {**RUNTIME_DEFAULT_SECCOMP, **pod.get("securityContext", {})}
    if placement.node_selector:
        pod["nodeSelector"] = dict(placement.node_selector)
    pod["affinity"] = pool_node_affinity(placement.pools)
    pod["tolerations"] = [dict(t) for t in placement.tolerations]
    body = {
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": pod},
        }
    }
    return k8s_object(
        "apps/v1",
        "DaemonSet",
        placement.name,
        family=FAMILY,
        namespace=spec.device_plugins.namespace,
        labels=labels,
        annotations=checkov_skips(skips),
        body=body,
    )


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


def _nvidia_objects(spec: Spec, pool: NodePool, by_name: dict[str, Placement]) -> list[K8sObject]:
    assert pool.gpu is not None
    nv = spec.device_plugins.nvidia
    image = _image(nv.image, nv.version, nv.image_digest)
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
            labels={**spec.common_labels(), **_selector("nvidia-device-plugin", pool)},
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
        **_common_skips(nv.image_digest, "devicePlugins.nvidia.imageDigest"),
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
        _daemonset(spec, by_name[nvidia_plugin_name(pool)], _selector("nvidia-device-plugin", pool), pod, skips)
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
        **_common_skips(spec.device_plugins.nvidia.image_digest, "devicePlugins.nvidia.imageDigest"),
        **dict.fromkeys(("CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_40"), privileged),
        **dict.fromkeys(("CKV_K8S_28", "CKV_K8S_37"), privileged),
    }
    extra = {"app.kubernetes.io/part-of": "nvidia-gpu"}
    version = spec.device_plugins.nvidia.version.removeprefix("v")
    if is_label_value(version):
        extra["app.kubernetes.io/version"] = version
    return _daemonset(spec, placement, _selector("gpu-feature-discovery", pool), pod, skips, extra)


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
        **_common_skips(spec.device_plugins.nvidia.image_digest, "devicePlugins.nvidia.imageDigest"),
        **dict.fromkeys(
            ("CKV_K8S_16", "CKV_K8S_17", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_28"), privileged
        ),
        **dict.fromkeys(("CKV_K8S_37", "CKV_K8S_40"), privileged),
    }
    return _daemonset(spec, placement, _selector("nvidia-mps-control-daemon", pool), pod, skips)


def _amd_objects(spec: Spec, by_name: dict[str, Placement]) -> list[K8sObject]:
    amd = spec.device_plugins.amd
    objects: list[K8sObject] = []
    plugin = {
        "name": "amdgpu-dp-cntr",
        "image": _image(amd.image, amd.version, amd.image_digest),
        # upstream k8s-ds-amdgpu-dp-health.yaml's command: glog logs to stderr instead of /tmp, so the
        # root file system can be read-only
        "command": ["./k8s-device-plugin"],
        "args": ["-logtostderr=true"],
        "resources": SMALL_DAEMON,
        # upstream Helm chart's securityContext: the plugin only reads /sys and hands device paths
        # to the kubelet, it needs no privilege (the static manifest's privileged: true is dropped);
        # it writes only its socket into the kubelet's directory, so /sys and its root are read-only
        "securityContext": {**DROP_ALL_NO_ESCALATION, "readOnlyRootFilesystem": True},
        "volumeMounts": [
            {"name": "dp", "mountPath": KUBELET_DEVICE_PLUGINS_DIR},
            {"name": "sys", "mountPath": "/sys", "readOnly": True},
        ],
    }
    skips = {
        **_common_skips(amd.image_digest, "devicePlugins.amd.imageDigest"),
        "CKV_K8S_23": ROOT_FOR_KUBELET_SOCKET,
        "CKV_K8S_40": ROOT_FOR_KUBELET_SOCKET,
    }
    pod = {
        "restartPolicy": "Always",
        "priorityClassName": SYSTEM_NODE_CRITICAL,
        "automountServiceAccountToken": False,
        "containers": [plugin],
        "volumes": [
            {"name": "dp", "hostPath": {"path": KUBELET_DEVICE_PLUGINS_DIR}},
            {"name": "sys", "hostPath": {"path": "/sys"}},
        ],
    }
    objects.append(_daemonset(spec, by_name[AMD_PLUGIN_NAME], _selector(AMD_PLUGIN_NAME, None), pod, skips))
    if amd.labeller:
        objects += _amd_labeller(spec, by_name[AMD_LABELLER_NAME])
    return objects


def _amd_labeller(spec: Spec, placement: Placement) -> list[K8sObject]:
    """Node labeller (upstream ``k8s-ds-amdgpu-labeller.yaml``) and its RBAC: a ClusterRole with
    exactly upstream's rule (nodes: watch, get, list, update) bound to its own ServiceAccount."""
    amd = spec.device_plugins.amd
    ns = spec.device_plugins.namespace
    labels = spec.common_labels()
    sa = k8s_object("v1", "ServiceAccount", AMD_LABELLER_NAME, family=FAMILY, namespace=ns, labels=labels)
    role = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        AMD_LABELLER_NAME,
        family=FAMILY,
        labels=labels,
        body={
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["watch", "get", "list", "update"]}
            ]
        },
    )
    binding = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        AMD_LABELLER_NAME,
        family=FAMILY,
        labels=labels,
        body={
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": AMD_LABELLER_NAME,
            },
            "subjects": [{"kind": "ServiceAccount", "name": AMD_LABELLER_NAME, "namespace": ns}],
        },
    )
    container = {
        "name": "amdgpu-lr-cntr",
        "image": _image(amd.image, f"labeller-{amd.version}", amd.labeller_image_digest),
        "workingDir": "/root",
        "command": ["./k8s-node-labeller"],
        "args": list(AMD_LABELLER_ARGS),
        "env": [{"name": "DS_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "resources": SMALL_DAEMON,
        # upstream: privileged is needed for /dev
        "securityContext": {"privileged": True, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [
            {"name": "sys", "mountPath": "/sys", "readOnly": True},
            {"name": "dev", "mountPath": "/dev"},
        ],
    }
    pod = {
        "serviceAccountName": AMD_LABELLER_NAME,
        "priorityClassName": SYSTEM_NODE_CRITICAL,
        "containers": [container],
        "volumes": [
            {"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}},
            {"name": "dev", "hostPath": {"path": "/dev", "type": "Directory"}},
        ],
    }
    privileged = "upstream runs the AMD node labeller privileged: it reads GPU properties through the host's /dev"
    skips = {
        **_common_skips(amd.labeller_image_digest, "devicePlugins.amd.labellerImageDigest"),
        **dict.fromkeys(("CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_40"), privileged),
        "CKV_K8S_38": "the labeller labels its node through the API (upstream RBAC: nodes get/list/watch/update)",
    }
    ds = _daemonset(spec, placement, _selector(AMD_LABELLER_NAME, None), pod, skips)
    return [sa, role, binding, ds]


def build(spec: Spec) -> Bundle:
    """Device-plugin objects for every Kubernetes GPU pool (nothing on clusters without Kubernetes)."""
    bundle = Bundle()
    by_name = {p.name: p for p in placements(spec)}
    if plugin_enabled(spec, "nvidia"):
        for pool in kubernetes_gpu_pools(spec, "nvidia"):
            bundle.objects.extend(_nvidia_objects(spec, pool, by_name))
    if AMD_PLUGIN_NAME in by_name:
        bundle.objects.extend(_amd_objects(spec, by_name))
    return bundle
