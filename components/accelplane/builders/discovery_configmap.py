"""ConfigMaps that carry the GPU discovery script to Flink pods on Kubernetes.

One ConfigMap per namespace that runs a GPU Flink cluster (target ``kubernetes`` or
``kubernetes-operator``, ``taskManager.gpu.amount`` > 0). The name carries a hash of the script
(`accelplane.discovery_constants.configmap_name`) and the ConfigMap is ``immutable``: a new script
is a new ConfigMap, and pods roll to it through their pod template.

The Flink pod templates (flink family) mount its one key, by the names in
`accelplane.discovery_constants`, with ``subPath`` at ``discovery.script_path``: that replaces the
copy baked into the node image without hiding the rest of the plugin directory (Flink's GPU
plugin jar lives there). The script needs ``python3`` in the image: use the image built from
``node-image/``.
"""

from __future__ import annotations

import hashlib

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.discovery_paths import IMAGE_PLATFORMS, gpu_clusters
from accelplane.discovery_constants import CONFIGMAP_KEY, configmap_name, script_text
from accelplane.model import Spec

FAMILY = "discovery"
SHA256_ANNOTATION = "accelplane.io/script-sha256"


def gpu_namespaces(spec: Spec) -> list[str]:
    """Namespaces with GPU Flink clusters on Kubernetes, sorted; empty when Kubernetes is not a platform."""
    if not spec.has_platform("kubernetes"):
        return []
    return sorted({c.namespace for c in gpu_clusters(spec, IMAGE_PLATFORMS)})


def build(spec: Spec) -> Bundle:
    """One immutable, content-named ConfigMap with the script per GPU Flink namespace."""
    bundle = Bundle()
    text = script_text()
    labels = spec.common_labels()
    labels["app.kubernetes.io/component"] = "gpu-discovery"
    for namespace in gpu_namespaces(spec):
        bundle.objects.append(
            k8s_object(
                "v1",
                "ConfigMap",
                configmap_name(),
                family=FAMILY,
                labels=labels,
                namespace=namespace,
                annotations={SHA256_ANNOTATION: hashlib.sha256(text.encode("utf-8")).hexdigest()},
                body={"immutable": True, "data": {CONFIGMAP_KEY: text}},
            )
        )
    return bundle
