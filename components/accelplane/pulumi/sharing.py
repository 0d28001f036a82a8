"""Kubernetes objects two platforms of one Pulumi program both want (pure: no pulumi import).

Two specs deployed to the same cluster (the same Kubernetes provider) may render the same object:
the ``flink`` Namespace, a PriorityClass, the Volcano scheduler ConfigMap. One Kubernetes object can
have only one Pulumi resource managing it, so the rule is **one owner**: the first platform that
registers the object owns it, and a later platform whose object is identical (same manifest) uses
the owner's resource — for its dependencies and `GpuPlatform.get_resource` — instead of a second
resource. Two platforms that want *different* contents for the same object are an error
(`SHARED_OBJECT_DIFFERS`): whichever registered last would silently win on every update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelplane.artifacts import K8sObject
from accelplane.errors import SpecError
from accelplane.findings import ERROR, declare

SHARED_OBJECT_DIFFERS = declare(
    "AP6080", ERROR,
    "two platforms of one Pulumi program render the same Kubernetes object (same cluster, kind, "
    "namespace and name) with different contents",
    fix="give the object the same definition in both specs, so one platform owns it and the other "
    "uses it",
)


@dataclass(frozen=True)
class Owner:
    """Who registered a shared object first: the platform's name and the manifest it registered."""

    platform: str
    manifest: dict[str, Any]


def conflict(owner: Owner, platform: str, obj: K8sObject) -> SpecError | None:
    """The finding when ``platform`` wants ``obj`` but ``owner`` registered it with other contents;
    None when the manifests are equal (then ``platform`` uses the owner's resource). Located at the
    object's rendered file (``kubernetes/<file>``) of the later platform."""
    if owner.manifest == obj.manifest:
        return None
    return SpecError(
        f"{platform}: kubernetes/{obj.filename}",
        "metadata.name",
        f"{obj.kind} {obj.namespace + '/' if obj.namespace else ''}{obj.name} is also rendered by platform "
        f"{owner.platform!r} of this Pulumi program, for the same cluster, with different contents",
        SHARED_OBJECT_DIFFERS,
    )
