"""How a changed ConfigMap reaches the pods that use it (see docs/pulumi.md, "ConfigMap update strategy").

Two kinds of ConfigMap, one rule each:

* **Content-addressed** (``immutable: true``, the name carries a hash of the content; e.g. the GPU
  discovery script, `accelplane.discovery_install`): new content is a new object with a new name, so
  every pod template that mounts it changes and rolls; the old object stays for pods that still
  reference it (the Pulumi layer retains it on delete).
* **Mutable** (a fixed name such as Volcano's ``volcano-scheduler-configmap``, which its consumer
  hot-reloads): updated in place. When a pod template of the same bundle mounts or reads a mutable
  ConfigMap, the pod template must carry `ROLLOUT_ANNOTATION` = `rollout_hash` of the ConfigMaps
  it uses, so a content change changes the pod template and Kubernetes rolls the pods. Builders call
  `rollout_annotations`; a test checks every example stack for it.

Pure helpers (no pulumi import): builders and tests share them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from accelplane.yaml_io import dump_yaml

ROLLOUT_ANNOTATION = "accelplane.io/config-sha256"


def is_immutable(configmap: Mapping[str, Any]) -> bool:
    """True for a ConfigMap manifest with ``immutable: true``."""
    return configmap.get("immutable") is True


def configmap_digest(configmap: Mapping[str, Any]) -> str:
    """sha256 of a ConfigMap's name and content (``data`` and ``binaryData``), key order irrelevant."""
    content = {
        "name": configmap["metadata"]["name"],
        "data": configmap.get("data") or {},
        "binaryData": configmap.get("binaryData") or {},
    }
    return hashlib.sha256(dump_yaml(content).encode("utf-8")).hexdigest()


def rollout_hash(configmaps: Iterable[Mapping[str, Any]]) -> str:
    """One digest over several ConfigMaps (order irrelevant)."""
    digests = sorted(configmap_digest(cm) for cm in configmaps)
    return hashlib.sha256("\n".join(digests).encode("ascii")).hexdigest()


def rollout_annotations(configmaps: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Pod-template annotations for the mutable ConfigMaps a pod uses (empty when it uses none)."""
    mutable = [cm for cm in configmaps if not is_immutable(cm)]
    return {ROLLOUT_ANNOTATION: rollout_hash(mutable)} if mutable else {}


def pod_templates(manifest: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Every pod template inside a manifest as ``(metadata, pod spec)``: a mapping whose ``spec`` has
    ``containers`` (DaemonSet/Deployment ``spec.template``, FlinkDeployment ``podTemplate``s, …)."""

    def walk(node: Any) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        if isinstance(node, Mapping):
            spec = node.get("spec")
            if node is not manifest and isinstance(spec, Mapping) and "containers" in spec:
                yield node.get("metadata") or {}, spec
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    yield from walk(manifest)


def configmaps_used(pod_spec: Mapping[str, Any]) -> set[str]:
    """Names of the ConfigMaps a pod spec mounts (volumes, projected sources) or reads (env, envFrom)."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ("configMap", "configMapRef", "configMapKeyRef") and isinstance(value, Mapping):
                    name = value.get("name")
                    if isinstance(name, str):
                        names.add(name)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(pod_spec)
    return names
