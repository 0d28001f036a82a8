"""The ``dra`` family: Dynamic Resource Allocation objects, in the ``resource.k8s.io`` version the
spec's Kubernetes release serves (`accelplane.derive.dra.resource_api_version`).

* One DeviceClass per GPU model (and MIG profile) of the DRA pools, cluster-scoped, whose CEL
  selector matches exactly that model's devices of the vendor's driver.
* One ResourceClaimTemplate per Flink cluster whose TaskManagers run on a DRA pool, in the
  cluster's namespace: ``gpu.amount`` devices of the pool's class, and the NVIDIA driver's opaque
  ``GpuConfig`` when the pool shares GPUs. The TaskManager pod template references it
  (`accelplane.builders.pod_templates`), so every TaskManager pod gets its own claim.
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import Bundle, K8sObject, k8s_object
from accelplane.builders.pod_templates import flink_cluster_labels
from accelplane.derive.dra import (
    CLAIM_NAME,
    DeviceClassSpec,
    claim_template_name,
    cluster_device_class,
    device_classes,
    device_request,
    resource_api_version,
    sharing_config,
)
from accelplane.model import FlinkCluster, Spec

FAMILY = "dra"


def device_class(spec: Spec, cls: DeviceClassSpec) -> K8sObject:
    """The DeviceClass manifest of one GPU model (or MIG profile)."""
    return k8s_object(
        resource_api_version(spec),
        "DeviceClass",
        cls.name,
        family=FAMILY,
        labels=spec.common_labels(),
        body={"spec": {"selectors": [{"cel": {"expression": cls.cel_expression()}}]}},
    )


def claim_spec(spec: Spec, cluster: FlinkCluster) -> dict[str, Any]:
    """``spec.spec`` of the cluster's ResourceClaimTemplate (the ResourceClaim each pod gets)."""
    cls = cluster_device_class(spec, cluster)
    assert cls is not None
    devices: dict[str, Any] = {"requests": [device_request(spec, cls.name, cluster.gpus_per_task_manager)]}
    config = sharing_config(spec, cluster)
    if config is not None:
        devices["config"] = [
            {"requests": [CLAIM_NAME], "opaque": {"driver": cls.driver, "parameters": config}}
        ]
    return {"devices": devices}


def claim_template(spec: Spec, cluster: FlinkCluster) -> K8sObject:
    """The ResourceClaimTemplate of one Flink cluster's TaskManagers."""
    labels = flink_cluster_labels(spec, cluster)
    return k8s_object(
        resource_api_version(spec),
        "ResourceClaimTemplate",
        claim_template_name(cluster),
        family=FAMILY,
        namespace=cluster.namespace,
        labels=labels,
        body={"spec": {"metadata": {"labels": labels}, "spec": claim_spec(spec, cluster)}},
    )


def build(spec: Spec) -> Bundle:
    """DeviceClasses and ResourceClaimTemplates (nothing without DRA pools)."""
    bundle = Bundle()
    if not spec.has_platform("kubernetes"):
        return bundle
    for cls in device_classes(spec):
        bundle.objects.append(device_class(spec, cls))
    for cluster in spec.flink_clusters:
        if cluster.uses_gpus and cluster_device_class(spec, cluster) is not None:
            bundle.objects.append(claim_template(spec, cluster))
    return bundle
