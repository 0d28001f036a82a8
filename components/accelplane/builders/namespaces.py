"""``Namespace`` objects for every namespace the stack's objects live in that accelplane creates
(`accelplane.derive.namespaces`), with Pod Security admission labels matching what runs there.

Each namespace gets the strictest Pod Security Standards level (`accelplane.derive.pod_security`)
that every pod accelplane puts there passes: the pods Flink creates from our pod templates (plus
``hostNetwork`` when ``kubernetes.hostnetwork.enabled`` is set, which Flink adds itself) and the
device-plugin DaemonSets' pods. The level is written to ``pod-security.kubernetes.io/enforce``,
``audit`` and ``warn``, pinned to the policy version it was evaluated against; when it is not
``restricted``, the annotation ``accelplane.io/pod-security-reason`` says which pods need it and why
(e.g. the coordination ``hostPath`` of GPU TaskManagers makes a Flink namespace ``privileged``).
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import Bundle, k8s_object
from accelplane.builders import device_plugins
from accelplane.builders.pod_templates import pod_template
from accelplane.derive.flink_state import uses_host_network
from accelplane.derive.namespaces import namespace_uses
from accelplane.derive.pod_security import (
    LEVELS,
    POLICY_VERSION,
    Level,
    baseline_violations,
    pod_level,
    restricted_violations,
    weakest,
)
from accelplane.model import Spec

FAMILY = "namespaces"
PSA_PREFIX = "pod-security.kubernetes.io/"
PSA_MODES = ("enforce", "audit", "warn")
REASON_ANNOTATION = "accelplane.io/pod-security-reason"


Pod = tuple[str, dict[str, Any], dict[str, str]]
"""``(who, pod spec, pod annotations)`` of one pod accelplane causes."""


def _pods_by_namespace(spec: Spec) -> dict[str, list[Pod]]:
    """Every pod accelplane causes, by namespace (Flink pods in cluster order, then DaemonSets):
    built once for all namespaces, so the work grows with the spec, not with namespaces × spec."""
    out: dict[str, list[Pod]] = {}
    for cluster in spec.flink_clusters:
        if not cluster.on_kubernetes:
            continue
        for role in ("jobmanager", "taskmanager"):
            template = pod_template(spec, cluster, role)
            pod = dict(template["spec"])
            if uses_host_network(cluster):
                pod["hostNetwork"] = True  # Flink's decorators add it (kubernetes.hostnetwork.enabled)
            out.setdefault(cluster.namespace, []).append(
                (f"Flink cluster {cluster.name} {role}", pod, dict(template["metadata"].get("annotations", {})))
            )
    for obj in device_plugins.build(spec).objects:
        if obj.kind == "DaemonSet" and obj.namespace is not None:
            template = obj.manifest["spec"]["template"]
            out.setdefault(obj.namespace, []).append(
                (f"DaemonSet {obj.name}", template["spec"], dict(template["metadata"].get("annotations", {})))
            )
    return out


def namespace_level(pods: list[Pod]) -> tuple[Level, list[str]]:
    """The Pod Security level of a namespace whose pods are ``pods`` (`_pods_by_namespace`) and,
    unless it is ``restricted``, why: each pod at that level with what keeps it from the next
    stricter level."""
    levels = [pod_level(pod, ann) for _, pod, ann in pods]
    level = weakest(levels)
    reasons: list[str] = []
    if level != "restricted":
        stricter = LEVELS[LEVELS.index(level) - 1]
        check = restricted_violations if stricter == "restricted" else baseline_violations
        for (who, pod, ann), pod_lvl in zip(pods, levels, strict=True):
            if pod_lvl == level:
                reasons.append(f"{who}: {'; '.join(check(pod, ann))}")
    return level, reasons


def build(spec: Spec) -> Bundle:
    """One Namespace per namespace accelplane creates (none without the Kubernetes platform)."""
    bundle = Bundle()
    pods: dict[str, list[Pod]] | None = None
    for use in namespace_uses(spec):
        if not use.created:
            continue
        if pods is None:
            pods = _pods_by_namespace(spec)
        level, reasons = namespace_level(pods.get(use.name, []))
        labels = spec.common_labels()
        for mode in PSA_MODES:
            labels[f"{PSA_PREFIX}{mode}"] = level
            labels[f"{PSA_PREFIX}{mode}-version"] = POLICY_VERSION
        annotations = {REASON_ANNOTATION: f"{level}: " + " | ".join(reasons)} if reasons else None
        bundle.objects.append(
            k8s_object("v1", "Namespace", use.name, family=FAMILY, labels=labels, annotations=annotations)
        )
    return bundle
