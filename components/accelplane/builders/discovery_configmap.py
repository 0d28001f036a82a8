"""ConfigMaps that carry the GPU discovery script to Flink pods on Kubernetes.

One ConfigMap per namespace that runs a GPU Flink cluster (target ``kubernetes`` or
``kubernetes-operator``, ``taskManager.gpu.amount`` > 0). The name carries a hash of the script
(`accelplane.discovery_install.configmap_name`) and the ConfigMap is ``immutable``: a new script
is a new ConfigMap, and pods roll to it through their pod template.

It holds two keys (`accelplane.discovery_install.configmap_data`): the script as a module and
the pod entry stub that runs it. The Flink pod templates (flink family) mount each with
``subPath``, the stub at ``discovery.script_path`` (what Flink's configuration names) and the module
at `accelplane.discovery_install.MODULE_PATH`: that replaces the copies baked into the node image
without hiding the rest of either directory (Flink's GPU plugin jar lives beside the stub). The
stub runs the module with the image's ``python3``, from the node image's precompiled bytecode
when the ConfigMap carries the script the image was built with, else through a pod-private
bytecode cache (`accelplane.discovery_install.pod_entry_stub`): use the image built from
``node-image/``, or any image with ``python3`` on ``PATH``.
"""

from __future__ import annotations

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.discovery_paths import IMAGE_PLATFORMS, gpu_clusters
from accelplane.digests import sha256
from accelplane.discovery_install import configmap_data, configmap_name, script_text
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
                annotations={SHA256_ANNOTATION: sha256(text)},
                body={"immutable": True, "data": dict(configmap_data())},
            )
        )
    return bundle
