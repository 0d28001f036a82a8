"""Every Kubernetes namespace a stack puts objects into, and whether accelplane creates it.

accelplane creates (as ``Namespace`` objects, first in dependency order) every namespace its
objects live in, except:

* the system namespaces (``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``),
  which always exist;
* the Volcano namespace (``volcano.namespace``), created by Volcano's installation, or on a
  YuniKorn cluster YuniKorn's (``yunikorn.namespace``), created by its Helm chart;
* the MIG manager's namespace (``devicePlugins.nvidia.migManager.namespace``), the GPU Operator's;
* namespaces the spec marks ``namespaces.<name>.managed: false`` (created and labelled elsewhere);
* the monitoring namespaces (``monitoring.namespace``, ``monitoring.grafana.namespace``) when
  nothing else of the stack lives there: the Prometheus operator's and Grafana's installation owns them.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelplane.derive.device_plugin_placement import plugin_enabled
from accelplane.derive.mig_parted import mig_pools
from accelplane.derive.monitoring import monitoring_enabled
from accelplane.model import Spec

SYSTEM_NAMESPACES = frozenset({"default", "kube-node-lease", "kube-public", "kube-system"})


@dataclass(frozen=True)
class NamespaceUse:
    """One namespace the stack's objects live in: what lives there and who creates it."""

    name: str
    users: tuple[str, ...]
    created_by: str | None
    """None when accelplane creates it, else who does (shown in docs and errors)."""

    @property
    def created(self) -> bool:
        """True when accelplane renders the Namespace."""
        return self.created_by is None


def namespace_uses(spec: Spec) -> list[NamespaceUse]:
    """Every namespace of the stack's Kubernetes objects, sorted by name (empty without Kubernetes)."""
    if not spec.has_platform("kubernetes"):
        return []
    users: dict[str, list[str]] = {}
    for cluster in spec.flink_clusters:
        if cluster.on_kubernetes:
            users.setdefault(cluster.namespace, []).append(f"Flink cluster {cluster.name}")
    if plugin_enabled(spec, "nvidia") or plugin_enabled(spec, "amd"):
        users.setdefault(spec.device_plugins.namespace, []).append("GPU device plugins")
    if spec.uses_yunikorn:
        if spec.yunikorn.manage_queue_config:
            users.setdefault(spec.yunikorn.namespace, []).append("YuniKorn queue configuration")
    elif spec.volcano.manage_scheduler_config:
        users.setdefault(spec.volcano.namespace, []).append("Volcano scheduler configuration")
    if mig_pools(spec):
        users.setdefault(spec.device_plugins.nvidia.mig_manager_namespace, []).append(
            "MIG manager configuration"
        )
    others = set(users)
    if monitoring_enabled(spec):
        users.setdefault(spec.monitoring.namespace, []).append("PodMonitors and PrometheusRule")
        users.setdefault(spec.monitoring.grafana_namespace, []).append("Grafana dashboard ConfigMap")
    out = []
    for name in sorted(users):
        created_by = _created_by(spec, name)
        if created_by is None and name not in others:
            created_by = "the monitoring installation (Prometheus operator, Grafana)"
        out.append(NamespaceUse(name, tuple(users[name]), created_by))
    return out


def _created_by(spec: Spec, name: str) -> str | None:
    owner = external_namespace_owner(spec, name)
    if owner is not None:
        return owner
    settings = spec.namespace_settings(name)
    if settings is not None and not settings.managed:
        return "someone else (namespaces.<name>.managed: false)"
    return None


def external_namespace_owner(spec: Spec, name: str) -> str | None:
    """Who creates ``name`` when it is never accelplane's to create (system, Volcano or YuniKorn, GPU Operator),
    whatever ``namespaces`` says; None otherwise."""
    if name in SYSTEM_NAMESPACES:
        return "Kubernetes (system namespace)"
    if spec.uses_yunikorn:
        if name == spec.yunikorn.namespace:
            return "the YuniKorn installation"
    elif name == spec.volcano.namespace:
        return "the Volcano installation"
    if name == spec.device_plugins.nvidia.mig_manager_namespace and mig_pools(spec):
        return "the GPU Operator installation"
    return None
