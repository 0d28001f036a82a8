"""Dynamic Resource Allocation (DRA): which pools hand out GPUs through claims, and the names,
selectors and API shapes every DRA object, check, quota and report shares.

A node pool with ``gpu.allocation: dra`` gets no device plugin; the vendor's DRA driver publishes
its GPUs in ResourceSlices and pods get them through ResourceClaims. accelplane renders one
DeviceClass per GPU model (and per MIG profile) of the DRA pools, so "this Flink cluster wants
A100s" is one class name in claims, Volcano quotas (``deviceclass/<class>``) and reports.

Driver facts (as the drivers publish device attributes in ResourceSlices):

* NVIDIA (NVIDIA/k8s-dra-driver-gpu, ``cmd/gpu-kubelet-plugin/deviceinfo.go`` and ``mig.go``):
  driver ``gpu.nvidia.com``; whole GPUs ``type: "gpu"``, MIG devices ``type: "mig"`` with
  ``profile`` (``1g.10gb``) and the PARENT's ``productName``, which is the name NVML reports
  (``NVIDIA A100-SXM4-80GB``). Selecting on ``productName`` alone would also select that model's
  MIG devices, so every class also pins ``type``. Sharing is opaque configuration of the claim:
  ``resource.nvidia.com/v1beta1`` ``GpuConfig`` with ``sharing.strategy`` ``TimeSlicing`` or
  ``MPS`` (``api/nvidia.com/resource/v1beta1/sharing.go``).
* AMD (ROCm/k8s-gpu-dra-driver, ``docs/driver-attributes.md``, ``pkg/amdgpu/amdgpu.go``): driver
  ``gpu.amd.com``; whole GPUs ``type: "amdgpu"``; ``productName`` is sysfs ``product_name`` with
  spaces turned into ``_`` and parentheses dropped (``AMD Instinct MI300X OAM`` → ``AMD_Instinct_MI300X_OAM``).

API versions (Kubernetes release → ``resource.k8s.io`` version it serves by default): 1.32
``v1beta1``, 1.33 ``v1beta2``, 1.34 and later ``v1``. A claim's request is
``{name, deviceClassName, count, allocationMode}`` in v1beta1 and
``{name, exactly: {deviceClassName, count, allocationMode}}`` in v1beta2 and v1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from accelplane.derive.gpu_resources import advertised_resources, candidate_pools, kubernetes_gpu_resource
from accelplane.gpu_names import amd_attribute_form
from accelplane.model import FlinkCluster, NodePool, Spec

GROUP = "resource.k8s.io"
MIN_KUBERNETES = (1, 32)
"""First Kubernetes release serving a DRA API with structured parameters by default (v1beta1)."""
MIN_VOLCANO = (1, 12)
"""First Volcano release whose ``predicates`` plugin allocates DRA claims
(``predicate.DynamicResourceAllocationEnable``)."""
MIN_VOLCANO_QUOTA = (1, 15)
"""First Volcano release whose ``capacity`` plugin accounts ``deviceclass/<class>`` queue quotas."""

DRIVER = {"nvidia": "gpu.nvidia.com", "amd": "gpu.amd.com"}
"""DRA driver name (and attribute domain) per vendor."""
WHOLE_GPU_TYPE = {"nvidia": "gpu", "amd": "amdgpu"}
"""The ``type`` attribute of an unpartitioned GPU per vendor."""
MIG_TYPE = "mig"
NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1"
SHARING_STRATEGY = {"timeSlicing": "TimeSlicing", "mps": "MPS"}
"""Pool ``sharing.strategy`` → the NVIDIA driver's ``GpuConfig`` ``sharing.strategy``."""
QUOTA_PREFIX = "deviceclass/"
"""Volcano queue/PodGroup resource key prefix counting devices of a DeviceClass."""
CLAIM_NAME = "gpu"
"""Name of the claim in the TaskManager pod (``spec.resourceClaims[].name``) and of its one request."""


def resource_api_version(spec: Spec) -> str:
    """``resource.k8s.io/<version>`` the spec's Kubernetes release serves for DRA objects."""
    minor = spec.kubernetes_version_tuple
    if minor >= (1, 34):
        return f"{GROUP}/v1"
    if minor == (1, 33):
        return f"{GROUP}/v1beta2"
    return f"{GROUP}/v1beta1"


def is_dra_pool(pool: NodePool) -> bool:
    """True when the pool's GPUs are allocated through DRA (Kubernetes pools only)."""
    return pool.platform == "kubernetes" and pool.gpu is not None and pool.gpu.allocation == "dra"


def dra_pools(spec: Spec) -> list[NodePool]:
    """Kubernetes pools allocating GPUs through DRA, by name."""
    return [p for p in spec.node_pools if is_dra_pool(p)]


def uses_dra(spec: Spec) -> bool:
    """True when the cluster renders DRA objects (a Kubernetes cluster with a DRA pool)."""
    return spec.has_platform("kubernetes") and bool(dra_pools(spec))


def uses_dra_quotas(spec: Spec) -> bool:
    """True when a queue limits DRA devices (``deviceclass/<class>`` keys)."""
    return any(
        quota_class(name) is not None
        for q in spec.queues
        for values in (q.capability, q.deserved, q.guarantee)
        for name in values.names()
    )


def driver_product_name(vendor: str, model: str) -> str:
    """``productName`` the vendor's DRA driver publishes for a GPU model as the spec names it."""
    if vendor == "amd":
        return amd_attribute_form(model)
    return model


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def mig_profile(pool: NodePool) -> str | None:
    """The one MIG profile a DRA pool hands out (MIG ``single``/``mixed`` with one profile), else None."""
    gpu = pool.gpu
    if gpu is None or gpu.mig.strategy == "none" or len(gpu.mig.devices) != 1:
        return None
    return gpu.mig.devices[0][0]


@dataclass(frozen=True)
class DeviceClassSpec:
    """One DeviceClass accelplane renders: its name and what it selects."""

    name: str
    vendor: str
    product_name: str
    mig_profile: str | None = None

    @property
    def driver(self) -> str:
        """The DRA driver whose devices the class selects."""
        return DRIVER[self.vendor]

    @property
    def device_type(self) -> str:
        """The ``type`` attribute the class requires."""
        return MIG_TYPE if self.mig_profile is not None else WHOLE_GPU_TYPE[self.vendor]

    @property
    def quota_key(self) -> str:
        """Volcano resource key counting this class's devices (``deviceclass/<class>``)."""
        return f"{QUOTA_PREFIX}{self.name}"

    def cel_expression(self) -> str:
        """CEL selector of exactly this model's devices (and MIG profile) of the class's driver."""
        attrs = f"device.attributes[{_cel_string(self.driver)}]"
        terms = [
            f"device.driver == {_cel_string(self.driver)}",
            f"{attrs}.type == {_cel_string(self.device_type)}",
            f"{attrs}.productName == {_cel_string(self.product_name)}",
        ]
        if self.mig_profile is not None:
            terms.append(f"{attrs}.profile == {_cel_string(self.mig_profile)}")
        return " && ".join(terms)


def _cel_string(value: str) -> str:
    """A CEL string literal (JSON's double-quoted escaping is valid CEL)."""
    return json.dumps(value)


def device_class_for_pool(pool: NodePool) -> DeviceClassSpec | None:
    """The DeviceClass of a DRA pool's GPUs (None for other pools or without a model).

    Name: ``<vendor>-<model slug>`` (``nvidia-a100-sxm4-80gb``, the vendor prefix only when the
    model does not already start with it), with ``-mig-<profile>`` for a MIG pool
    (``nvidia-a100-sxm4-80gb-mig-1g.10gb``).
    """
    gpu = pool.gpu
    if not is_dra_pool(pool) or gpu is None or not gpu.model:
        return None
    slug = _slug(gpu.model)
    if not slug.startswith(gpu.vendor):
        slug = f"{gpu.vendor}-{slug}"
    profile = mig_profile(pool) if gpu.vendor == "nvidia" else None
    name = f"{slug}-mig-{profile.replace('+', '.')}" if profile is not None else slug
    return DeviceClassSpec(name, gpu.vendor, driver_product_name(gpu.vendor, gpu.model), profile)


def device_classes(spec: Spec) -> list[DeviceClassSpec]:
    """Every DeviceClass of the cluster (one per model/profile of its DRA pools), by name."""
    if not spec.has_platform("kubernetes"):
        return []
    classes = {c.name: c for c in (device_class_for_pool(p) for p in dra_pools(spec)) if c is not None}
    return [classes[n] for n in sorted(classes)]


def device_class_names(spec: Spec) -> set[str]:
    """Names of the cluster's DeviceClasses."""
    return {c.name for c in device_classes(spec)}


def quota_class(key: str) -> str | None:
    """DeviceClass named by a ``deviceclass/<class>`` resource key, else None."""
    return key[len(QUOTA_PREFIX) :] if key.startswith(QUOTA_PREFIX) else None


def cluster_dra_pools(spec: Spec, cluster: FlinkCluster) -> list[NodePool]:
    """The cluster's candidate GPU pools that allocate through DRA."""
    if not cluster.on_kubernetes:
        return []
    return [p for p in candidate_pools(spec, cluster) if is_dra_pool(p)]


def cluster_device_class(spec: Spec, cluster: FlinkCluster) -> DeviceClassSpec | None:
    """The DeviceClass the cluster's TaskManagers claim from (None when they do not use DRA or
    their candidate pools do not agree on one class, which the checks report)."""
    classes = {c for c in (device_class_for_pool(p) for p in cluster_dra_pools(spec, cluster)) if c}
    return classes.pop() if len(classes) == 1 else None


def devices_per_node(pool: NodePool) -> int:
    """Devices a DRA pool's node publishes: its GPUs, or its MIG devices of the one profile."""
    gpu = pool.gpu
    assert gpu is not None
    if mig_profile(pool) is not None:
        return gpu.per_node * gpu.mig.devices[0][1]
    return gpu.per_node


def pool_gpu_resources(pool: NodePool) -> dict[str, int]:
    """What one node of the pool offers, by the key quotas and requests count it under:
    ``deviceclass/<class>`` → devices for a DRA pool, else the device plugin's extended resources."""
    cls = device_class_for_pool(pool)
    if cls is not None:
        return {cls.quota_key: devices_per_node(pool)}
    return advertised_resources(pool)


def kubernetes_gpu_key(spec: Spec, cluster: FlinkCluster) -> str | None:
    """The key the cluster's TaskManager GPUs count under on Kubernetes: ``deviceclass/<class>``
    when they claim DRA devices, else the extended resource they request (None without GPUs)."""
    cls = cluster_device_class(spec, cluster)
    return cls.quota_key if cls is not None else kubernetes_gpu_resource(spec, cluster)


def claim_template_name(cluster: FlinkCluster) -> str:
    """Name of the cluster's ResourceClaimTemplate (``<cluster>-taskmanager-gpu``)."""
    return f"{cluster.name}-taskmanager-gpu"


def sharing_config(spec: Spec, cluster: FlinkCluster) -> dict[str, Any] | None:
    """The NVIDIA driver's opaque ``GpuConfig`` for the claim when the cluster's DRA pools share
    GPUs (time-slicing or MPS), else None."""
    pools = cluster_dra_pools(spec, cluster)
    strategies = {p.gpu.sharing.strategy for p in pools if p.gpu is not None and p.gpu.vendor == "nvidia"}
    strategies.discard("none")
    if len(strategies) != 1:
        return None
    return {
        "apiVersion": NVIDIA_CONFIG_API,
        "kind": "GpuConfig",
        "sharing": {"strategy": SHARING_STRATEGY[strategies.pop()]},
    }


def device_request(spec: Spec, device_class: str, count: int) -> dict[str, Any]:
    """One claim request for ``count`` devices of a class, in the shape of the spec's API version."""
    body: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if resource_api_version(spec).endswith("/v1beta1"):
        return {"name": CLAIM_NAME, **body}
    return {"name": CLAIM_NAME, "exactly": body}
