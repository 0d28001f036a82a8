"""AMD device-plugin objects.

AMD (upstream ``k8s-ds-amdgpu-dp.yaml``, ROCm k8s-device-plugin v1.31.0.10): one DaemonSet for all
AMD pools (the plugin has no per-node config), with a pinned tag, the ``amd.com/gpu`` and pool
tolerations, and the optional node labeller with upstream's least-privilege RBAC.
"""

from __future__ import annotations

from accelplane.artifacts import K8sObject, k8s_object
from accelplane.builders.device_plugin_daemonset import (
    DROP_ALL_NO_ESCALATION,
    FAMILY,
    KUBELET_DEVICE_PLUGINS_DIR,
    SYSTEM_NODE_CRITICAL,
    common_skips,
    daemonset,
    image_ref,
    selector,
)
from accelplane.builders.hardening import ROOT_FOR_KUBELET_SOCKET, SMALL_DAEMON
from accelplane.derive.device_plugin_placement import AMD_LABELLER_NAME, AMD_PLUGIN_NAME, Placement
from accelplane.model import Spec

AMD_LABELLER_ARGS = ("-vram", "-cu-count", "-simd-count", "-device-id", "-family", "-product-name")


def amd_objects(spec: Spec, by_name: dict[str, Placement]) -> list[K8sObject]:
    """The one AMD plugin DaemonSet for all AMD pools and, when enabled, the node labeller with its
    RBAC (``by_name``: the placements, by DaemonSet name)."""
    amd = spec.device_plugins.amd
    objects: list[K8sObject] = []
    plugin = {
        "name": "amdgpu-dp-cntr",
        "image": image_ref(amd.image, amd.version, amd.image_digest),
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
        **common_skips(amd.image_digest, "devicePlugins.amd.imageDigest"),
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
    objects.append(daemonset(spec, by_name[AMD_PLUGIN_NAME], selector(AMD_PLUGIN_NAME, None), pod, skips))
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
        "image": image_ref(amd.image, f"labeller-{amd.version}", amd.labeller_image_digest),
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
        **common_skips(amd.labeller_image_digest, "devicePlugins.amd.labellerImageDigest"),
        **dict.fromkeys(("CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_40"), privileged),
        "CKV_K8S_38": "the labeller labels its node through the API (upstream RBAC: nodes get/list/watch/update)",
    }
    ds = daemonset(spec, placement, selector(AMD_LABELLER_NAME, None), pod, skips)
    return [sa, role, binding, ds]
