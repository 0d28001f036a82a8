"""The NVIDIA MIG manager's configuration: ConfigMap ``accelplane-mig-parted-config`` (key
``config.yaml``, nvidia-mig-parted ``v1``) in the GPU Operator's namespace, derived from the pools'
``gpu.mig`` (`accelplane.derive.mig_parted`). The GPU Operator's ClusterPolicy must name it
(``migManager.config.name``); each MIG pool's nodes carry ``nvidia.com/mig.config: <pool>``, which is
also part of how the pool's pods select its nodes (`accelplane.node_selection.pool_labels`).

Mutable and fixed-name: the MIG manager watches that one name and re-partitions a node when the
layout its label names changes (the Pulumi provider updates it in place).
"""

from __future__ import annotations

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.mig_parted import CONFIG_KEY, CONFIGMAP_NAME, mig_parted_config
from accelplane.model import Spec
from accelplane.yaml_io import dump_yaml

FAMILY = "device-plugins"


def build(spec: Spec) -> Bundle:
    """The MIG manager ConfigMap, when a Kubernetes NVIDIA pool uses MIG."""
    bundle = Bundle()
    config = mig_parted_config(spec)
    if config is None or not spec.has_platform("kubernetes"):
        return bundle
    labels = {**spec.common_labels(), "app.kubernetes.io/component": "mig-manager-config"}
    bundle.objects.append(
        k8s_object(
            "v1",
            "ConfigMap",
            CONFIGMAP_NAME,
            family=FAMILY,
            namespace=spec.device_plugins.nvidia.mig_manager_namespace,
            labels=labels,
            body={"data": {CONFIG_KEY: dump_yaml(config)}},
        )
    )
    return bundle
