"""What every GPU device-plugin DaemonSet shares, NVIDIA's and AMD's alike: the family tag, the
kubelet's device-plugin directory, the pool label, the image reference, the checkov findings they all
keep, and the DaemonSet itself (RuntimeDefault seccomp, the placement's node affinity and
tolerations). `accelplane.builders.nvidia_device_plugin` and `accelplane.builders.amd_device_plugin`
build on it; `accelplane.builders.device_plugins` composes them. The GPU metrics exporters'
DaemonSets (`accelplane.builders.monitoring`) are built by the same `daemonset`.
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import K8sObject, k8s_object
from accelplane.builders.hardening import (
    NO_NETWORK,
    NO_PROBES,
    PULL_POLICY,
    RUNTIME_DEFAULT_SECCOMP,
    checkov_skips,
    digest_reason,
)
from accelplane.derive.device_plugin_placement import Placement
from accelplane.derive.node_selection import pool_node_affinity
from accelplane.model import NodePool, Spec

FAMILY = "device-plugins"
SYSTEM_NODE_CRITICAL = "system-node-critical"
KUBELET_DEVICE_PLUGINS_DIR = "/var/lib/kubelet/device-plugins"
POOL_LABEL = "accelplane.io/node-pool"

DROP_ALL_NO_ESCALATION: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def image_ref(repo: str, tag: str, digest: str | None = None) -> str:
    """``repo:tag``, pinned with ``@digest`` when the spec gives one."""
    return f"{repo}:{tag}@{digest}" if digest else f"{repo}:{tag}"


def common_skips(digest: str | None, digest_field: str) -> dict[str, str]:
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


def selector(name: str, pool: NodePool | None) -> dict[str, str]:
    """The DaemonSet's match labels: its name, and its pool for a per-pool DaemonSet."""
    sel = {"app.kubernetes.io/name": name}
    if pool is not None:
        sel[POOL_LABEL] = pool.name
    return sel


def daemonset(
    spec: Spec,
    placement: Placement,
    selector: dict[str, str],
    pod_spec: dict[str, Any],
    skips: dict[str, str],
    extra_labels: dict[str, str] | None = None,
    family: str = FAMILY,
) -> K8sObject:
    """A DaemonSet on the placement's nodes whose pod runs with the RuntimeDefault seccomp profile;
    ``skips`` (check id → reason) explain the privileges it keeps to checkov. ``family``: the builder
    family it belongs to (the GPU metrics exporters' is ``monitoring``)."""
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
        family=family,
        namespace=spec.device_plugins.namespace,
        labels=labels,
        annotations=checkov_skips(skips),
        body=body,
    )
