"""PriorityClass objects (scheduling.k8s.io/v1)."""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import Bundle, k8s_object
from accelplane.model import Spec

FAMILY = "scheduling"


def build(spec: Spec) -> Bundle:
    """One PriorityClass per spec entry, on Kubernetes clusters only."""
    bundle = Bundle()
    if not spec.has_platform("kubernetes"):
        return bundle
    for pc in spec.priority_classes:
        body: dict[str, Any] = {"value": pc.value, "globalDefault": pc.global_default}
        if pc.preemption_policy is not None:
            body["preemptionPolicy"] = pc.preemption_policy
        if pc.description is not None:
            body["description"] = pc.description
        bundle.objects.append(
            k8s_object(
                "scheduling.k8s.io/v1",
                "PriorityClass",
                pc.name,
                family=FAMILY,
                labels=spec.common_labels(),
                body=body,
            )
        )
    return bundle
