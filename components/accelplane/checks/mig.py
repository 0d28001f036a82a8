"""MIG devices per TaskManager: one CUDA process uses one MIG device.

NVIDIA's MIG user guide ("CUDA Device Enumeration"): with CUDA 11/R450 and CUDA 12/R525 only one
MIG instance can be enumerated; whatever number of MIG devices a container is given, one CUDA
process sees a single one. A TaskManager is one JVM process, so every MIG device past the first
would be reserved on the node and reported to Flink, yet unusable by the operators that ask Flink
for them. The discovery script hands out MIG devices with CUDA's numbers (0 for the first) and
warns at run time; this check rejects such a spec up front.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.dra import cluster_device_class
from accelplane.derive.gpu_resources import candidate_pools, kubernetes_gpu_resource
from accelplane.errors import Problem
from accelplane.findings import WARNING, declare
from accelplane.model import FlinkCluster, Spec

MIG_SEVERAL_PER_TASKMANAGER = declare(
    'AP3110', WARNING, 'a TaskManager asks for several MIG devices; one JVM uses only one',
    fix='ask for 1 and raise taskManager.replicas',
)

MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
MIG_DEVICES_PER_PROCESS = 1


def requests_mig_devices(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when the cluster's TaskManagers are given MIG devices on Kubernetes: a
    ``nvidia.com/mig-<profile>`` resource (MIG ``mixed``), ``nvidia.com/gpu`` from pools that
    all run MIG ``single`` (then every advertised ``nvidia.com/gpu`` is a MIG device), or a DRA
    claim of a MIG DeviceClass."""
    if not cluster.on_kubernetes:
        return False
    device_class = cluster_device_class(spec, cluster)
    if device_class is not None:  # DRA: the claim's DeviceClass selects MIG devices of one profile
        return device_class.mig_profile is not None
    resource = kubernetes_gpu_resource(spec, cluster)
    if resource is None:
        return False
    if resource.startswith(MIG_RESOURCE_PREFIX):
        return True
    pools = [p for p in candidate_pools(spec, cluster) if p.gpu is not None]
    return (
        resource == "nvidia.com/gpu"
        and bool(pools)
        and all(p.gpu is not None and p.gpu.mig.strategy == "single" for p in pools)
    )


def check(spec: Spec) -> Iterator[Problem]:
    """A TaskManager given MIG devices asks for at most one."""
    for cluster in spec.flink_clusters:
        amount = cluster.gpus_per_task_manager
        if amount > MIG_DEVICES_PER_PROCESS and requests_mig_devices(spec, cluster):
            yield Problem(
                cluster.field_path("taskManager", "gpu", "amount"),
                f"{amount} MIG devices per TaskManager: one CUDA process (the TaskManager JVM) can use only "
                "one MIG device (NVIDIA MIG user guide, CUDA device enumeration), so the others would be "
                "reserved and idle; ask for 1 and raise taskManager.replicas instead", MIG_SEVERAL_PER_TASKMANAGER,
            )
